package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// model is the model every member serves (a member is m<i>/model).
const model = "x"

// wire is the wire a run's clients and members speak.
type wire int

const (
	chat     wire = iota // OpenAI chat completions: Authorization: Bearer <key>
	messages             // Anthropic Messages: x-api-key: <key>
)

func (w wire) String() string {
	if w == messages {
		return "messages"
	}
	return "chat"
}

// arrival is one request a member received, as offsets from the run's t0.
type arrival struct {
	id      string        // the client request's id ("" for a warm-up)
	at, end time.Duration // when it arrived, when the member was done with it
	sick    bool          // the member was sick when it arrived
	keyOK   bool          // it carried the member's own key
	status  int           // what the member answered (0: no answer: a hang, a drop)
}

// member is one scripted deployment of the pool: an llmtest handler on its
// own loopback listener, with its own key. It logs every request it
// receives; its scenario's script says how it answers, healthy or sick.
type member struct {
	index int    // 0, 1, 2
	name  string // "m1": the upstream name loopctl gives it
	key   string
	w     wire
	t0    time.Time

	h    *llmtest.Handler
	srv  *http.Server
	addr string

	mu       sync.Mutex
	log      []arrival
	from, to time.Duration // the sick window (offsets from t0); empty until the run's schedule sets it
	nth      int           // requests received while sick (the brownout's count)
}

// startMember starts member i (0-based) of a run on a fresh loopback port.
func startMember(i int, w wire, sc scenario, t0 time.Time) (*member, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &member{index: i, name: memberNames[i], key: "sk-bench-" + memberNames[i], w: w, t0: t0, addr: ln.Addr().String()}
	script := sc.script(m)
	if w == messages {
		m.h = llmtest.NewAnthropicHandler(script)
	} else {
		m.h = llmtest.NewOpenAIHandler(script)
	}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	return m, nil
}

// memberNames are the members' upstream names.
var memberNames = []string{"m1", "m2", "m3"}

// target is the member's name as loopctl names it: upstream/model.
func (m *member) target() string { return m.name + "/" + model }

// baseURL is the member's API root for its wire (OpenAI: with /v1).
func (m *member) baseURL() string {
	if m.w == messages {
		return "http://" + m.addr
	}
	return "http://" + m.addr + "/v1"
}

// close ends every request still held and stops the server.
func (m *member) close() {
	m.h.Release()
	m.srv.Close()
}

// arrivals returns a copy of the request log.
func (m *member) arrivals() []arrival {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]arrival(nil), m.log...)
}

// window makes the member sick from from until to (offsets from t0); only
// the sick member (m3) is ever sick.
func (m *member) window(from, to time.Duration) {
	if m.index != sickMember {
		return
	}
	m.mu.Lock()
	m.from, m.to = from, to
	m.mu.Unlock()
}

// sickAt reports whether the member is sick at offset d (m.mu held).
func (m *member) sickAt(d time.Duration) bool { return d >= m.from && d < m.to }

// sick reports whether the member is sick now, and counts the request in
// the brownout's sequence when it is (nth, from 0).
func (m *member) sick() (sick bool, nth int) {
	d := time.Since(m.t0)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.sickAt(d) {
		return false, 0
	}
	m.nth++
	return true, m.nth - 1
}

// idPattern finds a client request's id in its body: "ping r<n>".
var idPattern = regexp.MustCompile(`ping (r[0-9]+)`)

// ServeHTTP logs the request (its id, whether it carries the member's own
// key) and has the llmtest handler answer it; the status it answered is
// logged when it is done, a dropped connection included.
func (m *member) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	a := arrival{at: time.Since(m.t0), keyOK: m.hasKey(r.Header)}
	if g := idPattern.FindSubmatch(body); g != nil {
		a.id = string(g[1])
	}
	m.mu.Lock()
	a.sick = m.sickAt(a.at)
	i := len(m.log)
	m.log = append(m.log, a)
	m.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w}
	defer func() { // also when the handler drops the connection (a panic)
		m.mu.Lock()
		m.log[i].end, m.log[i].status = time.Since(m.t0), sw.status
		m.mu.Unlock()
	}()
	m.h.ServeHTTP(sw, r)
}

// hasKey reports whether h carries the member's key the way its wire
// sends it.
func (m *member) hasKey(h http.Header) bool {
	if m.w == messages {
		return h.Get("X-Api-Key") == m.key
	}
	v, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	return ok && v == m.key
}

// statusWriter records the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Flush lets the stream's events out as they are written.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection (a reset hijacks it).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// trio is one gateway's three members.
type trio [3]*member

// startTrio starts the three members of one gateway.
func startTrio(w wire, sc scenario, t0 time.Time) (trio, error) {
	var t trio
	for i := range t {
		m, err := startMember(i, w, sc, t0)
		if err != nil {
			t.close()
			return trio{}, err
		}
		t[i] = m
	}
	return t, nil
}

func (t trio) close() {
	for _, m := range t {
		if m != nil {
			m.close()
		}
	}
}
