package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"

	"github.com/loopctl/loopctl-go/internal/loopback"
)

// ServeHTTP routes a request to its endpoint.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.admit(w, r) {
		return
	}
	if wi := wires[r.URL.Path]; wi != nil {
		if r.Method != http.MethodPost {
			methodNotAllowed(w, http.MethodPost)
			return
		}
		g.serveWire(w, r, wi)
		return
	}
	switch r.URL.Path {
	case "/v1/models", "/models":
		g.listModels(w, r)
	case "/healthz":
		_, _ = io.WriteString(w, "ok\n")
	case "/readyz":
		g.readyz(w, r)
	case "/metrics":
		g.m.handler.ServeHTTP(w, r)
	case "/dashboard":
		if g.opt.Dashboard == nil {
			notFound(w, r)
			return
		}
		http.Redirect(w, r, "/dashboard/", http.StatusMovedPermanently)
	default:
		if strings.HasPrefix(r.URL.Path, breakersPath) {
			g.serveAdmin(w, r)
			return
		}
		if id, ok := strings.CutPrefix(r.URL.Path, "/v1/models/"); ok && id != "" {
			g.model(w, r, id)
			return
		}
		g.dashboard(w, r)
	}
}

// readyz serves /readyz: Options.Ready's verdict, and where the breakers'
// state lives (Options.StoreMode).
func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	if g.opt.Ready != nil {
		if err := g.opt.Ready(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	if g.opt.StoreMode != nil {
		_, _ = io.WriteString(w, "ready ("+g.opt.StoreMode()+")\n")
		return
	}
	_, _ = io.WriteString(w, "ready\n")
}

// dashboard serves /dashboard/... through Options.Dashboard with the prefix
// stripped, and any other path as 404.
func (g *Gateway) dashboard(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/dashboard/")
	if !ok || g.opt.Dashboard == nil {
		notFound(w, r)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + rest
	r2.URL.RawPath = ""
	g.opt.Dashboard.ServeHTTP(w, r2)
}

// wires are the POST endpoints of the model wires (docs/GATEWAY.md §3, §6).
var wires = map[string]*endpoint{
	"/v1/chat/completions": chatEndpoint, "/chat/completions": chatEndpoint,
	"/v1/responses": responsesEndpoint, "/responses": responsesEndpoint,
	"/v1/embeddings": embeddingsEndpoint, "/embeddings": embeddingsEndpoint,
	"/v1/messages":              messagesEndpoint,
	"/v1/messages/count_tokens": countTokensEndpoint,
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeOpenAIError(w, http.StatusNotFound, apiError{Message: "no endpoint " + r.URL.Path, Type: "invalid_request_error", Code: "not_found"})
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeOpenAIError(w, http.StatusMethodNotAllowed, apiError{Message: "method not allowed", Type: "invalid_request_error"})
}

// authorized checks the client's key in constant time (against every key,
// by SHA-256, so neither the key nor its length leaks through timing). It
// writes the 401 itself.
func (g *Gateway) authorized(w http.ResponseWriter, r *http.Request) bool {
	_, ok := g.clientName(r)
	if !ok {
		writeOpenAIError(w, http.StatusUnauthorized, apiError{Message: "missing or invalid API key (send Authorization: Bearer <key> or x-api-key: <key>)", Type: "authentication_error", Code: "invalid_api_key"})
	}
	return ok
}

// clientName returns the name of the client key r presents; ok is true when no
// keys are configured.
func (g *Gateway) clientName(r *http.Request) (string, bool) {
	if len(g.clients.keys) == 0 {
		return "", true
	}
	match := matchKey(presented(r, false), g.clients.keys)
	if match < 0 {
		return "", false
	}
	return g.clients.names[match], true
}

// presented returns the key r presents: "Authorization: Bearer <key>",
// "x-api-key: <key>" or "api-key: <key>", and with basic the password of
// "Authorization: Basic" (what a browser sends for the dashboard).
func presented(r *http.Request, basic bool) string {
	h := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(tok)
	}
	if basic {
		if _, pw, ok := r.BasicAuth(); ok {
			return pw
		}
	}
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return strings.TrimSpace(k)
	}
	return strings.TrimSpace(r.Header.Get("Api-Key"))
}

// matchKey returns the index of key in keys (compared in constant time, by
// SHA-256, against every one), or -1.
func matchKey(key string, keys [][sha256.Size]byte) int {
	if key == "" {
		return -1
	}
	sum := sha256.Sum256([]byte(key))
	match := -1
	for i := range keys {
		if subtle.ConstantTimeCompare(sum[:], keys[i][:]) == 1 {
			match = i
		}
	}
	return match
}

// admit applies the doors of docs/GATEWAY.md §7 before any endpoint runs:
// /metrics and /dashboard need a key when keys are configured (one of
// admin_keys when there are any, else a client key); without client keys,
// a request that came in on a loopback address must name a loopback Host
// (no DNS rebinding) and a POST must carry a JSON body type (no form post
// from a web page). It writes the refusal itself.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request) bool {
	if len(g.clients.keys) == 0 {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && loopback.Addr(la.String()) && !loopback.Addr(r.Host) {
			wires[r.URL.Path].writeError(w, http.StatusForbidden, apiError{Message: "this gateway has no client keys, so it answers only requests addressed to a loopback host name (localhost, 127.0.0.1, [::1])", Type: "permission_error", Code: "invalid_host"})
			return false
		}
		if r.Method == http.MethodPost && !jsonType(r.Header.Get("Content-Type")) {
			wires[r.URL.Path].writeError(w, http.StatusUnsupportedMediaType, apiError{Message: "the request body must be sent as Content-Type: application/json", Type: "invalid_request_error", Code: "unsupported_media_type"})
			return false
		}
	}
	p := r.URL.Path
	if p != "/metrics" && p != "/dashboard" && !strings.HasPrefix(p, "/dashboard/") {
		return true
	}
	keys := g.admins.keys
	if len(keys) == 0 {
		keys = g.clients.keys
	}
	if len(keys) == 0 || matchKey(presented(r, true), keys) >= 0 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="loopctl gateway"`)
	writeOpenAIError(w, http.StatusUnauthorized, apiError{Message: "this endpoint needs a key (Authorization: Bearer <key>, or the key as the password of Basic authentication)", Type: "authentication_error", Code: "invalid_api_key"})
	return false
}

// jsonType reports whether a Content-Type is JSON: application/json or
// application/<x>+json, with any parameters.
func jsonType(ct string) bool {
	switch ct {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8":
		return true // what clients send, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// apiError is the OpenAI error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    any    `json:"code"`
}

// writeOpenAIError writes {"error": e} with status: OpenAI's error shape,
// for the endpoints that are not a wire's (a wire's errors go through
// (*wire).writeError).
func writeOpenAIError(w http.ResponseWriter, status int, e apiError) {
	b, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{e})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

var errBodyTooLarge = errors.New("request body too large")
