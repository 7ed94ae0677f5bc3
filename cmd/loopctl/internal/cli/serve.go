package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/internal/loopback"
	"github.com/loopctl/loopctl-go/llmtest"
)

const serveUsage = `usage: loopctl serve [flags]

Runs the OpenAI-compatible gateway: point any OpenAI client's base URL at
http://<listen>/v1 and its requests go through the model breaker, the fallback
chain and the retry ladder. With no --config it starts a zero-setup demo on
127.0.0.1:4000: one model "demo" served by an embedded scripted upstream, no
network needed. SIGHUP reloads --config (as POST /admin/reload does; with
--watch-config, so does every change of the file). The
first SIGTERM or SIGINT makes /readyz answer 503 at once, keeps serving for
--drain-delay, then stops accepting and lets requests and streams in flight
finish (up to --grace; a stream still open then ends with its wire's error
event), then exits 0.`

// serveSettings are what runServe resolves from its flags; tests build them
// directly.
type serveSettings struct {
	cfg       gateway.Config
	demo      bool // the zero-setup demo (embedded upstream)
	logFormat string
	grace     time.Duration
	// drainDelay: how long serving goes on after the first signal, with
	// /readyz answering 503 (docs/GATEWAY.md §9.4).
	drainDelay time.Duration
	// configPath is the config file a reload reads ("": none); listenFlag
	// and redisFlag are the flags that override it.
	configPath, listenFlag, redisFlag string
	// server timeouts (zero: the defaults below)
	readHeaderTimeout, readTimeout, idleTimeout time.Duration
	// bodyGrace and bodyRate: the minimum rate of request bodies (zero:
	// the defaults); maxConns: the connection cap (zero: from the fd limit).
	bodyGrace time.Duration
	bodyRate  int64
	maxConns  int
	onConn    func(open int) // called after each accept with the open count (tests)
	// watch: reload configPath when it changes (--watch-config).
	watch bool
	// ready, when set, is called with the address once listening.
	ready  func(addr string)
	logOut io.Writer // the request log (nil: stderr)
	// force is closed by a second SIGTERM/SIGINT: stop at once.
	force <-chan struct{}
}

// Server timeouts against slow clients. There is no write timeout: streams
// may last as long as timeouts.request. Request bodies must also keep a
// minimum rate (serve_guard.go).
const (
	defaultReadHeaderTimeout = 5 * time.Second
	defaultReadTimeout       = 2 * time.Minute
	defaultIdleTimeout       = 2 * time.Minute
)

// runServe is `loopctl serve`: it resolves the flags and the config into
// serveSettings, checks them (and with --check stops there), then serves
// until SIGTERM or SIGINT.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("serve")
	configPath := fs.String("config", "", "the YAML config `FILE` (none: the zero-setup demo)")
	check := fs.Bool("check", false, "validate --config and exit: 0, or 2 naming every problem")
	listen := fs.String("listen", "", "listen `ADDR` (host:port), overrides the config's listen")
	redis := fs.String("redis", "", "share breaker state with every replica through this Redis `URL` (overrides store.redis)")
	logFormat := fs.String("log-format", "text", "request log format: text or json")
	grace := fs.Duration("grace", 30*time.Second, "how long requests and streams in flight may finish after SIGTERM/SIGINT")
	drainDelay := fs.Duration("drain-delay", 0, "how long to keep serving after SIGTERM/SIGINT, with /readyz answering 503, before the grace starts (e.g. 5s behind a load balancer)")
	watch := fs.Bool("watch-config", false, "reload --config when the file changes (a Kubernetes ConfigMap update included), as SIGHUP does")
	if code, done := ParseFlags(fs, serveUsage, args, stdout, stderr); done {
		return code
	}
	if *logFormat != "text" && *logFormat != "json" {
		return UsageError(stderr, fs.Name(), fmt.Sprintf("--log-format %q: want text or json", *logFormat))
	}
	if *grace < 0 || *drainDelay < 0 {
		return UsageError(stderr, fs.Name(), "--grace and --drain-delay must not be negative")
	}
	s := serveSettings{logFormat: *logFormat, grace: *grace, drainDelay: *drainDelay, configPath: *configPath, listenFlag: *listen, redisFlag: *redis, watch: *watch}
	switch {
	case *configPath != "":
		cfg, err := gateway.LoadConfig(*configPath)
		if err != nil {
			return configProblems(stderr, *configPath, err)
		}
		s.cfg = cfg
	case *check:
		return UsageError(stderr, fs.Name(), "--check needs --config FILE")
	default:
		s.demo = true
		s.cfg = demoConfig()
	}
	if *listen != "" {
		s.cfg.Listen = *listen
	}
	if *redis != "" {
		s.cfg.Store.Redis = *redis
	}
	if err := s.cfg.Validate(); err != nil {
		return configProblems(stderr, *configPath, err)
	}
	configWarnings(stderr, *configPath, s.cfg)
	if err := preflight(s.cfg); err != nil {
		fmt.Fprintf(stderr, "loopctl serve: %v\n", err)
		return ExitUsage
	}
	if *check {
		return checkConfig(ctx, s.cfg, *configPath, stdout, stderr)
	}
	ctx, force, stop := signals(ctx)
	defer stop()
	s.force = force
	return serve(ctx, s, stdout, stderr)
}

