package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// watchConfigText is a config serving the given models from one upstream.
func watchConfigText(models ...string) string {
	s := "upstreams:\n  - {name: up, base_url: \"http://127.0.0.1:9/v1\"}\nmodels:\n"
	for _, m := range models {
		s += "  - {name: " + m + ", primary: up/" + m + "}\n"
	}
	return s
}

// waitModels polls GET /v1/models of p until it lists want (a reload
// through the file watch is a real file system event: bounded, 10 s).
func waitModels(t *testing.T, p *proc, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, body := p.request("GET", "/v1/models", "", ""); strings.Contains(body, `"`+want+`"`) {
			return
		}
		if time.Now().After(deadline) {
			_, body := p.request("GET", "/v1/models", "", "")
			t.Fatalf("no model %s within 10s of the change: %s\n%s", want, body, p.stderr)
		}
	}
}

// TestWatchConfig: serve --watch-config reloads when its file is
// rewritten in place, and when a Kubernetes ConfigMap update swaps the
// ..data symlink the file points through.
func TestWatchConfig(t *testing.T) {
	t.Run("a write", func(t *testing.T) {
		path := writeConfig(t, watchConfigText("a"))
		p := startLoopctl(t, nil, "serve", "--config", path, "--watch-config", "--listen", "127.0.0.1:0")
		if err := os.WriteFile(path, []byte(watchConfigText("a", "b")), 0o600); err != nil {
			t.Fatal(err)
		}
		waitModels(t, p, "b")
	})
	t.Run("a ConfigMap's symlink swap", func(t *testing.T) {
		dir := t.TempDir()
		version := func(name, text string) {
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, "loopctl.yaml"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Kubernetes' atomic writer: ..data -> ..<version>, the key -> ..data/key.
		version("..2026_12_06_01", watchConfigText("a"))
		if err := os.Symlink("..2026_12_06_01", filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", "loopctl.yaml"), filepath.Join(dir, "loopctl.yaml")); err != nil {
			t.Fatal(err)
		}
		p := startLoopctl(t, nil, "serve", "--config", filepath.Join(dir, "loopctl.yaml"), "--watch-config", "--listen", "127.0.0.1:0")
		version("..2026_12_06_02", watchConfigText("a", "c"))
		if err := os.Symlink("..2026_12_06_02", filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		_ = os.RemoveAll(filepath.Join(dir, "..2026_12_06_01"))
		waitModels(t, p, "c")
		if !strings.Contains(p.stderr.String(), "config file changed: reloading") {
			t.Errorf("no log line of the reload:\n%s", p.stderr)
		}
	})
}
