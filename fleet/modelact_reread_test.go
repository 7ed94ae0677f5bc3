package fleet

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// deafen takes every breaker of s out of its message routing, as a
// subscription not yet made (at start) or broken (a reconnect) does: the
// change messages published meanwhile never reach them. It returns them
// and the function that puts them back.
func deafen(s *Store) ([]member, func()) {
	s.mu.Lock()
	saved := s.members
	s.members = map[string]member{}
	s.mu.Unlock()
	ms := make([]member, 0, len(saved))
	for _, m := range saved {
		ms = append(ms, m)
	}
	return ms, func() {
		s.mu.Lock()
		s.members = saved
		s.mu.Unlock()
	}
}

// breakerOf returns the one model breaker of s.
func breakerOf(t *testing.T, s *Store) *ModelBreaker {
	t.Helper()
	ms := s.snapshotMembers()
	if len(ms) != 1 {
		t.Fatalf("the Store has %d breakers, want 1", len(ms))
	}
	return ms[0].(*ModelBreaker)
}

// TestFleetActOfAReRead: a replica that missed an act's messages (they
// were published before its subscription, or while it reconnected) and
// learns of the act by re-reading the store, as the watcher does after
// every (re)subscription, reports the transition as the operator's act,
// with the reason and the end, exactly as the acting replica and the
// messages do; never a hold with no reason, nor a disable as a plain chain
// advance. A later change that is no act is not named after the act the
// store still keeps. The order is made, not raced: the second replica
// hears none of the step's messages before its re-read.
func TestFleetActOfAReRead(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms, ops, logs := actFleet(t, srv, &clock, "reread")
	s2 := ops[1].(modelBackend).s // the second replica's Store
	hold := time.UnixMicro(clock.Load() + 10*time.Minute.Microseconds())
	off := time.UnixMicro(clock.Load() + 5*time.Minute.Microseconds())
	steps := []struct {
		name string
		do   func() error
		want fallback.Transition
	}{
		{"hold", func() error { return ops[0].Operate("hold", "", "INC-42 (by oncall)", hold) },
			fallback.Transition{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b", Manual: "hold", Reason: "INC-42 (by oncall)", Until: hold}},
		{"disable with an end", func() error { return ops[0].Operate("disable", "b", "flaky (by oncall)", off) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "b", ToModel: "c", Manual: "disable", Reason: "flaky (by oncall)", Until: off}},
		{"enable", func() error { return ops[0].Operate("enable", "b", " (by oncall)", time.Time{}) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "c", ToModel: "b", Manual: "enable", Reason: " (by oncall)"}},
		{"a health check's disable", func() error { return ms[0].SetAvailable("b", false) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "b", ToModel: "c"}},
		{"reset", func() error { return ops[0].Operate("reset", "", " (by lead)", time.Time{}) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Primary, FromModel: "c", ToModel: "a", Manual: "reset", Reason: " (by lead)"}},
	}
	for i, st := range steps {
		deaf, hear := deafen(s2)
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for _, m := range deaf {
			if err := m.sync(t.Context()); err != nil {
				t.Fatalf("%s: the re-read: %v", st.name, err)
			}
		}
		hear()
		for r, l := range logs {
			eventually(t, 2*time.Second, "replica "+strconv.Itoa(r+1)+" reports "+st.name, func() bool { return l.len() >= i+1 })
			if n := l.len(); n != i+1 {
				t.Fatalf("%s: replica %d reports %d transitions, want %d", st.name, r+1, n, i+1)
			}
			got, _ := l.last()
			got.At = time.Time{}
			if got != st.want {
				t.Errorf("%s: replica %d reports %+v, want %+v", st.name, r+1, got, st.want)
			}
		}
	}
}

// TestFleetActOfAReply: a replica whose own call's reply shows it another
// process's act before the act's messages reach it (a turn begun just
// before the hold and failed after it) reports the hold with its reason and end from that
// reply; the messages that come later make no second transition. The
// order is made: the second replica hears the messages only after its
// call.
func TestFleetActOfAReply(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms, ops, logs := actFleet(t, srv, &clock, "reply")
	s2 := ops[1].(modelBackend).s
	hold := time.UnixMicro(clock.Load() + 10*time.Minute.Microseconds())
	want := fallback.Transition{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b",
		Manual: "hold", Reason: "INC-42 (by oncall)", Until: hold}
	_, hear := deafen(s2)
	if err := ops[0].Operate("hold", "", "INC-42 (by oncall)", hold); err != nil {
		t.Fatal(err)
	}
	tk, err := ms[1].Begin() // in Primary: no round trip
	if err != nil {
		t.Fatal(err)
	}
	tk.Failure(fallback.Transient) // begun before the hold: stale; its reply is the first news of the hold
	hear()
	if err := ops[0].Operate("disable", "c", "", time.Time{}); err != nil {
		t.Fatal(err) // a later act whose messages come after the hold's
	}
	b1, b2 := breakerOf(t, ops[0].(modelBackend).s), breakerOf(t, s2)
	eventually(t, 2*time.Second, "replica 2 hears the disable", func() bool { return b2.mirror.Load().v == b1.mirror.Load().v })
	if n := logs[1].len(); n != 1 {
		t.Fatalf("replica 2 reports %d transitions, want 1", n)
	}
	got, _ := logs[1].last()
	got.At = time.Time{}
	if got != want {
		t.Errorf("replica 2 reports %+v, want %+v", got, want)
	}
}
