package breaker

import (
	"testing"
	"time"
)

// countShared counts calls and publishes a Quiet word.
type countShared struct {
	nopShared
	q              *Quiet
	allows, settle *int
}

func (c countShared) Allow() (SharedPermit, error) {
	*c.allows++
	return SharedPermit{Gen: 7, Issued: -1}, nil
}
func (c countShared) Settle(SharedPermit, Outcome) { *c.settle++ }
func (c countShared) Quiet() *Quiet                { return c.q }

func TestQuietFastPath(t *testing.T) {
	var clock int64 = 5_000_000
	q := NewQuiet(NewSharedClock(func() int64 { return clock }), time.Microsecond)
	var allows, settles int
	br, err := New(Settings{Name: "q", Backend: nopBackend{countShared{q: q, allows: &allows, settle: &settles}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		quiet           bool
		gen             uint64
		wantGen         uint64
		wantAt          int64
		allows, settles int
	}{
		{"not quiet: the Shared decides", false, 3, 7, -1, 1, 1},
		{"quiet: granted in the published generation, issued on the clock", true, 3, 3, 5000, 0, 0},
		{"quiet again, newer generation", true, 9, 9, 5000, 0, 0},
	} {
		allows, settles = 0, 0
		q.Publish(tc.gen, tc.quiet)
		p, err := br.Allow()
		if err != nil || p.gen != tc.wantGen || p.at != tc.wantAt {
			t.Fatalf("%s: permit gen %d at %d, %v; want %d at %d", tc.name, p.gen, p.at, err, tc.wantGen, tc.wantAt)
		}
		p.Success()
		if allows != tc.allows || settles != tc.settles {
			t.Fatalf("%s: %d Allow and %d Settle calls, want %d and %d", tc.name, allows, settles, tc.allows, tc.settles)
		}
	}
	p, _ := br.Allow()
	p.Failure() // a failure always goes to the Shared
	q.Publish(1, false)
	p.Success() // and a success once the word is no longer quiet
	if settles != 2 {
		t.Fatalf("%d Settle calls, want 2", settles)
	}
}

func TestQuietAllocs(t *testing.T) {
	var n int
	q := NewQuiet(NewSharedClock(nil), time.Microsecond)
	q.Publish(1, true)
	br, _ := New(Settings{Backend: nopBackend{countShared{q: q, allows: &n, settle: &n}}})
	if a := testing.AllocsPerRun(1000, func() { p, _ := br.Allow(); p.Success() }); a != 0 {
		t.Fatalf("%v allocs", a)
	}
}

func TestSharedClockSet(t *testing.T) {
	c := NewSharedClock(nil)
	c.Set(1e18)
	if d := c.Now() - 1e18; d < 0 || d > int64(time.Second) {
		t.Fatalf("Now - Set = %d ns", d)
	}
}

// BenchmarkQuietSharedPath: the Backend seam's steady Closed gate and
// success through a published Quiet word.
func BenchmarkQuietSharedPath(b *testing.B) {
	var n int
	q := NewQuiet(NewSharedClock(nil), time.Microsecond)
	q.Publish(1, true)
	br, _ := New(Settings{Backend: nopBackend{countShared{q: q, allows: &n, settle: &n}}})
	b.ReportAllocs()
	for b.Loop() {
		p, _ := br.Allow()
		p.Success()
	}
}
