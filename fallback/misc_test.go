package fallback

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSettingsChainIsCopied(t *testing.T) {
	chain := []string{"b", "c"}
	h := newHarness(t, Settings{Primary: "a", Chain: chain})
	chain[0] = "x"
	h.trip()
	h.begin("b", false)
}

func TestSetAvailableErrors(t *testing.T) {
	h := newHarness(t, abc())
	for _, model := range []string{"a", "z", ""} {
		err := h.m.SetAvailable(model, false)
		if !errors.Is(err, ErrNotInChain) {
			t.Fatalf("SetAvailable(%q) = %v, want ErrNotInChain", model, err)
		}
	}
	if err := h.m.SetAvailable("a", true); !strings.Contains(err.Error(), `"a" is the primary`) {
		t.Fatalf("error text %q", err)
	}
	if err := h.m.SetAvailable("z", true); !strings.Contains(err.Error(), `"z" is not in the fallback chain`) {
		t.Fatalf("error text %q", err)
	}
}

func TestExhaustedErrorText(t *testing.T) {
	s := abc()
	s.MaxFailCount = 1
	h := newHarness(t, s)
	h.trip()
	h.fail(1, Transient, "b")
	h.fail(1, Transient, "c")
	h.clk.Advance(18 * time.Second)
	e := h.exhausted()
	want := `fallback: every model in the fallback chain has failed (FallbackExhausted): chain [b c]; primary "a" may be probed in 42s`
	if e.Error() != want {
		t.Fatalf("Error() = %q\nwant %q", e.Error(), want)
	}
	if !strings.HasPrefix(ErrExhausted.Error(), "fallback: every model in the fallback chain has failed") {
		t.Fatal(ErrExhausted)
	}
	e.Chain[0] = "x" // a copy
	if h.exhausted().Chain[0] != "b" {
		t.Fatal("ExhaustedError.Chain aliases the manager")
	}
}

func TestStringers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Primary.String(), "primary"},
		{Fallback.String(), "fallback"},
		{Recovering.String(), "recovering"},
		{State(7).String(), "State(7)"},
		{Transient.String(), "transient"},
		{RateLimit.String(), "rate-limit"},
		{Kind(-1).String(), "Kind(-1)"},
		{tr(Fallback, Fallback, "b", "", t0).String(), `fallback -> fallback ("b" -> "") at 2026-01-01T00:00:00Z`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
