package gateway

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReloadKeepsAnUnusedPool: a reload that drops the only model naming a
// pool succeeds (an unused pool is no error, GATEWAY §11.1) and logs the
// pool as a warning by key path.
func TestReloadKeepsAnUnusedPool(t *testing.T) {
	const head = `
upstreams: [{name: a, base_url: 'http://127.0.0.1:1/v1'}, {name: b, base_url: 'http://127.0.0.1:2/v1'}]
pools: [{name: spare, members: [a/m, b/m]}]
models:
  - {name: m, primary: a/n}
`
	file := filepath.Join(t.TempDir(), "loopctl.yaml")
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(head + "  - {name: p, primary: pool/spare}\n")
	cfg, err := LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	if ws := cfg.Warnings(); len(ws) != 0 {
		t.Fatalf("warnings of a config whose pool is used: %v", ws)
	}
	var logs bytes.Buffer
	g, err := New(cfg, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	live := NewLive(g, file, nil)
	t.Cleanup(func() { live.Gateway().Close(); g.Close() })
	write(head)
	rep, err := live.Reload()
	if err != nil {
		t.Fatalf("Reload = %v, want success: an unused pool is a warning", err)
	}
	if len(rep.Dropped) != 1 || rep.Dropped[0] != "p" {
		t.Errorf("Dropped = %v, want [p]", rep.Dropped)
	}
	want := `"msg":"config warning","file":"` + file + `","path":"pools[0]","warning":"pool \"spare\" is named by no model: its members take no traffic"`
	if !strings.Contains(logs.String(), want) {
		t.Fatalf("log lacks %s:\n%s", want, logs.String())
	}
}
