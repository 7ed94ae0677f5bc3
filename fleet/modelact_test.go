package fleet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// actLog records one replica's transitions.
type actLog struct {
	mu sync.Mutex
	ts []fallback.Transition
}

func (l *actLog) add(t fallback.Transition) {
	l.mu.Lock()
	l.ts = append(l.ts, t)
	l.mu.Unlock()
}

// last returns the latest transition, false if none.
func (l *actLog) last() (fallback.Transition, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ts) == 0 {
		return fallback.Transition{}, false
	}
	return l.ts[len(l.ts)-1], true
}

func (l *actLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ts)
}

// operable is what the gateway asserts on the Backend it keeps.
type operable interface {
	Operate(action, entry, reason string, until time.Time) error
}

// actFleet is two processes (two Stores, two clients) on srv sharing the
// model breaker name, on a virtual store clock, each Manager's transitions
// logged.
func actFleet(t *testing.T, srv *redistest.Server, clock *atomic.Int64, name string) ([]*fallback.Manager, []operable, []*actLog) {
	t.Helper()
	var (
		ms   []*fallback.Manager
		ops  []operable
		logs []*actLog
	)
	for range 2 {
		s := newFakeStore(t, srv, Options{Prefix: "act"}, clock.Load)
		l := &actLog{}
		b := s.ModelBackend(name)
		m, err := fallback.New(fallback.Settings{Primary: "a", Chain: []string{"b", "c"}, Backend: b, OnTransition: l.add})
		if err != nil {
			t.Fatal(err)
		}
		ms, ops, logs = append(ms, m), append(ops, b.(operable)), append(logs, l)
	}
	return ms, ops, logs
}

// actStep is one act of a test and the transition every replica must
// report for it (At aside).
type actStep struct {
	name string
	do   func() error
	want fallback.Transition
}

// runActs runs each step in turn and checks that every replica's log
// reports exactly one more transition, the step's.
func runActs(t *testing.T, logs []*actLog, steps []actStep) {
	t.Helper()
	for i, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for r, l := range logs {
			eventually(t, 2*time.Second, "replica "+strconv.Itoa(r+1)+" reports "+st.name, func() bool { return l.len() == i+1 })
			got, _ := l.last()
			got.At = time.Time{}
			if got != st.want {
				t.Errorf("%s: replica %d reports %+v, want %+v", st.name, r+1, got, st.want)
			}
		}
	}
}

