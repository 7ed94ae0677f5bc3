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
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--listen %q: the proxy has no authentication, so it listens on loopback only (e.g. 127.0.0.1:8931)", addr)
	}
	return nil
}

// proxyMux is the HTTP face of mcp-proxy: MCP at /mcp, metrics, dashboard.
func proxyMux(p *mcptool.Proxy, m *proxyMetrics) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server() },
		&mcp.StreamableHTTPOptions{PropagateRequestCancellation: true})) // a client that gives up cancels the upstream call
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /dashboard", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, dashboardPage)
	})
	mux.HandleFunc("GET /dashboard.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(dashboardState(p))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// serveProxyHTTP serves proxyMux on addr until ctx is done.
func serveProxyHTTP(ctx context.Context, p *mcptool.Proxy, m *proxyMetrics, addr string, stdout, stderr io.Writer, log *slog.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl mcp-proxy: %v\n", err)
		return ExitFailure
	}
	srv := &http.Server{Handler: proxyMux(p, m), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "loopctl mcp-proxy: MCP on http://%s/mcp, metrics on /metrics, breakers on /dashboard; Ctrl-C stops it\n", ln.Addr())
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

// dashboardTool is one row of the dashboard.
type dashboardTool struct {
	Breaker   string  `json:"breaker"`
	State     string  `json:"state"`
	Status    string  `json:"status"`
	Calls     uint64  `json:"calls"`
	Failures  uint64  `json:"failures"`
	RetryInMs int64   `json:"retryInMs"`
	Score     float64 `json:"score"`
}

// dashboardServer is one upstream on the dashboard.
type dashboardServer struct {
	Name     string `json:"name"`
	Up       bool   `json:"up"`
	Err      string `json:"error,omitempty"`
	Tools    int    `json:"tools"`
	Restarts int    `json:"restarts"`
}

func dashboardState(p *mcptool.Proxy) map[string]any {
	var servers []dashboardServer
	for _, u := range p.Upstreams() {
		st := u.Status()
		ds := dashboardServer{Name: u.Name(), Up: st.Up, Tools: len(u.Tools()), Restarts: st.Restarts}
		if st.Err != nil {
			ds.Err = st.Err.Error()
		}
		servers = append(servers, ds)
	}
	tools := []dashboardTool{}
	for _, th := range p.Registry().Summary() {
		tools = append(tools, dashboardTool{Breaker: th.Tool, State: th.State.String(), Status: th.Status.String(),
			Calls: th.Stats.Calls, Failures: th.Stats.Failures, Score: th.Stats.Score(),
			RetryInMs: p.Registry().Breaker(th.Tool).RetryIn().Milliseconds()})
	}
	return map[string]any{"servers": servers, "tools": tools}
}

const dashboardPage = `<!doctype html>
<meta charset="utf-8"><title>loopctl mcp-proxy</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}
td,th{padding:4px 12px;border-bottom:1px solid #ddd;text-align:left}.closed,.up{color:#1a7f37}.open,.down{color:#cf222e}.half-open{color:#9a6700}</style>
<h1>loopctl mcp-proxy</h1>
<h2>Upstream servers</h2><table id="servers"></table>
<h2>Tool breakers</h2><table id="tools"></table>
<script>
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
async function tick() {
  try {
    const d = await (await fetch("dashboard.json")).json();
    document.getElementById("servers").innerHTML = "<tr><th>server</th><th>state</th><th>tools</th><th>restarts</th><th>error</th></tr>" +
      (d.servers||[]).map(s => "<tr><td>"+esc(s.name)+"</td><td class="+(s.up?"up":"down")+">"+(s.up?"up":"down")+"</td><td>"+s.tools+"</td><td>"+s.restarts+"</td><td>"+esc(s.error||"")+"</td></tr>").join("");
    document.getElementById("tools").innerHTML = "<tr><th>breaker</th><th>state</th><th>status</th><th>calls</th><th>failures</th><th>retry in</th></tr>" +
      d.tools.map(t => "<tr><td>"+esc(t.breaker)+"</td><td class="+esc(t.state)+">"+esc(t.state)+"</td><td>"+esc(t.status)+"</td><td>"+t.calls+"</td><td>"+t.failures+"</td><td>"+(t.retryInMs>0?(t.retryInMs/1000).toFixed(1)+"s":"")+"</td></tr>").join("");
  } catch (e) {}
}
tick(); setInterval(tick, 1000);
</script>
`
