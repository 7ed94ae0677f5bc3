package demo

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/llmtest"
)

var update = flag.Bool("update", false, "rewrite testdata/story.golden")

// playStory plays the scripted story on a fake clock and returns the summary
// and the output.
func playStory(t *testing.T, cfg Config) (*Summary, string) {
	t.Helper()
	var out bytes.Buffer
	cfg.Out = &out
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	return sum, out.String()
}

func TestStoryTransitions(t *testing.T) {
	sum, out := playStory(t, fakeConfig(newFakeClock()))
	if len(sum.Missing) != 0 {
		t.Errorf("missing: %q", sum.Missing)
	}
	if len(sum.Transitions) != len(expected) {
		t.Errorf("%d transitions, want %d: %v", len(sum.Transitions), len(expected), sum.Transitions)
	}
	for i, want := range expected {
		if i < len(sum.Transitions) && !sum.Transitions[i].same(want) {
			t.Errorf("transition %d = %v, want %v", i, sum.Transitions[i], want)
		}
	}
	// Every scripted transition is listed in the printed summary.
	_, tail, ok := strings.Cut(out, "\nTransitions\n")
	if !ok {
		t.Fatalf("no transitions in the summary:\n%s", out)
	}
	for _, want := range expected {
		if !strings.Contains(tail, want.String()) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if sum.Runs != 8 || sum.Answered != 8 || len(sum.Failures) != 0 {
		t.Errorf("runs %d, answered %d, failures %q", sum.Runs, sum.Answered, sum.Failures)
	}
	if sum.ModelState != fallback.Primary || sum.Trips != 1 {
		t.Errorf("model breaker ends %v after %d trips, want primary after 1", sum.ModelState, sum.Trips)
	}
}

func TestStoryOutput(t *testing.T) {
	_, out := playStory(t, fakeConfig(newFakeClock()))
	for _, want := range []string{
		// the ladder retries the dead primary, then the turns fail
		"gpt-primary   attempt 1  failed: HTTP 500 after 4 requests (waited",
		// rev 3: the rate-limited backup fails over at once, without waiting
		"gpt-backup-1  attempt 4  failed: HTTP 429, escalated (the server asked to wait 1s)",
		"gpt-backup-2  attempt 5  ok",
		"model breaker  fallback -> fallback  (gpt-backup-1 -> gpt-backup-2)  chain advance",
		// backup routing, then the soft refusal the model reads, and its answer
		`search {"query":"health score"} -> search_backup            ok (backup)`,
		`search {"query":"rate limits"} -> (none)                    refused: tool temporarily unavailable: circuit breaker open for tool 'search'`,
		`search "circuit breaker cooldown": failed 4 times, skipped; search "rate limits": unavailable (circuit breaker open), skipped; 7 * 6 = 42.`,
		// the probes
		"gpt-primary   attempt 1  ok  (probe)",
		`search {"query":"exponential backoff"} -> search            ok (probe)`,
		"wait      3s for the cooldowns (model breaker: 6s after its trip; search: 3s after the last failure)",
		"wait      1.5s for the cooldowns (search, search_backup: 3s after the last failure)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "\033") {
		t.Error("plain output has ANSI escapes")
	}
}

// TestStoryProbes: search is probed while its backup is healthy. The first probe
// fails and the call falls through to search_backup within the same call: one
// tool line, and the model reads only the backup's answer (it neither retries nor
// mentions the failure). The second probe closes search while search_backup is
// still closed.
func TestStoryProbes(t *testing.T) {
	_, out := playStory(t, fakeConfig(newFakeClock()))
	_, act4, _ := strings.Cut(out, "\n[4/7] ")
	act4, _, _ = strings.Cut(act4, "\n[5/7] ")
	// Causal order: the probe's transitions, then the call they routed to the
	// backup, with its arguments.
	want := []string{
		"tool breaker   search  open -> half-open",
		"tool breaker   search  half-open -> open",
		`tool      search {"query":"fallback chain"} -> search_backup          ok (backup: search's probe failed, the call fell through)`,
		`answer    search "fallback chain": "Fallback chain" (from a mirror of the index); 365 * 24 = 8760.`,
	}
	at := 0
	for _, w := range want {
		i := strings.Index(act4[at:], w)
		if i < 0 {
			t.Fatalf("act 4 lacks %q after offset %d:\n%s", w, at, act4)
		}
		at += i + len(w)
	}
	if n := strings.Count(act4, "tool      search {"); n != 1 {
		t.Errorf("act 4 has %d search calls, want 1 (the fall-through is part of the call):\n%s", n, act4)
	}
	if strings.Contains(act4, "index is not answering") {
		t.Errorf("the failed probe's error reached the output (and so the model):\n%s", act4)
	}
	_, act5, _ := strings.Cut(out, "\n[5/7] ")
	act5, _, _ = strings.Cut(act5, "\n[6/7] ")
	closed := strings.Index(act5, "tool breaker   search  half-open -> closed")
	probe := regexp.MustCompile(`tool      search \{"query":"[^"]*"\} -> search +ok \(probe\)`).FindStringIndex(act5)
	if closed < 0 || probe == nil || probe[0] < closed {
		t.Errorf("act 5 lacks search's transition to closed, then its probe call (in that order):\n%s", act5)
	}
	if _, lines, _ := strings.Cut(act5, "\n"); strings.Contains(lines, "search_backup") { // the title names it
		t.Errorf("search_backup was involved in act 5:\n%s", act5)
	}
}

// TestStoryMissingChecks: the scripted story reports a missing fall-through and a
// missing probe-while-the-backup-is-healthy.
func TestStoryMissingChecks(t *testing.T) {
	sum := &Summary{Tools: []ToolRow{{Tool: toolSearch, Refusals: 1}}}
	closeSearch := []Transition{
		{Breaker: toolSearch, From: "closed", To: "open"},
		{Breaker: toolSearch, From: "open", To: "half-open"},
		{Breaker: toolSearch, From: "half-open", To: "closed"},
	}
	sum.Transitions = closeSearch
	if got := missing(sum, closeSearch, 1, 1); len(got) != 0 {
		t.Errorf("complete story: missing %q", got)
	}
	got := missing(sum, closeSearch, 1, 0)
	if len(got) != 1 || got[0] != "a failed probe of search that fell through to search_backup" {
		t.Errorf("no fall-through: missing %q", got)
	}
	sum.Transitions = append([]Transition{{Breaker: toolSearchBack, From: "closed", To: "open"}}, closeSearch...)
	got = missing(sum, closeSearch, 1, 1)
	if len(got) != 1 || got[0] != "search probed and closed while search_backup was closed" {
		t.Errorf("backup open at the probe: missing %q", got)
	}
}

func TestStorySummaryTables(t *testing.T) {
	sum, _ := playStory(t, fakeConfig(newFakeClock()))
	wantModels := []ModelRow{
		{Model: modelPrimary, Role: "primary", Served: 25, Failed: 3, Requests: 37, Probes: 2, Now: "active"},
		{Model: modelBackup1, Role: "backup 1", Served: 0, Failed: 2, Requests: 2, Now: "standby"},
		{Model: modelBackup2, Role: "backup 2", Served: 9, Failed: 0, Requests: 9, Now: "standby"},
	}
	if len(sum.Models) != len(wantModels) {
		t.Fatalf("models %+v", sum.Models)
	}
	for i, w := range wantModels {
		if sum.Models[i] != w {
			t.Errorf("model row %d = %+v, want %+v", i, sum.Models[i], w)
		}
	}
	wantTools := []ToolRow{
		// search: 6 successes, 7 failures (3 tripped it, 1 failed probe, 3 tripped it
		// again); 5 calls sent to search_backup, one of them the fall-through.
		{Tool: toolSearch, Calls: 13, OK: 6, Failures: 7, Refusals: 1, Backup: 5, State: breaker.Closed, Status: health.Unhealthy},
		{Tool: toolSearchBack, Calls: 5, OK: 2, Failures: 3, State: breaker.Open, Status: health.Unhealthy},
		{Tool: toolCalculator, Calls: 8, OK: 8, State: breaker.Closed, Status: health.Healthy},
	}
	if len(sum.Tools) != len(wantTools) {
		t.Fatalf("tools %+v", sum.Tools)
	}
	for i, w := range wantTools {
		if sum.Tools[i] != w {
			t.Errorf("tool row %d = %+v, want %+v", i, sum.Tools[i], w)
		}
	}
}

// TestStoryGolden pins the whole plain output (go test -update rewrites it).
func TestStoryGolden(t *testing.T) {
	_, out := playStory(t, fakeConfig(newFakeClock()))
	path := filepath.Join("testdata", "story.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("output differs from %s (go test -update to accept):\n%s", path, out)
	}
}

// With a clock that never moves, the cooldowns never pass: the story cannot
// recover, and Run says what is missing.
func TestStoryIncomplete(t *testing.T) {
	c := newFakeClock()
	cfg := fakeConfig(c)
	cfg.Wait = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	var out bytes.Buffer
	cfg.Out = &out
	sum, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err = %v, want ErrIncomplete", err)
	}
	var want []string
	for _, t := range expected[3:] {
		want = append(want, t.String())
	}
	want = append(want, "a failed probe of search that fell through to search_backup",
		"search probed and closed while search_backup was closed")
	if strings.Join(sum.Missing, "\n") != strings.Join(want, "\n") {
		t.Errorf("missing %q, want %q", sum.Missing, want)
	}
	if !strings.Contains(out.String(), "The story did not play out as scripted; missing:") {
		t.Errorf("output does not say what is missing:\n%s", out.String())
	}
}

