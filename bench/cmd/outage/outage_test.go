package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// TestTinyRun runs the harness in a tiny mode so that CI proves it works:
// one outage kind (HTTP 500) for 3 s, loopctl only (built from this
// repository), and one probe, in about 15 s once loopctl is built. It checks
// that the outage was injected and measured: the primary received broken
// requests, the backup served during the outage, loopctl came back to the
// primary after the fix, and no client request failed.
func TestTinyRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts loopctl serve as a process (about 15 s)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go not in PATH: it builds loopctl (install Go 1.26: https://go.dev/dl/)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	repo, _ := filepath.Abs("../../..")
	bin, err := serve.Build(ctx, repo, t.TempDir(), raceBuild)
	if err != nil {
		t.Fatalf("%v\nhint: the harness needs the repository's loopctl: from %s, `go build ./cmd/loopctl` must work (go mod download fetches what is missing)", err, repo)
	}
	o, err := parseFlags([]string{"-kinds", "500", "-targets", "loopctl", "-probes", "500",
		"-before", "1s", "-outage", "3s", "-after", "7s", "-client-timeout", "10s", "-probe-timeout", "10s", "-hold", "10s",
		"-loopctl", bin})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRun()
	var out bytes.Buffer
	rep, err := run(runCtx, o, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(rep.rows) != 1 || len(rep.probes) != 1 {
		t.Fatalf("%d rows, %d probes; want 1, 1", len(rep.rows), len(rep.probes))
	}
	checkRow(t, rep.rows[0], o)
	p := rep.probes[0]
	if p.status < 500 || !p.shape || p.upstream < 2 || p.took > 5*time.Second {
		t.Errorf("probe: status %d, OpenAI shape %v, %d upstream requests, after %v; want a 5xx error in the OpenAI shape from both models within 5s", p.status, p.shape, p.upstream, p.took)
	}
	if !strings.Contains(out.String(), "| HTTP 500 | loopctl |") || !strings.Contains(out.String(), "summary: loopctl") {
		t.Error("the table's row or the summary line is missing")
	}
}

// checkRow checks the measured row of the tiny run.
func checkRow(t *testing.T, r row, o options) {
	t.Helper()
	st := measure(r, o)
	want := int((o.before + o.outage + o.after) / (time.Second / time.Duration(o.rate)))
	if st.sent < want*9/10 || st.in < 40 {
		t.Errorf("%d requests sent (%d in the outage); want about %d (60 in it)", st.sent, st.in, want)
	}
	if st.failures != 0 {
		t.Errorf("%d client failures (%s); want 0", st.failures, st.reasons)
	}
	if st.sick < tripThreshold*(maxRetries+1) || st.sick > st.bound {
		t.Errorf("%d requests reached the sick primary; want %d..%d", st.sick, tripThreshold*(maxRetries+1), st.bound)
	}
	if st.backupInOutage < 20 {
		t.Errorf("the backup served %d requests of the outage; want most of them", st.backupInOutage)
	}
	if !st.backOK || st.back > cooldown+2*time.Second {
		t.Errorf("back on the primary after %v (within the run: %v); want within %v", st.back, st.backOK, cooldown+2*time.Second)
	}
}
