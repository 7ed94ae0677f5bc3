package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// What TestNodePools records and reads: the gateway's answers by session,
// and each session's rendezvous home.

// rendezvousHome is the member of targets (weight 1 each) with the
// highest rendezvous score for the session key: its home among them.
func rendezvousHome(key string, targets []string) string {
	best, score := "", 0.0
	for _, m := range targets {
		if s := pool.Score(pool.Hash(key), pool.Hash(m), 1); best == "" || s > score {
			best, score = m, s
		}
	}
	return best
}

// sessionOfBody is a member request's session key: Messages
// metadata.user_id, else prompt_cache_key.
func sessionOfBody(body []byte) string {
	var b struct {
		Metadata struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
		PromptCacheKey string `json:"prompt_cache_key"`
	}
	_ = json.Unmarshal(body, &b)
	if b.Metadata.UserID != "" {
		return b.Metadata.UserID
	}
	return b.PromptCacheKey
}

// poolClientsLog records, for every request the gateway answered, the
// client's session key (from the client's body, whatever wire the member
// spoke), the answer's status and x-loopctl-model, and when it started
// and ended.
type poolClientsLog struct {
	figures func() string // the pools' member figures, logged with each answer
	mu      sync.Mutex
	seen    []poolClientsAnswer
}

// poolClientsAnswer is one recorded answer.
type poolClientsAnswer struct {
	path, session, model, translated, attempts, figures string
	status                                              int
	start, end                                          time.Time
}

// wrap returns h recording each answer.
func (l *poolClientsLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		a := poolClientsAnswer{path: r.URL.Path, session: sessionOfBody(body), start: time.Now()}
		if l.figures != nil {
			a.figures = l.figures()
		}
		rw := &poolClientsWriter{ResponseWriter: w, a: &a}
		h.ServeHTTP(rw, r)
		a.end = time.Now()
		l.mu.Lock()
		l.seen = append(l.seen, a)
		l.mu.Unlock()
	})
}

// bySession maps each session key with prefix to the members
// (x-loopctl-model) that served it, with their counts.
func (l *poolClientsLog) bySession(prefix string) map[string]map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	by := map[string]map[string]int{}
	for _, a := range l.seen {
		if a.session == "" || !strings.HasPrefix(a.session, prefix) || a.status != http.StatusOK {
			continue
		}
		if by[a.session] == nil {
			by[a.session] = map[string]int{}
		}
		by[a.session][a.model]++
	}
	return by
}

// served returns the recorded answers whose x-loopctl-model starts with
// prefix.
func (l *poolClientsLog) served(prefix string) []poolClientsAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []poolClientsAnswer
	for _, a := range l.seen {
		if strings.HasPrefix(a.model, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// dump lists the recorded answers of session.
func (l *poolClientsLog) dump(session string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, a := range l.seen {
		if a.session == session || session == "*" {
			fmt.Fprintf(&b, "  %s %s %d %s attempts=%s %s +%s %s\n", a.session, a.path, a.status, a.model, a.attempts, a.start.Format("15:04:05.000"), a.end.Sub(a.start).Round(time.Millisecond), a.figures)
		}
	}
	return b.String()
}

// poolClientsWriter is a ResponseWriter that records the answer's status
// and x-loopctl-model when they are written; Flush and Unwrap keep
// streaming working.
type poolClientsWriter struct {
	http.ResponseWriter
	a       *poolClientsAnswer
	written bool
}

func (w *poolClientsWriter) WriteHeader(status int) {
	if !w.written {
		w.written = true
		h := w.Header()
		w.a.status, w.a.model, w.a.translated, w.a.attempts = status, h.Get("X-Loopctl-Model"), h.Get("X-Loopctl-Translated"), h.Get("X-Loopctl-Attempts")
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *poolClientsWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *poolClientsWriter) Flush() {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *poolClientsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
