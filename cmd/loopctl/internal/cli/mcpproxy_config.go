package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/mcptool"
)

// proxyFile is the --config file of mcp-proxy: the "mcpServers" object of the
// usual MCP client configs, plus the proxy's own settings.
type proxyFile struct {
	MCPServers map[string]serverEntry `json:"mcpServers"`
	Timeout    string                 `json:"timeout"`
	Breaker    *breakerEntry          `json:"breaker"`
	Tools      map[string]toolEntry   `json:"tools"`
	Backups    map[string][]string    `json:"backups"`
	Prefix     bool                   `json:"prefix"`
	Listen     string                 `json:"listen"`
	Restart    *restartEntry          `json:"restart"`
}

type serverEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Type    string            `json:"type"` // "stdio", "http" or "streamable-http"; inferred when empty
	OAuth   *oauthEntry       `json:"oauth"`
}

type breakerEntry struct {
	FailureThreshold int    `json:"failureThreshold"`
	Cooldown         string `json:"cooldown"`
	ProbeTimeout     string `json:"probeTimeout"`
	// SEMANTICS §8.1, §8.2, under the spec's key names: the
	// failure-rate window and slow calls of every tool's breaker.
	FailureRate   float64 `json:"failure_rate"`
	RateWindow    string  `json:"rate_window"`
	RateMinCalls  int     `json:"rate_min_calls"`
	SlowCallAfter string  `json:"slow_call_after"`
	SlowCallRate  float64 `json:"slow_call_rate"`
}

type toolEntry struct {
	Timeout         string `json:"timeout"`
	CountToolErrors bool   `json:"countToolErrors"`
}

type restartEntry struct {
	Base string `json:"base"`
	Max  string `json:"max"`
}

// proxySettings is everything mcp-proxy runs with, from flags and the file.
type proxySettings struct {
	servers          []serverSpec
	timeout          time.Duration
	failureThreshold int
	cooldown         time.Duration
	probeTimeout     time.Duration
	rate             breaker.Settings // only the failure-rate window's fields (breaker.failure_rate, ...)
	restartBase      time.Duration
	restartMax       time.Duration
	tools            map[string]mcptool.ToolOptions
	backups          map[string][]string
	prefix           bool
	countToolErrors  bool
	listen           string
}

// serverSpec is one upstream: a command or a URL.
type serverSpec struct {
	name    string
	command []string
	env     []string
	dir     string
	url     string
	oauth   *oauthSpec // nil: no authorization
}

// loadProxyFile reads and checks a config file into s. Errors name the key.
func loadProxyFile(name string, s *proxySettings) error {
	f, err := readProxyFile(name)
	if err != nil {
		return err
	}
	k := configKeys{file: name}
	servers, err := k.servers(f.MCPServers)
	if err != nil {
		return err
	}
	s.servers = append(s.servers, servers...)
	if err := k.timings(f, s); err != nil {
		return err
	}
	if err := k.tools(f.Tools, s); err != nil {
		return err
	}
	s.backups = f.Backups
	s.prefix = s.prefix || f.Prefix
	if f.Listen != "" && s.listen == "" {
		s.listen = f.Listen
	}
	return nil
}

// readProxyFile decodes the config file name: one JSON object with no
// unknown keys and nothing after it.
func readProxyFile(name string) (proxyFile, error) {
	var f proxyFile
	data, err := os.ReadFile(name)
	if err != nil {
		return f, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return f, fmt.Errorf("%s: unexpected data after the config object", name)
	}
	return f, nil
}

// configKeys checks the values of a config file's keys; its errors name the
// file and the key.
type configKeys struct{ file string }

// bad is the error of a bad value at key.
func (k configKeys) bad(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", k.file, key, fmt.Sprintf(format, args...))
}

// dur parses the duration v of key into dst, leaving dst as it is when v is
// empty; a negative duration is refused.
func (k configKeys) dur(key, v string, dst *time.Duration) error {
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return k.bad(key, "%q is not a duration like \"30s\"", v)
	}
	*dst = d
	return nil
}

