package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/outage"
)

// TestSimulateBrownout: --scenario brownout prints the failing and the slow
// brownout, each consecutive-only against the rate window, then the long
// brownout without and with the backoff of repeated trips, as
// outage/testdata/brownout-*.golden; the flags the brownout shares apply,
// --recovery-backoff to the long brownout.
func TestSimulateBrownout(t *testing.T) {
	code, out, errs := run(t, "simulate", "--scenario", "brownout")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var want []string
	for _, k := range []string{"failing", "slow", "backoff"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "outage", "testdata", "brownout-"+k+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(b))
	}
	if out != strings.Join(want, "\n") {
		t.Errorf("loopctl simulate --scenario brownout:\n%s\nwant the goldens:\n%s", out, strings.Join(want, "\n"))
	}
	code, out, errs = run(t, "simulate", "--scenario=brownout", "--seed", "4", "--callers", "30", "--cooldown", "10s")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	s := outage.DefaultBrownout(outage.Failing)
	s.Seed, s.Callers, s.Cooldown = 4, 30, 10e9
	res, err := outage.SimulateBrownout(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	res.WriteTable(&first)
	if !strings.HasPrefix(out, first.String()+"\n") {
		t.Errorf("flags not applied:\n%s\nwant first\n%s", out, first.String())
	}
	code, out, errs = run(t, "simulate", "--scenario", "brownout", "--recovery-backoff", "3", "--seed", "2")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	long := outage.LongBrownout()
	long.RecoveryBackoff, long.Seed = 3, 2
	backoff, err := outage.SimulateBackoff(context.Background(), long)
	if err != nil {
		t.Fatal(err)
	}
	var last bytes.Buffer
	backoff.WriteTable(&last)
	if !strings.HasSuffix(out, "\n"+last.String()) {
		t.Errorf("--recovery-backoff not applied:\n%s\nwant last\n%s", out, last.String())
	}
}

func TestSimulateBrownoutBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--outage", "1m"}, "--outage does not apply to --scenario brownout"},
		{[]string{"--svg", "x.svg"}, "--svg does not apply to --scenario brownout"},
		{[]string{"--callers", "0"}, "--callers must be at least 1"},
		{[]string{"--recovery-backoff", "1"}, "--recovery-backoff must be above 1"},
		{[]string{"--recovery-backoff", "0.5"}, "--recovery-backoff must be 0 (off) or a finite factor ≥ 1 (got 0.5)"},
	} {
		code, out, errs := run(t, append([]string{"simulate", "--scenario", "brownout"}, tt.args...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, out, errs, ExitUsage, tt.want)
		}
	}
	_, out, _ := run(t, "simulate", "--help")
	if code, out, errs := run(t, "simulate", "--recovery-backoff", "2"); code != ExitUsage || out != "" ||
		!strings.Contains(errs, "--recovery-backoff does not apply to --scenario default") {
		t.Errorf("--recovery-backoff without the brownout: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, want := range []string{"default, short, flapping, brownout", "brownout  a partial outage", "--recovery-backoff"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate --help lacks %q", want)
		}
	}
}

// TestSimulateBrownoutDocs: docs/simulate.md shows both brownout tables as
// `loopctl simulate --scenario brownout` prints them.
func TestSimulateBrownoutDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"failing", "slow", "backoff"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "outage", "testdata", "brownout-"+k+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		_, table, _ := strings.Cut(string(b), "\n\n")
		if !strings.Contains(string(doc), "```\n"+table+"```\n") {
			t.Errorf("docs/simulate.md does not show the %s brownout's table:\n%s", k, table)
		}
	}
}
