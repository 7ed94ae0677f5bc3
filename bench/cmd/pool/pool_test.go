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
// m3 down for 2 s of a 6 s load, loopctl only (built from this repository;
// a pool if it accepts pools:, else its one-entry model), in about 10 s
// once loopctl is built. It checks the harness's own measurements, which
// hold whatever loopctl does with the load: every request sent and
// answered, each reaching the members with their own keys, the members'
// sick marks inside the window only, and one line per goal printed.
func TestTinyRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts loopctl serve as a process (about 10 s)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go not in PATH: it builds loopctl (install Go 1.26: https://go.dev/dl/)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	repo, _ := filepath.Abs("../../..")
	bin, err := serve.Build(ctx, repo, t.TempDir(), raceBuild)
	if err != nil {
		t.Fatalf("%v\nhint: the harness needs the repository's loopctl: from %s, `go build ./cmd/loopctl` must work", err, repo)
	}
	o, err := parseFlags([]string{"-scenarios", "down", "-targets", "loopctl", "-duration", "6s", "-sick-from", "1s", "-sick-to", "3s",
		"-client-timeout", "10s", "-loopctl", bin})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRun()
	var out bytes.Buffer
	rs, err := run(runCtx, o, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	checkTiny(t, &rs[0])
	if n := strings.Count(out.String(), "| m3 down (500) |") + strings.Count(out.String(), "| "+downBack+" |"); n != len(every)+len(rs[0].sc.goals) {
		t.Errorf("%d goal lines, want %d", n, len(every)+len(rs[0].sc.goals))
	}
	if !strings.Contains(out.String(), "summary: loopctl met") {
		t.Error("the summary line is missing")
	}
}

// checkTiny checks the tiny run's measurements.
func checkTiny(t *testing.T, r *result) {
	t.Helper()
	if len(r.recs) != 6*20 {
		t.Errorf("%d requests planned, want 120", len(r.recs))
	}
	ids := map[string]bool{}
	for i, arr := range r.arr {
		for _, a := range arr {
			if !a.keyOK {
				t.Errorf("m%d received %s without its key", i+1, a.id)
			}
			if a.sick != (i == sickMember && a.at >= r.sched.from && a.at < r.sched.to) {
				t.Errorf("m%d: %s at %v marked sick %v (window %v..%v)", i+1, a.id, a.at, a.sick, r.sched.from, r.sched.to)
			}
			if a.id != "" && a.status == 200 {
				ids[a.id] = true
			}
		}
	}
	for _, rec := range r.recs {
		if !rec.sent || !rec.ok || rec.served < 0 {
			t.Errorf("%s: sent %v, ok %v (%s), served by %d", rec.id, rec.sent, rec.ok, rec.why, rec.served)
		} else if !ids[rec.id] {
			t.Errorf("%s: answered, but no member logged a 200 for it", rec.id)
		}
	}
}