// TestFleetActReachesEveryReplica: a hold, a release, a disable with an
// end, an enable and a reset made through one process's store are
// delivered to the other process's Manager (through pub/sub, no call of its
// own) as the operator's act, with the act, the reason carrying the admin
// key's name and the end the operator set, exactly as the acting process
// reports it; never as a failure.
func TestFleetActReachesEveryReplica(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms, ops, logs := actFleet(t, srv, &clock, "acts")
	hold := time.UnixMicro(clock.Load() + 10*time.Minute.Microseconds())
	off := time.UnixMicro(clock.Load() + 5*time.Minute.Microseconds())
	released := time.UnixMicro(clock.Load() + 1_000_000)
	steps := []actStep{
		{"hold", func() error { return ops[0].Operate("hold", "", "INC-42 (by oncall)", hold) },
			fallback.Transition{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b", Manual: "hold", Reason: "INC-42 (by oncall)", Until: hold}},
		{"disable with an end", func() error { return ops[0].Operate("disable", "b", "flaky (by oncall)", off) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "b", ToModel: "c", Manual: "disable", Reason: "flaky (by oncall)", Until: off}},
		{"enable", func() error { return ops[0].Operate("enable", "b", " (by oncall)", time.Time{}) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "c", ToModel: "b", Manual: "enable", Reason: " (by oncall)"}},
		{"release, then a turn", func() error {
			clock.Store(released.UnixMicro())
			if err := ops[0].Operate("release", "", " (by lead)", time.Time{}); err != nil {
				return err
			}
			tk, err := ms[0].Begin() // the cooldown step: the hold has ended
			if err == nil {
				tk.Cancel()
			}
			return err
		}, fallback.Transition{From: fallback.Fallback, To: fallback.Recovering, FromModel: "b", ToModel: "a", Manual: "hold_end", Reason: "INC-42 (by oncall)", Until: released}},
		{"reset", func() error { return ops[0].Operate("reset", "", " (by lead)", time.Time{}) },
			fallback.Transition{From: fallback.Recovering, To: fallback.Primary, FromModel: "a", ToModel: "a", Manual: "reset", Reason: " (by lead)"}},
	}
	runActs(t, logs, steps)
}

// TestFleetHoldOfAnOlderProcess: a hold written without an act's message
// (a process that predates them) still reaches a replica as a hold, with
// its reason and end, and the state is read as before.
func TestFleetHoldOfAnOlderProcess(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms, _, logs := actFleet(t, srv, &clock, "older")
	s := newFakeStore(t, srv, Options{Prefix: "act"}, clock.Load)
	old, err := s.Model("older", fallback.Settings{Primary: "a", Chain: []string{"b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	ttl := time.Minute.Microseconds()
	if _, err := old.script(t.Context(), "hold", Turn{entry: -1}, -1, 0, true, extra{ttl: ttl, reason: "maint"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "replica 2 reports the hold", func() bool { return logs[1].len() == 1 })
	got, _ := logs[1].last()
	want := fallback.Transition{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b",
		Manual: "hold", Reason: "maint", Until: time.UnixMicro(clock.Load() + ttl), At: got.At}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if sn := ms[1].Snapshot(); sn.HoldReason != "maint" || !sn.HoldUntil.Equal(want.Until) {
		t.Errorf("snapshot %+v", sn)
	}
}

// TestOperateUnknownAct: an act Operate does not know is an *ActError
// matching ErrUnknownAct; an act's reason is kept to MaxActReason bytes on
// a character's boundary.
func TestOperateUnknownAct(t *testing.T) {
	srv := redistest.Start(t)
	s := startStore(t, srv, Options{})
	m, err := s.Model("unknown", fallback.Settings{Primary: "a", Chain: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Operate("drain", "", "", time.Time{})
	var ae *ActError
	if !errors.Is(err, ErrUnknownAct) || !errors.As(err, &ae) || ae.Action != "drain" {
		t.Fatalf("Operate(drain): %v", err)
	}
	if err := s.ModelBackend("nobody").(operable).Operate("reset", "", "", time.Time{}); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("Operate on a name with no Manager: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("a", MaxActReason+5), strings.Repeat("a", MaxActReason)},
		{strings.Repeat("a", MaxActReason-1) + "é", strings.Repeat("a", MaxActReason-1)},
	} {
		if got := bounded(tc.in); got != tc.want {
			t.Errorf("bounded(%d bytes) = %d bytes, want %d", len(tc.in), len(got), len(tc.want))
		}
	}
}

// FuzzAnnounce: an act's message parses without panicking, only a message
// that starts with "act " is taken as one, and what it keeps reads back the
// same once written again.
func FuzzAnnounce(f *testing.F) {
	f.Add("act 1800000000000000 2 hold 1800000600000000 INC-42 (by oncall)")
	f.Add("act 1 2 reset 0 ")
	f.Add("act 1 2")
	f.Add("1800000000000000 1 0 1800000000000000")
	f.Fuzz(func(t *testing.T, payload string) {
		m := &ModelBreaker{}
		if m.announce(payload) != strings.HasPrefix(payload, "act ") {
			t.Fatalf("announce(%q) misread the message's kind", payload)
		}
		p := m.pending
		if p == nil {
			return
		}
		if p.name == "" || strings.Contains(p.name, " ") || !utf8.ValidString(p.reason) {
			t.Fatalf("announce(%q) kept %+v", payload, *p)
		}
		again := &ModelBreaker{}
		again.announce(fmt.Sprintf("act %d %d %s %d %s", p.ep, p.v, p.name, p.until, p.reason))
		if again.pending == nil || *again.pending != *p {
			t.Fatalf("announce(%q) kept %+v; written again it reads %+v", payload, *p, again.pending)
		}
	})
}

// TestFleetDisableEndAndAutomation: a disable's end passing is reported on
// every replica as disable_end, with the disable's reason and end; an
// entry taken out and put back by SetAvailable (a health check's call, not
// an operator's) is no operator's act anywhere.
func TestFleetDisableEndAndAutomation(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms, ops, logs := actFleet(t, srv, &clock, "ends")
	hold := time.UnixMicro(clock.Load() + time.Hour.Microseconds())
	off := time.UnixMicro(clock.Load() + time.Minute.Microseconds())
	steps := []actStep{
		{"hold", func() error { return ops[0].Operate("hold", "", "INC-7", hold) },
			fallback.Transition{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b", Manual: "hold", Reason: "INC-7", Until: hold}},
		{"disable", func() error { return ops[0].Operate("disable", "b", "flaky (by oncall)", off) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "b", ToModel: "c", Manual: "disable", Reason: "flaky (by oncall)", Until: off}},
		{"the disable's end", func() error {
			clock.Store(off.UnixMicro())
			tk, err := ms[0].Begin() // any call ends it
			if err == nil {
				tk.Cancel()
			}
			return err
		}, fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "c", ToModel: "b", Manual: "disable_end", Reason: "flaky (by oncall)", Until: off}},
		{"a health check's disable", func() error { return ms[1].SetAvailable("b", false) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "b", ToModel: "c"}},
		{"a health check's enable", func() error { return ms[1].SetAvailable("b", true) },
			fallback.Transition{From: fallback.Fallback, To: fallback.Fallback, FromModel: "c", ToModel: "b"}},
	}
	runActs(t, logs, steps)
}
