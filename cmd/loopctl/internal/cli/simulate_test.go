package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/outage"
)

func TestSimulateDefaultsMatchGolden(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		golden string
	}{
		{nil, "simulate.golden"},
		{[]string{"--scenario", "short"}, "simulate-short.golden"},
		{[]string{"--outage", "30s"}, "simulate-short.golden"},
		{[]string{"--scenario=flapping"}, "simulate-flapping.golden"},
	} {
		code, out, errs := run(t, append([]string{"simulate"}, tt.args...)...)
		if code != ExitOK || errs != "" {
			t.Fatalf("%q: exit %d, stderr %q", tt.args, code, errs)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "outage", "testdata", tt.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("loopctl simulate %q differs from outage/testdata/%s:\n%s", tt.args, tt.golden, out)
		}
		if !strings.Contains(out, "winner") {
			t.Errorf("%q: no winner column", tt.args)
		}
	}
}

func TestSimulateFlagDefaults(t *testing.T) {
	s := outage.DefaultScenario()
	fs, name, svg := simulateFlagSet(&s)
	if err := fs.Parse(nil); err != nil || *svg != "" || *name != "default" || !reflect.DeepEqual(s, outage.DefaultScenario()) {
		t.Fatalf("flags change the defaults: %v %+v", err, s)
	}
	for field, name := range simulateFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("field %s maps to missing flag --%s", field, name)
		}
	}
	code, out, _ := run(t, "simulate", "--help")
	for _, want := range []string{"-callers", "(default 100)", "-timeout", "(default 2m0s)", "-svg FILE", "-seed uint", "(default 1)"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("simulate --help (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

func TestSimulateFlags(t *testing.T) {
	code, out, errs := run(t, "simulate", "--callers", "5", "--outage=1m", "--timeout=30s", "--seed", "9", "--retries", "0")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	s := outage.DefaultScenario()
	s.Callers, s.Outage, s.Timeout, s.Seed, s.Retries = 5, 60e9, 30e9, 9, 0
	res, err := outage.Simulate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	res.WriteTable(&want)
	if out != want.String() {
		t.Errorf("got\n%s\nwant\n%s", out, want.String())
	}
}

// TestSimulateScenarios: --scenario picks the scenario, and the other flags change it.
func TestSimulateScenarios(t *testing.T) {
	flapping := outage.Flapping()
	flapping.Seed, flapping.Callers = 3, 20
	tests := []struct {
		args []string
		want outage.Scenario
	}{
		{[]string{"--scenario=default"}, outage.DefaultScenario()},
		{[]string{"--scenario=short"}, outage.ShortOutage()},
		{[]string{"--outage=30s"}, outage.ShortOutage()},
		{[]string{"--scenario", "flapping"}, outage.Flapping()},
		{[]string{"--outage=3m", "--up=20s", "--relapse=2m"}, outage.Flapping()},
		{[]string{"--seed=3", "--scenario=flapping", "--callers=20"}, flapping},
	}
	for _, tt := range tests {
		code, out, errs := run(t, append([]string{"simulate"}, tt.args...)...)
		if code != ExitOK || errs != "" {
			t.Fatalf("%q: exit %d, stderr %q", tt.args, code, errs)
		}
		res, err := outage.Simulate(context.Background(), tt.want)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		res.WriteTable(&want)
		if out != want.String() {
			t.Errorf("%q: got\n%s\nwant\n%s", tt.args, out, want.String())
		}
	}
	_, out, _ := run(t, "simulate", "--help")
	for _, want := range []string{"-scenario string", "default, short, flapping", "flapping  down 3m, up 20s", "-relapse", "-up"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate --help lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--bogus"}, []string{"-bogus"}},
		{[]string{"--timeout=abc"}, []string{"-timeout", "abc"}},
		{[]string{"--callers", "many"}, []string{"-callers", "many"}},
		{[]string{"--callers=0"}, []string{"--callers must be at least 1 (got 0)"}},
		{[]string{"--callers=-4"}, []string{"--callers must be at least 1"}},
		{[]string{"--outage=-1s"}, []string{"--outage must not be negative"}},
		{[]string{"--outage=0s"}, []string{"--outage must be positive"}},
		{[]string{"--interval=0"}, []string{"--interval"}},
		{[]string{"--warmup=-2m"}, []string{"--warmup"}},
		{[]string{"--tail=-1ns"}, []string{"--tail"}},
		{[]string{"--latency=3m"}, []string{"--latency must be below"}},
		{[]string{"--failure-threshold=0"}, []string{"--failure-threshold"}},
		{[]string{"--cooldown=-30s"}, []string{"--cooldown"}},
		{[]string{"--probe-timeout=0s"}, []string{"--probe-timeout"}},
		{[]string{"--retries=-1"}, []string{"--retries"}},
		{[]string{"--retry-base=0s"}, []string{"--retry-base"}},
		{[]string{"--retry-max=-1s"}, []string{"--retry-max"}},
		{[]string{"--retry-base=20s"}, []string{"--retry-base must not exceed --retry-max 10s (got 20s)"}},
		{[]string{"--retry-max=50ms"}, []string{"--retry-base must not exceed --retry-max 50ms (got 100ms)"}},
		{[]string{"--up=20s"}, []string{"--up needs a --relapse"}},
		{[]string{"--relapse=1m"}, []string{"--up must be positive with a --relapse"}},
		{[]string{"--scenario=flapping", "--up=0s"}, []string{"--up must be positive with a --relapse"}},
		{[]string{"--scenario=bogus"}, []string{`--scenario "bogus" is not one of default, short, flapping`}},
		{[]string{"--bucket=1ns"}, []string{"--bucket"}},
		{[]string{"--seed=-1"}, []string{"-seed"}},
		{[]string{"extra"}, []string{`unexpected argument "extra"`}},
	}
	for _, tt := range tests {
		code, out, errs := run(t, append([]string{"simulate"}, tt.args...)...)
		if code != ExitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tt.args, code, out)
		}
		oneLine(t, errs, append(tt.want, "loopctl simulate:")...)
	}
}

func TestSimulateSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chart.svg")
	code, out, errs := run(t, "simulate", "--svg", path, "--callers=10")
	if code != ExitOK || errs != "" || !strings.Contains(out, "10 callers") {
		t.Fatalf("exit %d, stderr %q, stdout %q", code, errs, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed: %v", err)
		}
	}
	if !bytes.Contains(data, []byte(`id="breaker-band"`)) {
		t.Error("chart has no breaker band")
	}

	code, _, errs = run(t, "simulate", "--svg", filepath.Join(t.TempDir(), "missing", "chart.svg"))
	if code != ExitFailure {
		t.Errorf("unwritable --svg: exit %d, want %d", code, ExitFailure)
	}
	oneLine(t, errs, "chart.svg")
}

func TestSimulateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := Run(ctx, []string{"simulate"}, &out, &errb); code != ExitFailure || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	oneLine(t, errb.String(), "canceled")
}

// TestSimulateREADME: the simulate guide (docs/simulate.md) shows the default table
// and the five figures of every scenario exactly as `loopctl simulate` measures
// them, the winner in bold.
func TestSimulateREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "outage", "testdata", "simulate.golden"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(golden), "\n\n")
	if !strings.Contains(string(readme), "```\n"+table+"```\n") {
		t.Errorf("docs/simulate.md does not show the default table:\n%s", table)
	}
	five := []string{
		"attempts that reached the dead service",
		"caller time spent waiting (hang + backoff)",
		"calls failed",
		"from the fix to the first success",
		"from the fix to full traffic (no hang, no refusal)",
	}
	for _, name := range outage.ScenarioNames() {
		s, _ := outage.ScenarioNamed(name)
		res, err := outage.Simulate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]outage.Row{}
		for _, r := range res.Rows() {
			rows[r.Label] = r
		}
		line := "| " + name + " |"
		for _, label := range five {
			r := rows[label]
			a, b := r.Plain, r.Breaker
			switch r.Winner {
			case outage.PlainWins:
				a = "**" + a + "**"
			case outage.BreakerWins:
				b = "**" + b + "**"
			}
			line += " " + a + " / " + b + " |"
		}
		if !strings.Contains(string(readme), line+"\n") {
			t.Errorf("docs/simulate.md lacks the row\n%s", line)
		}
	}
}