func TestColor(t *testing.T) {
	cfg := fakeConfig(newFakeClock())
	cfg.Color = true
	_, out := playStory(t, cfg)
	for _, want := range []string{bold + cyan + "[1/7]", red + "failed: HTTP 500", bold + magenta + "model breaker" + reset,
		bold + red + "closed -> open" + reset, green + "ok" + reset} {
		if !strings.Contains(out, want) {
			t.Errorf("coloured output lacks %q", want)
		}
	}
}

func TestSpinner(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	v := newView(&out, false, true, c.Now)
	stop := v.startSpinner()
	v.waiting(3*time.Second, "next run in")
	v.mu.Lock()
	v.drawSpinner()
	v.mu.Unlock()
	v.runStart(1, "hi")
	stop()
	got := out.String()
	if !strings.HasPrefix(got, "\r\033[K"+spinFrames[0]+" next run in: 3.0s\r\033[K") {
		t.Errorf("spinner line not drawn, then cleared before the next line: %q", got)
	}
	if !strings.Contains(got, "run 1     user: hi\n") {
		t.Errorf("no run line: %q", got)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newFakeClock()
	cfg := fakeConfig(c)
	pauses := 0
	cfg.Wait = func(ctx context.Context, d time.Duration) error {
		if pauses++; pauses == 3 {
			cancel()
		}
		return c.Wait(ctx, d)
	}
	var out bytes.Buffer
	cfg.Out = &out
	sum, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if sum == nil || sum.Runs != 3 || sum.Answered != 3 || len(sum.Missing) == 0 {
		t.Fatalf("summary after cancel: %+v", sum)
	}
	if !strings.Contains(out.String(), "Summary (3 runs, 3 answered") {
		t.Errorf("no summary of the runs played:\n%s", out.String())
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative cooldown", Config{Timing: Timing{ModelCooldown: -1}}, "Timing.ModelCooldown must not be negative"},
		{"negative beat", Config{Timing: Timing{Beat: -time.Second}}, "Timing.Beat"},
		{"max below base", Config{Timing: Timing{RetryBase: time.Second, RetryMax: time.Millisecond}}, "RetryMax"},
		{"negative request timeout", Config{RequestTimeout: -time.Second}, "RequestTimeout"},
		{"bad scheme", Config{BaseURL: "ftp://x", Model: "m"}, "BaseURL must start with http"},
		{"no model", Config{BaseURL: "http://127.0.0.1:1/v1"}, "Model is required"},
		{"blank fallback", Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Fallback: []string{"a", " "}}, "Fallback[1] is blank"},
		{"model in chain", Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Fallback: []string{"m"}}, "Models"},
	}
	for _, tt := range tests {
		sum, err := Run(context.Background(), tt.cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) || sum != nil {
			t.Errorf("%s: Run = %v, %v; want ErrConfig mentioning %q", tt.name, sum, err, tt.want)
		}
	}
}

