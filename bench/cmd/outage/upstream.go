package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/faults"
)

// fault is how an upstream answers while it is broken.
type fault int

const (
	healthy  fault = iota
	fail500        // HTTP 500, OpenAI server_error
	hang           // reads the request, never answers (until the caller gives up)
	throttle       // 429 + Retry-After 5
	quota          // 429 insufficient_quota, no hint
	overload       // 529 overloaded_error
	stall          // streams: 200, the role chunk, then nothing; others hang
	longHint       // 429 + Retry-After 120
	brownout       // fails 3 requests in every 10 with HTTP 500, never two in a row
	slow           // answers every request, after slowDelay (before its first byte)
)

// slowDelay is how long the slow fault waits before answering: under the
// gateways' 3 s first-byte timeout.
const slowDelay = 2 * time.Second

// arrival is one request an upstream received, as offsets from the run's
// start: when it arrived, when the upstream was done with it, and whether
// the upstream was broken when it arrived.
type arrival struct {
	at, end time.Duration
	broken  bool
}

// upstream is one scripted OpenAI-compatible model server (the primary or
// the backup of one target), on its own loopback port. Its fault can be
// switched while it serves; it logs every request it receives. Hung
// requests end when the caller gives up, when the server closes, or after
// hold, whichever comes first: no handler runs unbounded.
type upstream struct {
	name string // "primary" or "backup": the completion id says which served
	t0   time.Time
	hold time.Duration

	mu    sync.Mutex
	fault fault
	log   []arrival
	nth   int // requests received under the brownout fault

	srv  *http.Server
	addr string
	stop chan struct{} // closed by close
}

// startUpstream starts an upstream named name on a fresh loopback port.
func startUpstream(name string, t0 time.Time, hold time.Duration) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{name: name, t0: t0, hold: hold, addr: ln.Addr().String(), stop: make(chan struct{})}
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go u.srv.Serve(ln)
	return u, nil
}

// baseURL is the upstream's OpenAI base URL.
func (u *upstream) baseURL() string { return "http://" + u.addr + "/v1" }

// set switches the upstream's fault.
func (u *upstream) set(f fault) {
	u.mu.Lock()
	u.fault = f
	u.mu.Unlock()
}

// arrivals returns a copy of the request log.
func (u *upstream) arrivals() []arrival {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]arrival(nil), u.log...)
}

// close ends every request still held and stops the server.
func (u *upstream) close() {
	close(u.stop)
	u.srv.Close()
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	u.mu.Lock()
	f := u.fault
	if f == brownout {
		if !faults.BrownoutFails(u.nth) {
			f = healthy // but logged as broken: the primary is sick, whatever this answer
		}
		u.nth++
	}
	i := len(u.log)
	u.log = append(u.log, arrival{at: time.Since(u.t0), broken: u.fault != healthy})
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.log[i].end = time.Since(u.t0)
		u.mu.Unlock()
	}()
	stream := bytes.Contains(body, []byte(`"stream":true`))
	switch f {
	case healthy:
		u.answer(w, stream)
	case fail500, brownout:
		errorAnswer(w, 500, "", `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`)
	case throttle:
		errorAnswer(w, 429, "5", rateLimitBody)
	case longHint:
		errorAnswer(w, 429, "120", rateLimitBody)
	case quota:
		errorAnswer(w, 429, "", `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
	case overload:
		errorAnswer(w, 529, "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	case stall:
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(u.name, `{"role":"assistant","content":""}`, "null"))
			w.(http.Flusher).Flush()
		}
		u.holdThenDrop(w, r)
	case hang:
		u.holdThenDrop(w, r)
	case slow:
		if u.wait(r, slowDelay) {
			u.answer(w, stream)
		}
	}
}

const rateLimitBody = `{"error":{"message":"Rate limit reached for requests. Please try again later.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`

// holdThenDrop waits until the caller gives up, the server closes or hold
// passes, then drops the connection without an answer (an empty 200 would
// be a success).
func (u *upstream) holdThenDrop(w http.ResponseWriter, r *http.Request) {
	t := time.NewTimer(u.hold)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-u.stop:
	case <-t.C:
	}
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
		}
	}
}

// wait waits d, or less if the caller gives up or the server closes; it
// reports whether d passed.
func (u *upstream) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-u.stop:
		return false
	case <-t.C:
		return true
	}
}

// errorAnswer writes an error status with a JSON body and, when given, a
// Retry-After header (seconds).
func errorAnswer(w http.ResponseWriter, status int, retryAfter, body string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// answer writes the scripted completion, whole or streamed; its id names
// the upstream that served it (chatcmpl-primary, chatcmpl-backup).
func (u *upstream) answer(w http.ResponseWriter, stream bool) {
	if !stream {
		body := `{"id":"chatcmpl-` + u.name + `","object":"chat.completion","created":1767225600,"model":"bench-model",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f := w.(http.Flusher)
	for _, c := range []string{
		chunk(u.name, `{"role":"assistant","content":""}`, "null"),
		chunk(u.name, `{"content":"po"}`, "null"),
		chunk(u.name, `{"content":"ng"}`, "null"),
		chunk(u.name, `{}`, `"stop"`),
		"data: [DONE]\n\n",
	} {
		io.WriteString(w, c)
		f.Flush()
	}
}

// chunk is one chat.completion.chunk event.
func chunk(name, delta, finish string) string {
	return `data: {"id":"chatcmpl-` + name + `","object":"chat.completion.chunk","created":1767225600,"model":"bench-model",` +
		`"choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
}

// pair is a target's two upstreams.
type pair struct{ primary, backup *upstream }

// startPair starts a primary and a backup upstream.
func startPair(t0 time.Time, hold time.Duration) (pair, error) {
	p, err := startUpstream("primary", t0, hold)
	if err != nil {
		return pair{}, err
	}
	b, err := startUpstream("backup", t0, hold)
	if err != nil {
		p.close()
		return pair{}, err
	}
	return pair{p, b}, nil
}

func (p pair) close() {
	p.primary.close()
	p.backup.close()
}
