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
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server() },
		&mcp.StreamableHTTPOptions{PropagateRequestCancellation: true})) // a client that gives up cancels the upstream call
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