// signals returns a context that ends at the first SIGTERM or SIGINT and a
// channel closed at the second (stop at once); stop releases them.
func signals(parent context.Context) (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	force, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		case <-done:
			return
		}
		select {
		case <-sigs:
			close(force)
		case <-done:
		}
	}()
	return ctx, force, func() { signal.Stop(sigs); close(done); cancel() }
}

// configProblems prints every problem of a config and returns ExitUsage.
func configProblems(stderr io.Writer, path string, err error) int {
	if path == "" {
		path = "flags"
	}
	var ce *gateway.ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintf(stderr, "loopctl serve: %s: %d problem(s):\n", path, len(ce.Problems))
		for _, p := range ce.Problems {
			fmt.Fprintf(stderr, "  %s\n", p.Error())
		}
		return ExitUsage
	}
	fmt.Fprintf(stderr, "loopctl serve: %s: %v\n", path, err)
	return ExitUsage
}

// checkConfig runs every check serve runs before it listens (keys,
// policies), then resolves the upstreams' credentials.
func checkConfig(ctx context.Context, cfg gateway.Config, path string, stdout, stderr io.Writer) int {
	gw, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		return configProblems(stderr, path, err)
	}
	defer gw.Close()
	if code := credentialProblems(stderr, path, gw.CheckCredentials(ctx)); code != ExitOK {
		return code
	}
	fmt.Fprintf(stdout, "%s: OK (%d models: %s; %d upstreams)\n", path, len(cfg.Models), modelNames(cfg), len(cfg.Upstreams))
	return ExitOK
}

// credentialProblems prints the checks of upstream credentials: each
// warning, then each credential not found (exit 2, as a config problem).
func credentialProblems(stderr io.Writer, path string, checks []gateway.CredentialCheck) int {
	var bad []gateway.CredentialCheck
	for _, c := range checks {
		if c.Problem != "" {
			bad = append(bad, c)
		} else if c.Warning != "" {
			fmt.Fprintf(stderr, "loopctl serve: %s: warning: %s (upstream %s): %s\n", path, c.Path, c.Upstream, c.Warning)
		}
	}
	if len(bad) == 0 {
		return ExitOK
	}
	fmt.Fprintf(stderr, "loopctl serve: %s: %d problem(s):\n", path, len(bad))
	for _, c := range bad {
		fmt.Fprintf(stderr, "  %s: upstream %s: %s\n", c.Path, c.Upstream, c.Problem)
	}
	return ExitUsage
}

