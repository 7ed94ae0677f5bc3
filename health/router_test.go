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
		{"the tool itself when allowed and not unhealthy", func(t *testing.T, f *fixture) {}, "search", ""},
		{"the first backup allowed and not unhealthy (tool open)", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
		}, "web", ""},
		{"skips a backup that is allowed but unhealthy by score", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.call(t, "web", 0, errDown) // one failure: score 0.49, still closed
		}, "cache", ""},
		{"failing that, the first candidate allowed (even unhealthy)", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.trip(t, "cache")
			f.call(t, "web", 0, errDown)
		}, "web", ""},
		{"an open tool whose probe is due is allowed but unhealthy", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.clock.Advance(20 * time.Second)
			f.trip(t, "web")
			f.trip(t, "cache")
			f.clock.Advance(10 * time.Second) // search's cooldown is over
		}, "search", ""},
		{"failing that, a soft refusal naming the candidates, with the soonest retry", func(t *testing.T, f *fixture) {
			f.trip(t, "search")
			f.clock.Advance(5 * time.Second)
			f.trip(t, "web") // may be probed at 35s
			f.clock.Advance(time.Second)
			f.trip(t, "cache")
			f.clock.Advance(7 * time.Second) // now 13s: search in 17s, web in 22s, cache in 23s
		}, "", `tool temporarily unavailable: circuit breaker open for "search" and its backups "web", "cache"; next probe in 17s`},
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
	if err == nil || !strings.HasPrefix(err.Error(), `tool temporarily unavailable: circuit breaker open for "solo"; next probe in 30s`) {
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
