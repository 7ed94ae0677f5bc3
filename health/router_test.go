package health

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

func TestRouter(t *testing.T) {
	backups := map[string][]string{"search": {"web", "cache"}}
	tests := []struct {
		name    string
		setup   func(t *testing.T, f *fixture)
		want    string
		wantErr string
	}{
		{"the tool itself when its breaker would allow", func(t *testing.T, f *fixture) {}, "search", ""},
		{"the first backup whose breaker would allow (tool open)", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
		}, "web", ""},
		{"rev 2: a closed tool with a low score is not starved", func(t *testing.T, f *fixture) {
			f.call(t, "search", 0, errDown) // one failure: score 0.49, unhealthy, still closed
		}, "search", ""},
		{"rev 2: a closed backup with a low score is used", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.call(t, "web", 0, errDown)
		}, "web", ""},
		{"rev 2: a tripped tool whose probe is due resolves to itself while a backup is healthy", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.call(t, "web", 0, nil)
			f.clock.Advance(30 * time.Second) // search's cooldown is over
		}, "search", ""},
		{"rev 2: a tool whose probe is in flight is skipped", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.clock.Advance(30 * time.Second)
			if p, err := f.r.Allow("search"); err != nil || !p.IsProbe() {
				t.Fatalf("no probe: %v", err)
			}
		}, "web", ""},
		{"a tool whose probe lease lapsed and whose cooldown from the lease end passed is due again", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.clock.Advance(30 * time.Second)
			f.r.Allow("search")                              // the probe, never settled
			f.trip(t, "web")                                 // web too is open
			f.clock.Advance(10*time.Second + 30*time.Second) // lease end, then the cooldown
		}, "search", ""},
		{"failing that, a soft refusal naming the candidates, with the soonest retry", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.clock.Advance(5 * time.Second)
			f.trip(t, "web") // may be probed at 35s
			f.clock.Advance(time.Second)
			f.trip(t, "cache")
			f.clock.Advance(7 * time.Second) // now 13s: search in 17s, web in 22s, cache in 23s
		}, "", `tool temporarily unavailable: circuit breaker open for "search" and its backups "web", "cache"; retry in 17s`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			rt := NewRouter(f.r, backups)
			tc.setup(t, f)
			before := f.r.Summary()
			got, err := rt.Resolve("search")
			if !slices.Equal(before, f.r.Summary()) {
				t.Fatal("Resolve changed the registry")
			}
			if tc.wantErr != "" {
				var oe *breaker.OpenError
				var ue *UnavailableError
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, breaker.ErrOpen) ||
					!errors.As(err, &oe) || !errors.As(err, &ue) || oe.RetryIn != 17*time.Second || oe.Name != "search" {
					t.Fatalf("Resolve = %q, %v\nwant error %q", got, err, tc.wantErr)
				}
				return
			}
			if got != tc.want || err != nil {
				t.Fatalf("Resolve = %q, %v; want %q", got, err, tc.want)
			}
			if _, err := f.r.Allow(got); err != nil {
				t.Fatalf("the resolved tool is refused: %v", err)
			}
		})
	}
}

func TestRouterWithoutBackups(t *testing.T) {
	f := newFixture(t)
	rt := NewRouter(f.r, nil)
	f.trip(t, "solo")
	_, err := rt.Resolve("solo")
	if err == nil || !strings.HasPrefix(err.Error(), `tool temporarily unavailable: circuit breaker open for "solo"; retry in 30s`) {
		t.Fatalf("error %v", err)
	}
	if rt.Backups("solo") != nil {
		t.Fatal("backups of a tool without any")
	}
}

func TestRouterCopiesBackups(t *testing.T) {
	f := newFixture(t)
	m := map[string][]string{"a": {"b"}}
	rt := NewRouter(f.r, m)
	m["a"][0] = "changed"
	got := rt.Backups("a")
	got[0] = "changed too"
	if b := rt.Backups("a"); !slices.Equal(b, []string{"b"}) {
		t.Fatalf("backups %v", b)
	}
}