// safety refuses configurations that are unsafe to start: no client keys on
// an address other than loopback.
func safety(cfg gateway.Config) error {
	addr := cfg.Listen
	if addr == "" {
		addr = gateway.DefaultListen
	}
	if len(cfg.ClientKeys) == 0 && !loopback.Addr(addr) {
		return fmt.Errorf("refusing to listen on %s without client_keys: anyone who can reach that address could spend your upstream keys; add client_keys to the config, or listen on 127.0.0.1", addr)
	}
	return nil
}

// modelNames lists cfg's model names, comma-separated.
func modelNames(cfg gateway.Config) string {
	var names []string
	for _, m := range cfg.Models {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// serve runs the gateway until ctx ends, then drains: requests and streams
// in flight get s.grace to finish. It returns ExitOK after a drain,
// ExitFailure if it could not start.
func serve(ctx context.Context, s serveSettings, stdout, stderr io.Writer) int {
	h := s.logHandler(stderr)
	logger := slog.New(h)
	cfg := s.cfg
	if s.demo {
		demo := llmtest.NewOpenAI(demoScript)
		defer demo.Close()
		cfg.Upstreams = []gateway.Upstream{{Name: "embedded", BaseURL: demo.BaseURL()}}
	}
	var draining atomic.Bool
	opts := gateway.Options{Logger: logger, OnTransition: logTransitions(logger), Ready: notDraining(&draining)}
	var stopTracing func()
	opts.Observer, stopTracing = tracingFromEnv(ctx, stderr)
	defer stopTracing() // after the drain: the last requests' spans are flushed
	store, closeStore, ok := fleetStore(cfg.Store, &opts, logger, stderr)
	if !ok {
		return ExitFailure
	}
	defer closeStore()
	gw, err := gateway.New(cfg, opts)
	if err != nil {
		return configProblems(stderr, "", err)
	}
	defer gw.Close()
	if store != nil {
		gw.Registry().MustRegister(store.Collector())
	}
	ln, err := s.listen(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl serve: %v\n", err)
		return ExitFailure
	}
	live := gateway.NewLive(gw, s.configPath, s.prepare)
	stopReloads, err := s.reloads(live, logger)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl serve: --watch-config: %v\n", err)
		return ExitFailure
	}
	defer stopReloads()
	haltCtx, halt := context.WithCancelCause(context.Background())
	defer halt(nil)
	srv := s.httpServer(live, h)
	srv.BaseContext = func(net.Listener) context.Context { return haltCtx }
	s.banner(stdout, cfg, ln.Addr().String())
	if s.ready != nil {
		s.ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "loopctl serve: %v\n", err)
		return ExitFailure
	case <-ctx.Done():
	}
	return s.stop(srv, errc, &draining, stdout, halt)
}

// logHandler is the request log's handler: text or json, on s.logOut (or
// stderr).
func (s serveSettings) logHandler(stderr io.Writer) slog.Handler {
	logOut := s.logOut
	if logOut == nil {
		logOut = stderr
	}
	if s.logFormat == "json" {
		return slog.NewJSONHandler(logOut, nil)
	}
	return slog.NewTextHandler(logOut, nil)
}

// shareThroughStore points the gateway's options at the shared store: model
// breakers, the store's mode, the previous_response_id pins, and the pools'
// member breakers and member disables.
func shareThroughStore(opts *gateway.Options, store *fleet.Store) {
	opts.Backend = store.ModelBackend
	opts.StoreMode = storeMode(store)
	opts.Responses = store.ResponsePins()    // previous_response_id pins, shared (GATEWAY.md §6)
	opts.MemberBackend = store.ToolBackend() // member@<upstream>/<model> (GATEWAY.md §11.5)
	opts.MemberDisables = store.MemberDisables()
}

