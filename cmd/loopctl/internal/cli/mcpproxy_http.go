package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/internal/loopback"
	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// loopbackOnly rejects an address that is not on a loopback interface: the
// proxy has no authentication, so it never listens beyond this machine.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v", addr, err)
	}
	if !loopback.Addr(host) {
		return fmt.Errorf("--listen %q: the proxy has no authentication, so it listens on loopback only (e.g. 127.0.0.1:8931)", addr)
	}
	return nil
}

// proxyMux is the HTTP face of mcp-proxy: MCP at /mcp, metrics, the shared
// breaker dashboard at /dashboard/ (with log, its recent transitions), and the
// upstream servers' connections at /upstreams.
func proxyMux(p *mcptool.Proxy, m *proxyMetrics, log *dashboard.Log) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler(p))
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	board := dashboard.New(func() dashboard.Sources {
		return dashboard.Sources{Tools: []dashboard.ToolSet{{Name: "mcp-proxy", Registry: p.Registry()}}}
	}, dashboard.Options{Title: "loopctl mcp-proxy", Log: log})
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", board))
	mux.Handle("GET /dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently))
	mux.HandleFunc("GET /upstreams", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(upstreamsState(p))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// newProtocol is the first protocol version whose requests each carry their
// version (SEP-2575): served without sessions.
const newProtocol = "2026-07-28"

// mcpHandler serves p's MCP server over streamable HTTP to clients of every
// protocol version: a request on 2026-07-28 or later (its
// Mcp-Protocol-Version header says so) goes to a stateless handler, which
// that protocol needs (a stateful one refuses it with -32022); the others to
// the stateful one, which sessions of the earlier versions need (server
// requests, resumable streams). A client that gives up cancels the upstream
// call on both.
func mcpHandler(p *mcptool.Proxy) http.Handler {
	server := func(*http.Request) *mcp.Server { return p.Server() }
	stateful := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{PropagateRequestCancellation: true})
	stateless := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= newProtocol && r.Header.Get("Mcp-Session-Id") == "" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// serveProxyHTTP serves proxyMux on addr until ctx is done.
func serveProxyHTTP(ctx context.Context, p *mcptool.Proxy, m *proxyMetrics, board *dashboard.Log, addr string, stdout, stderr io.Writer, log *slog.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl mcp-proxy: %v\n", err)
		return ExitFailure
	}
	srv := &http.Server{Handler: proxyMux(p, m, board), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "loopctl mcp-proxy: MCP on http://%s/mcp, metrics on /metrics, breakers on /dashboard/; Ctrl-C stops it\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		log.Error("mcp-proxy: http server", "err", err)
		return ExitFailure
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("mcp-proxy: shutdown", "err", err)
	}
	srv.Close()
	<-done
	for ss := range p.Server().Sessions() { // the MCP handler keeps sessions past the HTTP server
		ss.Close()
	}
	return ExitOK
}

// upstreamState is one upstream server at /upstreams.
type upstreamState struct {
	Name     string `json:"name"`
	Up       bool   `json:"up"`
	Err      string `json:"error,omitempty"`
	Tools    int    `json:"tools"`
	Restarts int    `json:"restarts"`
}

func upstreamsState(p *mcptool.Proxy) []upstreamState {
	var out []upstreamState
	for _, u := range p.Upstreams() {
		st := u.Status()
		us := upstreamState{Name: u.Name(), Up: st.Up, Tools: len(u.Tools()), Restarts: st.Restarts}
		if st.Err != nil {
			us.Err = st.Err.Error()
		}
		out = append(out, us)
	}
	return out
}
