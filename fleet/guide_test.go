package fleet_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestGuideDial runs the fleet guide's snippet (docs/fleet.md) against a
// real redis-server: the registry and the model breaker it builds are
// shared, so three failed turns through it put a second process's model
// breaker, built the same way on its own Store, in fallback too.
func TestGuideDial(t *testing.T) {
	srv := redistest.Start(t)
	redisURL := "redis://" + srv.Addr()
	run := func() error {
		store, err := fleet.Dial(redisURL, fleet.Options{Prefix: "myapp"}) // redisURL: e.g. "redis://127.0.0.1:6390"
		if err != nil {
			return err
		}
		defer store.Close()
		tools, err := health.NewRegistry(breaker.Settings{Backend: store.ToolBackend()}) // one shared breaker per tool
		if err != nil {
			return err
		}
		model, err := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"},
			Backend: store.ModelBackend("chat")})
		if err != nil {
			return err
		}

		if _, err := tools.Allow("search"); err != nil {
			t.Errorf("a fresh shared tool breaker refused: %v", err)
		}
		for range 3 { // the default trip threshold
			turn, err := model.Begin()
			if err != nil {
				return err
			}
			turn.Failure(fallback.Transient)
		}
		if st := model.State(); st != fallback.Fallback {
			t.Errorf("after 3 failed turns the model breaker is %v, want fallback", st)
		}
		return nil
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}

	other, err := fleet.Dial(redisURL, fleet.Options{Prefix: "myapp"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	m, err := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, Backend: other.ModelBackend("chat")})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); m.State() != fallback.Fallback; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the other process's model breaker is %v after 5s, want fallback (shared)", m.State())
		}
	}
	if got := m.ActiveModel(); got != "gpt-b" {
		t.Errorf("the other process routes to %q, want gpt-b", got)
	}
}