// listen opens cfg's listen address (or the default) with the connection
// cap: s.maxConns, or one derived from the fd limit.
func (s serveSettings) listen(cfg gateway.Config) (net.Listener, error) {
	addr := cfg.Listen
	if addr == "" {
		addr = gateway.DefaultListen
	}
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	maxConns := s.maxConns
	if maxConns == 0 {
		maxConns = connLimit(fdLimit())
	}
	return newLimitListener(raw, maxConns, s.onConn), nil
}

// httpServer is the server in front of gw: its timeouts against slow
// clients, the minimum body rate, and errors logged through h.
func (s serveSettings) httpServer(gw http.Handler, h slog.Handler) *http.Server {
	readTimeout := or(s.readTimeout, defaultReadTimeout)
	rate := s.bodyRate
	if rate == 0 {
		rate = defaultBodyRate
	}
	return &http.Server{
		Handler:           minRate(gw, or(s.bodyGrace, defaultBodyGrace), rate, readTimeout),
		ReadHeaderTimeout: or(s.readHeaderTimeout, defaultReadHeaderTimeout),
		ReadTimeout:       readTimeout,
		IdleTimeout:       or(s.idleTimeout, defaultIdleTimeout),
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(h, slog.LevelWarn),
	}
}

// banner prints where the gateway listens, its models, how to stop it and,
// for the demo, a request to try.
func (s serveSettings) banner(stdout io.Writer, cfg gateway.Config, addr string) {
	base := "http://" + addr
	fmt.Fprintf(stdout, "loopctl serve: listening on %s (base URLs: OpenAI chat completions and Responses %s/v1, Anthropic Messages %s)\n", base, base, base)
	if s.demo {
		fmt.Fprintf(stdout, "models: demo (zero-setup demo: an embedded scripted upstream, no network)\n")
	} else {
		fmt.Fprintf(stdout, "models: %s\n", modelNames(cfg))
	}
	fmt.Fprintf(stdout, "stop: Ctrl-C or SIGTERM (requests in flight get %v to finish)\n", s.grace)
	if s.demo {
		fmt.Fprintf(stdout, "try:  curl %s/v1/chat/completions -H 'Content-Type: application/json' -d '{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}'\n", base)
		fmt.Fprintf(stdout, "      curl %s/v1/messages -H 'Content-Type: application/json' -d '{\"model\":\"demo\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}'\n", base)
	}
}

// drain shuts srv down within s.grace, or at once on s.force; when the
// grace ends, halt ends the streams still open with their wire's error
// event (gateway.ErrHalted) before their connections close.
func drain(srv *http.Server, errc <-chan error, s serveSettings, stdout io.Writer, halt context.CancelCauseFunc) int {
	dctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	sd := make(chan error, 1)
	go func() { sd <- srv.Shutdown(dctx) }()
	code := ExitOK
	select {
	case err := <-sd:
		if err != nil {
			fmt.Fprintf(stdout, "loopctl serve: grace period (%v) over; ending the streams still open with their wire's error event\n", s.grace)
			haltAndClose(srv, halt)
		}
	case <-s.force:
		fmt.Fprintf(stdout, "loopctl serve: second signal; closing every connection now\n")
		_ = srv.Close()
		<-sd
		code = ExitFailure
	}
	<-errc
	fmt.Fprintf(stdout, "loopctl serve: stopped\n")
	return code
}

// or returns v, or def when v is zero.
func or(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// demoConfig is the zero-setup configuration: model "demo" on the embedded
// upstream (its base URL is filled in when it starts).
func demoConfig() gateway.Config {
	return gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "embedded", BaseURL: "http://127.0.0.1/v1"}},
		Models:    []gateway.Model{{Name: "demo", Primary: "embedded/primary", Chain: []string{"embedded/backup"}}},
	}
}

// demoScript answers the demo models: an echo, streamed word by word.
func demoScript(r llmtest.Request) llmtest.Reply {
	text := fmt.Sprintf("Hello from loopctl's embedded %s model. You said: %q", r.Model, r.Last().Content)
	words := strings.SplitAfter(text, " ")
	return llmtest.Chunked(words...)
}