// servers returns the upstreams of "mcpServers", in name order: each a
// command (with its arguments and environment) or a URL.
func (k configKeys) servers(entries map[string]serverEntry) ([]serverSpec, error) {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	var specs []serverSpec
	for _, n := range names {
		e := entries[n]
		key := "mcpServers." + n
		spec := serverSpec{name: n, url: e.URL, dir: e.Cwd}
		switch {
		case e.Type != "" && e.Type != "stdio" && e.Type != "http" && e.Type != "streamable-http":
			return nil, k.bad(key+".type", "%q is not stdio, http or streamable-http", e.Type)
		case e.Command != "" && e.URL != "":
			return nil, k.bad(key, "has both command and url")
		case e.Command == "" && e.URL == "":
			return nil, k.bad(key, "needs a command or a url")
		case e.Command != "":
			spec.command = append([]string{e.Command}, e.Args...)
			for ek, ev := range e.Env {
				spec.env = append(spec.env, ek+"="+ev)
			}
			slices.Sort(spec.env)
		}
		var err error
		if spec.oauth, err = k.oauth(key+".oauth", n, e); err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// timings applies "timeout", "breaker" and "restart" to s.
func (k configKeys) timings(f proxyFile, s *proxySettings) error {
	if err := k.dur("timeout", f.Timeout, &s.timeout); err != nil {
		return err
	}
	if b := f.Breaker; b != nil {
		if b.FailureThreshold < 0 {
			return k.bad("breaker.failureThreshold", "must not be negative (got %d)", b.FailureThreshold)
		}
		if b.FailureThreshold > 0 {
			s.failureThreshold = b.FailureThreshold
		}
		if err := k.dur("breaker.cooldown", b.Cooldown, &s.cooldown); err != nil {
			return err
		}
		if err := k.dur("breaker.probeTimeout", b.ProbeTimeout, &s.probeTimeout); err != nil {
			return err
		}
		if err := k.rate(b, &s.rate); err != nil {
			return err
		}
	}
	if r := f.Restart; r != nil {
		if err := k.dur("restart.base", r.Base, &s.restartBase); err != nil {
			return err
		}
		if err := k.dur("restart.max", r.Max, &s.restartMax); err != nil {
			return err
		}
	}
	return nil
}

// rate applies the failure-rate window and slow-call keys of "breaker"
// (SEMANTICS §8.1, §8.2) to r: rates within [0, 1], nothing negative, and
// slow_call_after and slow_call_rate together.
func (k configKeys) rate(b *breakerEntry, r *breaker.Settings) error {
	switch {
	case b.FailureRate < 0 || b.FailureRate > 1:
		return k.bad("breaker.failure_rate", "must be within [0, 1] (got %v)", b.FailureRate)
	case b.SlowCallRate < 0 || b.SlowCallRate > 1:
		return k.bad("breaker.slow_call_rate", "must be within [0, 1] (got %v)", b.SlowCallRate)
	case b.RateMinCalls < 0:
		return k.bad("breaker.rate_min_calls", "must not be negative (got %d)", b.RateMinCalls)
	case b.SlowCallRate > 0 && b.SlowCallAfter == "":
		return k.bad("breaker.slow_call_rate", "needs breaker.slow_call_after")
	case b.SlowCallAfter != "" && b.SlowCallRate == 0:
		return k.bad("breaker.slow_call_after", "needs breaker.slow_call_rate")
	}
	r.FailureRate, r.SlowCallRate, r.RateMinCalls = b.FailureRate, b.SlowCallRate, b.RateMinCalls
	if err := k.dur("breaker.rate_window", b.RateWindow, &r.RateWindow); err != nil {
		return err
	}
	return k.dur("breaker.slow_call_after", b.SlowCallAfter, &r.SlowCallAfter)
}

// tools applies the per-tool options of "tools" (keys "server/tool") to s.
func (k configKeys) tools(entries map[string]toolEntry, s *proxySettings) error {
	for key, t := range entries {
		if !strings.Contains(key, "/") {
			return k.bad("tools."+key, `keys are "server/tool"`)
		}
		var o mcptool.ToolOptions
		if err := k.dur("tools."+key+".timeout", t.Timeout, &o.Timeout); err != nil {
			return err
		}
		o.CountToolErrors = t.CountToolErrors
		if s.tools == nil {
			s.tools = map[string]mcptool.ToolOptions{}
		}
		s.tools[key] = o
	}
	return nil
}

// parseUpstreamFlag parses "name=command arg..." (stdio) or "name=URL" (http).
func parseUpstreamFlag(flagName, v string) (serverSpec, error) {
	name, rest, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.TrimSpace(rest) == "" {
		return serverSpec{}, fmt.Errorf("--%s %q: want NAME=%s", flagName, v, map[string]string{"stdio": "COMMAND [ARG...]", "http": "URL"}[flagName])
	}
	if flagName == "http" {
		return serverSpec{name: name, url: strings.TrimSpace(rest)}, nil
	}
	return serverSpec{name: name, command: strings.Fields(rest)}, nil
}

// commandName derives an upstream's name from its command line: the first
// argument after the command that is not a flag, without scope, version or
// extension; for a script named index/main, the directory above its build
// directory. So `npx -y @modelcontextprotocol/server-everything@1.0` and
// `node .../server-everything/dist/index.js stdio` are both "server-everything".
func commandName(argv []string) string {
	pick := argv[0]
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			pick = a
			break
		}
	}
	base := path.Base(pick)
	if i := strings.LastIndex(base, "@"); i > 0 {
		base = base[:i]
	}
	if ext := path.Ext(base); ext != "" {
		base = strings.TrimSuffix(base, ext)
	}
	for dir := path.Dir(pick); (base == "index" || base == "main" || base == "dist" || base == "build" || base == "lib" || base == "src") && dir != "." && dir != "/"; dir = path.Dir(dir) {
		base = path.Base(dir)
	}
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		return "upstream"
	}
	return name
}

// checkServers rejects duplicate names.
func checkServers(specs []serverSpec) error {
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.name] {
			return fmt.Errorf("two upstreams are named %q; names must be unique", s.name)
		}
		seen[s.name] = true
	}
	if len(specs) == 0 {
		return errors.New("no upstream: give a command after --, or --stdio, --http or --config")
	}
	return nil
}
