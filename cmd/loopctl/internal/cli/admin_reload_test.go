package cli

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/gateway"
)

// TestAdminReload: `loopctl admin reload` asks the gateway to re-read its
// file: a good file answers what changed (exit 0), a bad one every
// problem by key path (exit 1) while the old one keeps serving.
func TestAdminReload(t *testing.T) {
	t.Setenv(AdminKeyEnv, "")
	cfgText := func(models string) string {
		return "upstreams:\n  - {name: up, base_url: \"http://127.0.0.1:9/v1\"}\nmodels:\n" + models
	}
	path := writeConfig(t, cfgText("  - {name: smart, primary: up/a}\n  - {name: old, primary: up/o}\n"))
	cfg, err := gateway.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live := gateway.NewLive(gw, path, nil)
	srv := httptest.NewServer(live)
	defer srv.Close()
	defer func() { live.Gateway().Close() }()

	if err := os.WriteFile(path, []byte(cfgText("  - {name: smart, primary: up/a}\n  - {name: fast, primary: up/f}\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "admin", "--url", srv.URL, "reload")
	t.Logf("loopctl admin reload:\n%s%s", out, errs)
	if code != ExitOK || !strings.Contains(out, "reloaded") || !strings.Contains(out, "kept (state, holds and disables carried over): smart") ||
		!strings.Contains(out, "started (new breakers, in primary): fast") || !strings.Contains(out, "dropped: old") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if err := os.WriteFile(path, []byte(cfgText("  - {name: smart, primary: nowhere/a}\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, "admin", "--url", srv.URL, "reload")
	t.Logf("loopctl admin reload of a bad file:\n%s%s", out, errs)
	if code != ExitFailure || !strings.Contains(errs, "not applied") || !strings.Contains(errs, "models[0].primary") || !strings.Contains(errs, "nowhere") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := run(t, "admin", "reload", "smart"); code != ExitUsage || !strings.Contains(errs, "reload takes no model") {
		t.Fatalf("reload smart: exit %d %s", code, errs)
	}
}
