package dashboard

import (
	"embed"
	"encoding/json"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Options configures the handler. The zero value is usable.
type Options struct {
	// Title is the page's title. "": "loopctl breakers".
	Title string
	// Log supplies the last transitions. nil: none are shown.
	Log *Log
	// PollInterval is how often the page polls, in milliseconds. 0: 250.
	PollInterval int
}

// Handler serves the dashboard. Build it with [New]. Safe for concurrent use.
type Handler struct {
	src  Source
	opts Options
	page []byte
}

// New returns the dashboard for the breakers src returns.
func New(src Source, opts Options) *Handler {
	if opts.Title == "" {
		opts.Title = "loopctl breakers"
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250
	}
	return &Handler{src: src, opts: opts, page: renderPage(opts)}
}

// ServeHTTP serves "/" (the page), "/state.json", "/app.css" and "/app.js";
// anything else is 404. Only GET and HEAD are allowed.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch r.URL.Path {
	case "/", "", "/index.html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'")
		w.Write(h.page)
	case "/state.json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(Read(h.src, h.opts.Log))
	case "/app.css":
		h.asset(w, "assets/app.css", "text/css; charset=utf-8")
	case "/app.js":
		h.asset(w, "assets/app.js", "text/javascript; charset=utf-8")
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) asset(w http.ResponseWriter, name, typ string) {
	b, err := assets.ReadFile(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Write(b)
}
