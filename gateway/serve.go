package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// ServeHTTP routes a request to its endpoint.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		if !g.authorized(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(g.modelList)
	case "/healthz":
		_, _ = io.WriteString(w, "ok\n")
	case "/readyz":
		if g.opt.Ready != nil {
			if err := g.opt.Ready(r.Context()); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = io.WriteString(w, "ready\n")
	case "/metrics":
		g.m.handler.ServeHTTP(w, r)
	case "/dashboard":
		if g.opt.Dashboard == nil {
			notFound(w, r)
			return
		}
		http.Redirect(w, r, "/dashboard/", http.StatusMovedPermanently)
	default:
		if id, ok := strings.CutPrefix(r.URL.Path, "/v1/models/"); ok && id != "" {
			g.model(w, r, id)
			return
		}
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
}

// wires are the POST endpoints of the model wires (docs/GATEWAY.md §3, §6).
var wires = map[string]*wire{
	"/v1/chat/completions": wireChat, "/chat/completions": wireChat,
	"/v1/responses": wireResponses, "/responses": wireResponses,
	"/v1/embeddings": wireEmbeddings, "/embeddings": wireEmbeddings,
	"/v1/messages":              wireMessages,
	"/v1/messages/count_tokens": wireCountTokens,
}

// model serves GET /v1/models/{id}: one configured model, or 404
// model_not_found.
func (g *Gateway) model(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	if !g.authorized(w, r) {
		return
	}
	if g.models[id] == nil {
		writeError(w, http.StatusNotFound, apiError{Message: "The model `" + id + "` does not exist (see GET /v1/models)", Type: "invalid_request_error", Param: "model", Code: "model_not_found"})
		return
	}
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}{id, "model", 0, "loopctl"})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, apiError{Message: "no endpoint " + r.URL.Path, Type: "invalid_request_error", Code: "not_found"})
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, apiError{Message: "method not allowed", Type: "invalid_request_error"})
}

// authorized checks the client's key in constant time (against every key,
// by SHA-256, so neither the key nor its length leaks through timing). It
// writes the 401 itself.
func (g *Gateway) authorized(w http.ResponseWriter, r *http.Request) bool {
	_, ok := g.clientName(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, apiError{Message: "missing or invalid API key (send Authorization: Bearer <key> or x-api-key: <key>)", Type: "authentication_error", Code: "invalid_api_key"})
	}
	return ok
}

// clientName returns the name of the client key r presents; ok is true when no
// keys are configured.
func (g *Gateway) clientName(r *http.Request) (string, bool) {
	if len(g.keys) == 0 {
		return "", true
	}
	h := r.Header.Get("Authorization")
	tok, found := strings.CutPrefix(h, "Bearer ")
	if !found {
		if tok = r.Header.Get("X-Api-Key"); tok == "" {
			tok = r.Header.Get("Api-Key")
		}
		if tok == "" {
			return "", false
		}
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	match := -1
	for i := range g.keys {
		if subtle.ConstantTimeCompare(sum[:], g.keys[i][:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return "", false
	}
	return g.keyNames[match], true
}

// apiError is the OpenAI error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    any    `json:"code"`
}

// writeError writes {"error": e} with status.
func writeError(w http.ResponseWriter, status int, e apiError) {
	b, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{e})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

var errBodyTooLarge = errors.New("request body too large")
