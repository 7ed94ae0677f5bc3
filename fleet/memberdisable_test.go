package fleet

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestMemberDisablesAcrossProcesses (FLEET rev 4, GATEWAY §11.5): a member
// disabled through one process is disabled in another within one pub/sub
// message, with its reason, the admin key's name and its end; its key in
// the store expires with the TTL; the end comes on the store's clock for
// both at once; an enable through the other process ends it everywhere.
func TestMemberDisablesAcrossProcesses(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	fake := clock.Load
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	p1 := newFakeStore(t, srv, Options{Prefix: "md"}, fake).MemberDisables()
	p2 := newFakeStore(t, srv, Options{Prefix: "md"}, fake).MemberDisables()
	p2.Watch("a/x", "b/x")
	p1.Disable("a/x", now().Add(time.Hour), "INC-7 slow region", "ops key")
	until, reason, by, ok := p1.Disabled("a/x", now())
	if !ok || reason != "INC-7 slow region" || by != "ops key" || !until.Equal(now().Add(time.Hour)) {
		t.Fatalf("p1 right after its disable: %v %q %q %v", until, reason, by, ok)
	}
	eventually(t, time.Second, "p2 sees the disable", func() bool { _, _, _, ok := p2.Disabled("a/x", now()); return ok })
	if u, r, b, _ := p2.Disabled("a/x", now()); !u.Equal(until) || r != reason || b != by {
		t.Fatalf("p2 reads %v %q %q, want %v %q %q", u, r, b, until, reason, by)
	}
	if _, _, _, ok := p2.Disabled("b/x", now()); ok {
		t.Fatal("b/x disabled too")
	}
	if !p1.Any() || !p2.Any() {
		t.Fatalf("Any: p1 %v, p2 %v with a/x disabled", p1.Any(), p2.Any())
	}
	pttl, err := srv.Command("PTTL", "{md:mdis:a/x}")
	if ms, _ := strconv.Atoi(pttl); err != nil || ms <= 3_590_000 || ms > 3_600_000 {
		t.Fatalf("the disabled member's key: PTTL %q %v, want about 1h", pttl, err)
	}
	clock.Add(time.Hour.Microseconds() - 1)
	for i, d := range []*MemberDisables{p1, p2} {
		if _, _, _, ok := d.Disabled("a/x", now()); !ok {
			t.Fatalf("p%d: ended 1µs before its end", i+1)
		}
	}
	clock.Add(1)
	for i, d := range []*MemberDisables{p1, p2} {
		if _, _, _, ok := d.Disabled("a/x", now()); ok {
			t.Fatalf("p%d: still disabled at its end", i+1)
		}
		if d.Any() {
			t.Fatalf("p%d: Any after the only disable ended", i+1)
		}
	}
	p1.Disable("b/x", time.Time{}, "drain", "ops")
	eventually(t, time.Second, "p2 sees the disable until enabled", func() bool { _, _, _, ok := p2.Disabled("b/x", now()); return ok })
	if pttl, _ := srv.Command("PTTL", "{md:mdis:b/x}"); pttl != "-1" {
		t.Fatalf("a disable until enabled: PTTL %s, want -1 (no expiry)", pttl)
	}
	p2.Enable("b/x")
	eventually(t, time.Second, "p1 sees the enable", func() bool { _, _, _, ok := p1.Disabled("b/x", now()); return !ok })
}

// TestMemberDisablesReadAtStart: a process that starts while a member is
// disabled reads the disable when it watches the member (it survives a
// restart of every process); a store restarted empty reads as no disable.
func TestMemberDisablesReadAtStart(t *testing.T) {
	srv := redistest.Start(t)
	p1 := startStore(t, srv, Options{Prefix: "ms"}).MemberDisables()
	p1.Disable("a/x", time.Now().Add(time.Hour), "maintenance", "ops")
	late := startStore(t, srv, Options{Prefix: "ms"}).MemberDisables()
	if _, _, _, ok := late.Disabled("a/x", time.Now()); ok {
		t.Fatal("a member that is not watched reads as disabled")
	}
	late.Watch("a/x")
	until, reason, _, ok := late.Disabled("a/x", time.Now())
	if !ok || reason != "maintenance" || time.Until(until) < 59*time.Minute {
		t.Fatalf("a late process reads %v %q %v, want the disable for about 1h", until, reason, ok)
	}
	srv.Restart(false)
	eventually(t, 5*time.Second, "the empty store re-read", func() bool {
		_, _, _, ok := late.Disabled("a/x", time.Now())
		return !ok && late.s.Up()
	})
}