// The real-server mode runs the same prompts and tools against a given base
// URL: here a llmtest server answering like the scripted models, whose primary
// is down, so the breaker trips to the chain without any scripted fault of ours.
func TestBaseURL(t *testing.T) {
	srv := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		if r.Model == "live-primary" {
			return llmtest.Error(http.StatusServiceUnavailable)
		}
		return answer(r.Messages, plans())
	})
	defer srv.Close()
	c := newFakeClock()
	var out bytes.Buffer
	sum, err := Run(context.Background(), Config{Out: &out, Now: c.Now, Timing: fastTiming,
		BaseURL: srv.BaseURL(), APIKey: "sekrit", Model: "live-primary", Fallback: []string{"live-backup", "live-spare"}})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if n := srv.Count("live-primary"); n != 12 {
		t.Errorf("%d requests to the primary, want 12 (3 failed turns of 4 requests)", n)
	}
	if srv.Count("live-backup") == 0 || srv.Count("live-spare") != 0 || srv.Count(modelPrimary) != 0 {
		t.Errorf("requests by model: %q", srv.Models())
	}
	for _, r := range srv.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer sekrit" {
			t.Fatalf("Authorization %q", got)
		}
	}
	want := Transition{Breaker: "model", From: "primary", To: "fallback", FromModel: "live-primary", ToModel: "live-backup"}
	if len(sum.Transitions) != 1 || !sum.Transitions[0].same(want) {
		t.Errorf("transitions %v, want only %v", sum.Transitions, want)
	}
	if sum.Runs != 8 || sum.Answered != 8 || len(sum.Missing) != 0 {
		t.Errorf("summary %+v", sum)
	}
	got := out.String()
	if !strings.Contains(got, srv.BaseURL()+" (no scripted faults)") || strings.Contains(got, "[1/7]") || strings.Contains(got, "wait ") {
		t.Errorf("real-server output names no base URL, or plays scripted acts:\n%s", got)
	}
}
