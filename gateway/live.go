package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Live is a gateway whose configuration file can be reloaded while it
// serves (docs/GATEWAY.md §9.3): it serves every request with the gateway
// of the last configuration that passed every check, and adds POST
// /admin/reload and GET /admin/config. It is safe for concurrent use.
type Live struct {
	cur     atomic.Pointer[Gateway]
	file    string
	prepare func(Config) (Config, error)
	mu      sync.Mutex // one reload at a time
	info    atomic.Pointer[ConfigInfo]
	ok, at  prometheus.Gauge
}

// ConfigInfo is what GET /admin/config says about the configuration in
// force.
type ConfigInfo struct {
	// File is the configuration file ("" when the gateway has none).
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the file as loaded.
	SHA256 string `json:"sha256"`
	// LoadedAt is when the configuration in force was loaded.
	LoadedAt time.Time `json:"loaded_at"`
	// LastReloadSuccessful says whether the last reload (or the start)
	// applied its configuration.
	LastReloadSuccessful bool `json:"last_reload_successful"`
	// LastReloadAt is when the last reload was tried (zero: none yet).
	LastReloadAt time.Time `json:"last_reload_at,omitzero"`
	// Problems are the last failed reload's problems, by key path.
	Problems []Problem `json:"problems,omitempty"`
}

// NewLive returns g (built from the configuration in file) as a Live
// gateway. A reload reads file, parses it ([ParseConfig]), passes the
// result through prepare (the caller's overrides and checks, e.g. flags;
// nil: none) and builds the next gateway with [Gateway.Reload]. It
// registers loopctl_config_last_reload_successful and
// loopctl_config_last_reload_success_timestamp_seconds with g's registry.
func NewLive(g *Gateway, file string, prepare func(Config) (Config, error)) *Live {
	l := &Live{file: file, prepare: prepare}
	l.cur.Store(g)
	l.ok = prometheus.NewGauge(prometheus.GaugeOpts{Name: "loopctl_config_last_reload_successful", Help: "Whether the last configuration reload attempt was successful (1) or not (0)."})
	l.at = prometheus.NewGauge(prometheus.GaugeOpts{Name: "loopctl_config_last_reload_success_timestamp_seconds", Help: "Unix time of the last successful configuration load or reload."})
	g.Registry().MustRegister(l.ok, l.at)
	now := time.Now()
	info := &ConfigInfo{File: file, LoadedAt: now, LastReloadSuccessful: true}
	if b, err := os.ReadFile(file); err == nil && file != "" {
		info.SHA256 = fileDigest(b)
	}
	l.info.Store(info)
	l.ok.Set(1)
	l.at.Set(float64(now.UnixNano()) / 1e9)
	return l
}

// Gateway returns the gateway serving new requests.
func (l *Live) Gateway() *Gateway { return l.cur.Load() }

// Info returns what GET /admin/config says.
func (l *Live) Info() ConfigInfo { return *l.info.Load() }

// Reload re-reads the configuration file and the keys it names and, when
// every check passes, serves new requests with it (see [Gateway.Reload]);
// otherwise the configuration in force keeps serving and the error (a
// [*ConfigError] when the file was read) names every problem by key path.
// Either way the outcome is one log line on the gateway's logger; a
// reload that succeeds logs each of the new config's [Config.Warnings] too.
func (l *Live) Reload() (Reloaded, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	rep, sum, err := l.reload()
	info := *l.info.Load()
	info.LastReloadAt, info.Problems = now, nil
	g := l.cur.Load()
	if err != nil {
		l.ok.Set(0)
		info.LastReloadSuccessful = false
		var ce *ConfigError
		if errors.As(err, &ce) {
			info.Problems = ce.Problems
		} else {
			info.Problems = []Problem{{Message: err.Error()}}
		}
		l.info.Store(&info)
		if g.log != nil {
			g.log.Error("config reload failed: the configuration in force keeps serving", "file", l.file, "problems", problemList(info.Problems))
		}
		return rep, err
	}
	l.ok.Set(1)
	l.at.Set(float64(now.UnixNano()) / 1e9)
	info.LastReloadSuccessful, info.SHA256, info.LoadedAt = true, sum, now
	l.info.Store(&info)
	if g = l.cur.Load(); g.log != nil {
		g.log.Info("config reloaded", "file", l.file, "sha256", sum, "kept", rep.Kept, "started", rep.Started, "dropped", rep.Dropped, "restart_needed", rep.Restart)
		for _, w := range g.cfg.Warnings() { // as serve prints them at start
			g.log.Warn("config warning", "file", l.file, "path", w.Path, "warning", w.Message)
		}
	}
	return rep, nil
}

// reload reads, checks and applies the file; it returns the file's digest.
func (l *Live) reload() (Reloaded, string, error) {
	if l.file == "" {
		return Reloaded{}, "", errors.New("this gateway has no configuration file to reload")
	}
	b, err := os.ReadFile(l.file)
	if err != nil {
		return Reloaded{}, "", err
	}
	cfg, err := ParseConfig(b)
	if err == nil && l.prepare != nil {
		cfg, err = l.prepare(cfg)
	}
	if err != nil {
		return Reloaded{}, "", err
	}
	next, rep, err := l.cur.Load().Reload(cfg)
	if err != nil {
		return rep, "", err
	}
	l.cur.Store(next)
	return rep, fileDigest(b), nil
}

// ServeHTTP serves POST /admin/reload and GET /admin/config, and every
// other request with the gateway in force.
func (l *Live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := l.cur.Load()
	switch r.URL.Path {
	case "/admin/reload":
		l.serveReload(g, w, r)
	case "/admin/config":
		if !g.admit(w, r) {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		if _, ok := g.adminAuthorized(w, r); ok {
			liveJSON(w, http.StatusOK, l.Info())
		}
	default:
		g.ServeHTTP(w, r)
	}
}

// serveReload serves POST /admin/reload: 200 with what the reload did, or
// 400 with every problem by key path (the configuration in force keeps
// serving).
func (l *Live) serveReload(g *Gateway, w http.ResponseWriter, r *http.Request) {
	if !g.admit(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, http.MethodPost)
		return
	}
	who, ok := g.adminAuthorized(w, r)
	if !ok {
		return
	}
	if g.log != nil {
		g.log.Info("admin", "action", "reload", "admin_key", who)
	}
	rep, err := l.Reload()
	if err != nil {
		info := l.Info()
		liveJSON(w, http.StatusBadRequest, struct {
			OK       bool      `json:"ok"`
			Error    string    `json:"error"`
			Problems []Problem `json:"problems"`
		}{false, "the configuration was not applied; the one in force keeps serving", info.Problems})
		return
	}
	for _, l := range []*[]string{&rep.Kept, &rep.Started, &rep.Dropped, &rep.Restart} {
		if *l == nil {
			*l = []string{}
		}
	}
	liveJSON(w, http.StatusOK, struct {
		OK bool `json:"ok"`
		Reloaded
	}{true, rep})
}

// MarshalJSON writes a problem as {"path": ..., "message": ...}.
func (p Problem) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	}{p.Path, p.Message})
}

func liveJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func problemList(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Error()
	}
	return out
}

func fileDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
