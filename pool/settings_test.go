package pool_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestSettingsErrors: every bad setting is a *SettingsError naming its field.
func TestSettingsErrors(t *testing.T) {
	b := func() *breaker.Breaker {
		x, err := breaker.New(breaker.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	two := func() []pool.Member {
		return []pool.Member{{Name: "a/m", Weight: 1, Breaker: b()}, {Name: "b/m", Weight: 1, Breaker: b()}}
	}
	rows := []struct {
		name  string
		edit  func(s *pool.Settings)
		field string
		text  string
	}{
		{"fewer than two members", func(s *pool.Settings) { s.Members = s.Members[:1] }, "Members",
			"pool: Members must list at least 2 members (got 1 members)"},
		{"more than 64 members", func(s *pool.Settings) {
			for len(s.Members) <= pool.MaxMembers {
				s.Members = append(s.Members, pool.Member{Name: "x/" + time.Duration(len(s.Members)).String(), Weight: 1, Breaker: b()})
			}
		}, "Members", ""},
		{"a member named twice", func(s *pool.Settings) { s.Members[1].Name = "a/m" }, "Members[1].Name",
			`pool: Members[1].Name must not repeat Members[0] (got "a/m")`},
		{"a member with no name", func(s *pool.Settings) { s.Members[0].Name = "" }, "Members[0].Name", ""},
		{"a weight of NaN", func(s *pool.Settings) { s.Members[1].Weight = math.NaN() }, "Members[1].Weight",
			"pool: Members[1].Weight must be a finite number above 0 (got NaN)"},
		{"a weight of 0", func(s *pool.Settings) { s.Members[0].Weight = 0 }, "Members[0].Weight", ""},
		{"a negative weight", func(s *pool.Settings) { s.Members[0].Weight = -1 }, "Members[0].Weight", ""},
		{"an infinite weight", func(s *pool.Settings) { s.Members[0].Weight = math.Inf(1) }, "Members[0].Weight", ""},
		{"a nil breaker", func(s *pool.Settings) { s.Members[1].Breaker = nil }, "Members[1].Breaker", ""},
		{"a negative SlowCallAfter", func(s *pool.Settings) { s.Members[0].SlowCallAfter = -1 }, "Members[0].SlowCallAfter", ""},
		{"a slack below 1", func(s *pool.Settings) { s.AffinitySlack = 0.5 }, "AffinitySlack",
			"pool: AffinitySlack must be 0 or a finite number ≥ 1 (got 0.5)"},
		{"a slack of NaN", func(s *pool.Settings) { s.AffinitySlack = math.NaN() }, "AffinitySlack", ""},
		{"an infinite slack", func(s *pool.Settings) { s.AffinitySlack = math.Inf(1) }, "AffinitySlack", ""},
		{"an unknown affinity", func(s *pool.Settings) { s.Affinity = 7 }, "Affinity", ""},
		{"a negative penalty", func(s *pool.Settings) { s.Penalty = -1 }, "Penalty", ""},
		{"a negative attempt timeout", func(s *pool.Settings) { s.AttemptTimeout = -time.Second }, "AttemptTimeout", ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := pool.Settings{Members: two()}
			row.edit(&s)
			_, err := pool.New(s)
			var se *pool.SettingsError
			if !errors.As(err, &se) || !errors.Is(err, pool.ErrInvalidSettings) || se.Field != row.field {
				t.Fatalf("New = %v, want a *SettingsError for %s", err, row.field)
			}
			if row.text != "" && err.Error() != row.text {
				t.Fatalf("error text = %q, want %q", err.Error(), row.text)
			}
		})
	}
	if _, err := pool.New(pool.Settings{Members: two(), AffinitySlack: 1}); err != nil {
		t.Fatalf("a slack of 1: %v", err)
	}
}