// TestMemberDisablesWhileTheStoreIsDown: a process whose store is down
// applies its own disable to its mirror (the member is out there at
// once); when the store answers again the store's state wins.
func TestMemberDisablesWhileTheStoreIsDown(t *testing.T) {
	srv := redistest.Start(t)
	st := startStore(t, srv, Options{Prefix: "mf", StoreTimeout: 200 * time.Millisecond, RetryInterval: 20 * time.Millisecond})
	d := st.MemberDisables()
	d.Watch("a/x")
	srv.Kill()
	eventually(t, 2*time.Second, "the store is down", func() bool { return !st.Up() })
	d.Disable("a/x", time.Now().Add(time.Hour), "local", "ops")
	if _, reason, _, ok := d.Disabled("a/x", time.Now()); !ok || reason != "local" {
		t.Fatalf("a disable while the store is down: %q %v, want it in force locally", reason, ok)
	}
	srv.Restart(false)
	eventually(t, 5*time.Second, "the store's state (no disable) wins", func() bool {
		_, _, _, ok := d.Disabled("a/x", time.Now())
		return st.Up() && !ok
	})
}

// TestMemberOffOrder: a mirror keeps the newest write, whatever order the
// replies and messages reach it in.
func TestMemberOffOrder(t *testing.T) {
	m := &memberOff{on: new(atomic.Int32)}
	m.st.Store(&offState{})
	steps := []struct {
		msg    string
		wantOn bool
	}{
		{"d 10 0 3 opsa", true},
		{"e 9", true}, // older than the disable: ignored
		{"e 11", false},
		{"d 10 0 3 opsb", false}, // a late reply of the first disable
		{"d 12 99 0 r", true},
	}
	for i, s := range steps {
		m.onMessage(s.msg)
		if got := m.st.Load().on; got != s.wantOn || (m.on.Load() == 1) != s.wantOn {
			t.Fatalf("step %d (%s): on %v (count %d), want %v", i, s.msg, got, m.on.Load(), s.wantOn)
		}
	}
	if st := m.st.Load(); st.v != 12 || st.until != 99 || st.by != "" || st.reason != "r" {
		t.Fatalf("final %+v", st)
	}
}

// TestParseOff: the change messages, and what is not one.
func TestParseOff(t *testing.T) {
	tests := []struct {
		in   string
		want *offState
	}{
		{"e 5", &offState{v: 5}},
		{"d 5 77 3 opsINC 42", &offState{v: 5, on: true, until: 77, by: "ops", reason: "INC 42"}},
		{"d 5 0 7 ops keyreason", &offState{v: 5, on: true, by: "ops key", reason: "reason"}},
		{"d 5 0 0 ", &offState{v: 5, on: true}},
		{"d 5 0 4 ops", nil},
		{"d 5 0 -1 x", nil},
		{"d 5 x 0 r", nil},
		{"d 5 0", nil},
		{"x 5", nil},
		{"e", nil},
		{"e x", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got, ok := parseOff(tt.in)
		if ok != (tt.want != nil) || ok && *got != *tt.want {
			t.Errorf("parseOff(%q) = %+v, %v; want %+v", tt.in, got, ok, tt.want)
		}
	}
}

// FuzzParseOff: a message parses or is refused, never panics, and a
// disable's by and reason come back as written.
func FuzzParseOff(f *testing.F) {
	f.Add("d 5 77 3 opsINC 42")
	f.Add("e 1")
	f.Add("d 1 2 99 x")
	f.Fuzz(func(t *testing.T, s string) {
		st, ok := parseOff(s)
		if !ok {
			return
		}
		if st.on {
			msg := "d " + strconv.FormatInt(st.v, 10) + " " + strconv.FormatInt(st.until, 10) + " " +
				strconv.Itoa(len(st.by)) + " " + st.by + st.reason
			back, ok := parseOff(msg)
			if !ok || *back != *st {
				t.Fatalf("%q parsed to %+v, which writes %q, which parses to %+v", s, st, msg, back)
			}
		}
	})
}
