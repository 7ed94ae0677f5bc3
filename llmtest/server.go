package llmtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// wire is one wire format.
type wire interface {
	// matches reports whether the URL path is the format's endpoint.
	matches(path string) bool
	// decode decodes a request body. problem is the message of the 400 a
	// real server would answer a request breaking the format's rules with.
	decode(body []byte) (r Request, problem string, err error)
	// reply writes a completion.
	reply(w http.ResponseWriter, r Request, rep Reply)
	// errorBody returns the format's error object.
	errorBody(status int, msg string) string
	// endpoint names the endpoint (Request.Endpoint).
	endpoint() string
}

// Handler is the http.Handler of a fake model server. It is safe for
// concurrent use.
type Handler struct {
	wires  []wire // the endpoints, the first matching a path serves it
	script Script
	nonce  uint32 // makes the response ids of this Handler unique

	mu       sync.Mutex
	log      []Request
	released chan struct{}
	once     sync.Once
}

// NewOpenAIHandler returns a Handler that speaks the OpenAI wire: Chat
// Completions (POST .../chat/completions), the Responses API (POST
// .../responses) and embeddings (POST .../embeddings), and answers with
// script.
func NewOpenAIHandler(script Script) *Handler {
	return newHandler(script, openaiWire{}, responsesWire{}, embeddingsWire{})
}

// NewAnthropicHandler returns a Handler that speaks Anthropic Messages
// (POST .../v1/messages, and POST .../v1/messages/count_tokens) and answers
// with script.
func NewAnthropicHandler(script Script) *Handler {
	return newHandler(script, anthropicWire{}, countTokensWire{})
}

var nonces atomic.Uint32

func newHandler(s Script, ws ...wire) *Handler {
	if s == nil {
		s = Sequence()
	}
	return &Handler{wires: ws, script: s, nonce: nonces.Add(1), released: make(chan struct{})}
}

// wireFor returns the wire serving path, or nil.
func (h *Handler) wireFor(path string) wire {
	for _, w := range h.wires {
		if w.matches(path) {
			return w
		}
	}
	return nil
}

// ServeHTTP decodes, checks, logs and answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	wi, req, ok := h.accept(w, r)
	if !ok {
		return
	}
	rep := h.script(req)
	h.hold(r, rep)
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if f := rep.Fault; f != nil {
		h.fault(w, r, wi, f)
		return
	}
	if sw, ok := wi.(streamer); ok && req.Stream {
		sw.stream(w, r, req, rep, h.released)
		return
	}
	wi.reply(w, req, rep)
}

// hold waits for rep's Gate and then its Delay; if the request ends or the
// Handler is released first, it drops the connection without a response.
func (h *Handler) hold(r *http.Request, rep Reply) {
	if rep.Gate != nil {
		select {
		case <-rep.Gate:
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		case <-h.released:
			panic(http.ErrAbortHandler)
		}
	}
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		case <-h.released:
			panic(http.ErrAbortHandler)
		}
	}
}

// accept finds the wire serving r, decodes its body and logs the request.
// It answers (and reports !ok for) what the script never sees: an unknown
// endpoint, a method other than POST, a body that is not JSON, and (after
// logging it) a request breaking the wire's rules.
func (h *Handler) accept(w http.ResponseWriter, r *http.Request) (wi wire, req Request, ok bool) {
	wi = h.wireFor(r.URL.Path)
	if wi == nil {
		writeJSON(w, http.StatusNotFound, nil, h.wires[0].errorBody(http.StatusNotFound, "llmtest: no endpoint "+r.URL.Path))
		return nil, Request{}, false
	}
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, nil, wi.errorBody(http.StatusMethodNotAllowed, "llmtest: method "+r.Method))
		return nil, Request{}, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, Request{}, false // the client went away
	}
	req, problem, err := wi.decode(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, nil, wi.errorBody(http.StatusBadRequest, "llmtest: request is not valid JSON: "+err.Error()))
		return nil, Request{}, false
	}
	req.Header = r.Header.Clone()
	req.Body = body
	req.Endpoint = wi.endpoint()
	req.Query = r.URL.RawQuery
	req.nonce = h.nonce
	h.mu.Lock()
	req.Seq = len(h.log) + 1
	h.log = append(h.log, req)
	h.mu.Unlock()
	if problem != "" {
		writeJSON(w, http.StatusBadRequest, nil, wi.errorBody(http.StatusBadRequest, problem))
		return nil, Request{}, false
	}
	return wi, req, true
}

// fault answers with f: a reset connection, a hang until the client or
// Release gives up (then no response at all), or an error status with the
// wire's error body.
func (h *Handler) fault(w http.ResponseWriter, r *http.Request, wi wire, f *Fault) {
	if f.Reset {
		reset(w)
		return
	}
	if f.Hang {
		select {
		case <-r.Context().Done():
		case <-h.released:
		}
		panic(http.ErrAbortHandler) // drop the connection: no response at all
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	b := f.Body
	if b == "" {
		msg := f.Message
		if msg == "" {
			msg = "llmtest: status " + strconv.Itoa(status)
			if t := http.StatusText(status); t != "" {
				msg = "llmtest: " + strings.ToLower(t)
			}
		}
		b = wi.errorBody(status, msg)
	}
	writeJSON(w, status, f.Header, b)
}

// Requests returns a copy of the request log, in arrival order. Requests
// the server refused as malformed (400) are logged too; requests it could
// not decode are not.
func (h *Handler) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.log)
}

// Count returns the number of logged requests for model; "" counts all.
func (h *Handler) Count(model string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if model == "" {
		return len(h.log)
	}
	n := 0
	for _, r := range h.log {
		if r.Model == model {
			n++
		}
	}
	return n
}

// Models returns the model of each logged request, in arrival order.
func (h *Handler) Models() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, len(h.log))
	for i, r := range h.log {
		out[i] = r.Model
	}
	return out
}

// Release ends every hanging or gated request now, and every later one
// at once: their connections are dropped without a response. It is
// idempotent.
func (h *Handler) Release() { h.once.Do(func() { close(h.released) }) }

// Server is a Handler on a started loopback httptest.Server.
type Server struct {
	*httptest.Server
	*Handler
	base string
}

// NewOpenAI starts a loopback server speaking OpenAI Chat Completions.
// Give [Server.BaseURL] to the OpenAI provider (or SDK) and Close it when done.
func NewOpenAI(script Script) *Server {
	h := NewOpenAIHandler(script)
	s := httptest.NewServer(h)
	return &Server{Server: s, Handler: h, base: s.URL + "/v1"}
}

// NewAnthropic starts a loopback server speaking Anthropic Messages.
// Give [Server.BaseURL] to the Anthropic provider (or SDK) and Close it when done.
func NewAnthropic(script Script) *Server {
	h := NewAnthropicHandler(script)
	s := httptest.NewServer(h)
	return &Server{Server: s, Handler: h, base: s.URL}
}

// BaseURL is the API root to configure a client with: URL+"/v1" for
// OpenAI (the SDK appends "chat/completions"), URL for Anthropic (the SDK
// appends "v1/messages").
func (s *Server) BaseURL() string { return s.base }

// Close releases hanging requests, then shuts the server down.
func (s *Server) Close() {
	s.Handler.Release()
	s.Server.Close()
}

func writeJSON(w http.ResponseWriter, status int, extra http.Header, body string) {
	for k, vs := range extra {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
