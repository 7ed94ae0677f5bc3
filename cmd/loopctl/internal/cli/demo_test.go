package cli

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/loopctl/loopctl-go/cmd/loopctl/internal/demo"
	"github.com/loopctl/loopctl-go/llmtest"
)

// fakeDemoClock plays the demo story on a clock whose waits advance it at once.
type fakeDemoClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeDemoClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeDemoClock) Wait(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return ctx.Err()
}

// fakeDemo makes `loopctl demo` play on a fake clock (wait advances it, or
// not) with tiny retry waits, for the rest of the test.
func fakeDemo(t *testing.T, advance bool) {
	t.Helper()
	old := demoBase
	t.Cleanup(func() { demoBase = old })
	c := &fakeDemoClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	wait := c.Wait
	if !advance {
		wait = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	}
	demoBase = func() demo.Config {
		return demo.Config{Now: c.Now, Wait: wait, Timing: demo.Timing{
			RetryBase: time.Millisecond, RetryMax: time.Millisecond, RateLimitWait: time.Millisecond}}
	}
}

func TestDemoHelp(t *testing.T) {
	code, out, errs := run(t, "demo", "--help")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"usage: loopctl demo [flags]", "no network and no API key",
		"-base-url string", "-model model", "-fallback models", "comma-separated",
		"-api-key key", "(default $OPENAI_API_KEY)", "-request-timeout duration", "(default 1m0s)", "-no-color"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo --help lacks %q:\n%s", want, out)
		}
	}
}

func TestDemoBadFlags(t *testing.T) {
	const base = "--base-url=http://127.0.0.1:9/v1"
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--bogus"}, []string{"-bogus"}},
		{[]string{"--request-timeout=soon"}, []string{"-request-timeout", "soon"}},
		{[]string{"--request-timeout=-1s"}, []string{"--request-timeout must not be negative (got -1s)"}},
		{[]string{"--no-color=maybe"}, []string{"-no-color"}},
		{[]string{"--model=gpt-4o"}, []string{"--model needs --base-url"}},
		{[]string{"--fallback=a,b"}, []string{"--fallback needs --base-url"}},
		{[]string{"--api-key=k"}, []string{"--api-key needs --base-url"}},
		{[]string{"--base-url=ftp://example.com", "--model=m"}, []string{"--base-url must be an http:// or https:// URL", "ftp://example.com"}},
		{[]string{"--base-url=localhost:8000", "--model=m"}, []string{"--base-url"}},
		{[]string{base}, []string{"--model is required with --base-url"}},
		{[]string{base, "--model= "}, []string{"--model is required"}},
		{[]string{base, "--model=m", "--fallback=a,,b"}, []string{"--fallback has an empty model name (entry 2"}},
		{[]string{base, "--model=m", "--fallback=m"}, []string{`--fallback names the primary model "m"`}},
		{[]string{base, "--model=m", "--fallback=a,b,a"}, []string{`--fallback names "a" twice`}},
		{[]string{"now"}, []string{`unexpected argument "now"`}},
	}
	for _, tt := range tests {
		code, out, errs := run(t, append([]string{"demo"}, tt.args...)...)
		if code != ExitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tt.args, code, out)
		}
		oneLine(t, errs, append(tt.want, "loopctl demo:")...)
	}
}

// The story, through the command, ends with every scripted transition in the
// summary, in plain text (the output is not a terminal).
func TestDemoStory(t *testing.T) {
	defer goleak.VerifyNone(t)
	fakeDemo(t, true)
	code, out, errs := run(t, "demo")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	_, summary, ok := strings.Cut(out, "\nTransitions\n")
	if !ok {
		t.Fatalf("no transitions list:\n%s", out)
	}
	for _, want := range []string{
		"model breaker  primary -> fallback  (gpt-primary -> gpt-backup-1)",
		"model breaker  fallback -> fallback  (gpt-backup-1 -> gpt-backup-2)",
		"model breaker  fallback -> recovering  (gpt-backup-2 -> gpt-primary)",
		"model breaker  recovering -> primary  (gpt-primary -> gpt-primary)",
		"tool breaker  search  closed -> open",
		"tool breaker  search  open -> half-open",
		"tool breaker  search  half-open -> closed",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	for _, want := range []string{"} -> search_backup", "refused: tool temporarily unavailable", "Summary (8 runs, 8 answered"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "\033") {
		t.Error("output to a non-terminal has ANSI escapes")
	}
}

// When the story does not play out (here: the clock never moves, so no
// cooldown ends), the command fails with one line saying what is missing.
func TestDemoIncomplete(t *testing.T) {
	fakeDemo(t, false)
	code, out, errs := run(t, "demo")
	if code != ExitFailure || !strings.Contains(out, "missing:") {
		t.Fatalf("exit %d, stdout:\n%s", code, out)
	}
	oneLine(t, errs, "loopctl demo:", "did not play out as scripted", "fallback -> recovering")
}

// --base-url, --model, --fallback and the key point the demo agent at another
// server: here a llmtest server answering with one tool call, then text.
func TestDemoBaseURL(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Text("done: " + r.Last().Content)
		}
		return llmtest.Calls(llmtest.Call("calculator", `{"expression":"6*7"}`))
	})
	defer srv.Close()

	t.Setenv("OPENAI_API_KEY", "from-env")
	code, out, errs := run(t, "demo", "--base-url", srv.BaseURL(), "--model", "real-model", "--fallback", "spare-1, spare-2")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	if n := srv.Count("real-model"); n != 16 || srv.Count("") != n {
		t.Errorf("requests by model %q; want 16 to real-model (8 runs of 2 turns)", srv.Models())
	}
	for _, r := range srv.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer from-env" {
			t.Fatalf("Authorization %q, want the key from OPENAI_API_KEY", got)
		}
	}
	for _, want := range []string{srv.BaseURL(), "real-model, fallback chain spare-1 -> spare-2", `done: {"expression":"6*7","result":42}`,
		"} -> calculator", "Summary (8 runs, 8 answered"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// --api-key wins over the environment.
	srv2 := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("hi")))
	defer srv2.Close()
	code, _, errs = run(t, "demo", "--base-url", srv2.BaseURL(), "--model", "m", "--api-key", "flag-key")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if r := srv2.Requests(); len(r) != 8 || r[0].Header.Get("Authorization") != "Bearer flag-key" {
		t.Errorf("%d requests, Authorization %q", len(r), r[0].Header.Get("Authorization"))
	}
}

// A server that fails every request: every run fails, and so does the command.
func TestDemoBaseURLFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Error(http.StatusNotFound)))
	defer srv.Close()
	code, out, errs := run(t, "demo", "--base-url", srv.BaseURL(), "--model", "nope")
	if code != ExitFailure || !strings.Contains(out, "run failed") {
		t.Fatalf("exit %d, stdout:\n%s", code, out)
	}
	oneLine(t, errs, "loopctl demo:", "8 of 8 runs failed")
	if n := srv.Count("nope"); n != 8 {
		t.Errorf("%d requests; a 404 is permanent: want one per run", n)
	}
}
