package ratewindow

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

const s = int64(time.Second)

func TestRuleTrips(t *testing.T) {
	r := Rule{FailureRate: 0.3, SlowRate: 0.5, MinCalls: 10}
	tests := []struct {
		name string
		r    Rule
		c    Counts
		o    Outcome
		want bool
	}{
		{"failure rate reached exactly (3/10 against 0.3)", r, Counts{10, 3, 0}, Failure, true},
		{"failure rate above", r, Counts{10, 7, 0}, Failure, true},
		{"failure rate below", r, Counts{10, 2, 0}, Failure, false},
		{"failure rate reached, too few verdicts", r, Counts{9, 9, 0}, Failure, false},
		{"failure rate, min calls zero", Rule{FailureRate: 0.5}, Counts{1, 1, 0}, Failure, true},
		{"empty window never trips", Rule{FailureRate: 0.5}, Counts{}, Failure, false},
		{"failure rate off", Rule{SlowRate: 0.5, MinCalls: 1}, Counts{10, 10, 0}, Failure, false},
		{"slow counts do not trip after a failure", r, Counts{10, 0, 10}, Failure, false},
		{"slow rate reached exactly", r, Counts{20, 0, 10}, SlowSuccess, true},
		{"slow rate below", r, Counts{20, 0, 9}, SlowSuccess, false},
		{"slow rate, too few verdicts", r, Counts{9, 0, 9}, SlowSuccess, false},
		{"slow rate off", Rule{FailureRate: 0.1, MinCalls: 1}, Counts{10, 5, 10}, SlowSuccess, false},
		{"failures do not trip after a slow success", r, Counts{10, 10, 1}, SlowSuccess, false},
		{"a plain success never trips", r, Counts{10, 10, 10}, Success, false},
		{"rate 1 needs every verdict failed", Rule{FailureRate: 1, MinCalls: 2}, Counts{3, 2, 0}, Failure, false},
		{"rate 1, all failed", Rule{FailureRate: 1, MinCalls: 2}, Counts{3, 3, 0}, Failure, true},
	}
	for _, tt := range tests {
		if got := tt.r.Trips(tt.c, tt.o); got != tt.want {
			t.Errorf("%s: %+v.Trips(%+v, %d) = %v, want %v", tt.name, tt.r, tt.c, tt.o, got, tt.want)
		}
	}
}

// step is one action on a window in TestWindowCounts: add o at time at, or
// (reset) clear it; then Counts(at) must be want.
type step struct {
	at    int64
	o     Outcome
	reset bool
	want  Counts
}

func TestWindowCounts(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"verdicts add up by kind", []step{
			{at: 0, o: Success, want: Counts{1, 0, 0}},
			{at: 1, o: Failure, want: Counts{2, 1, 0}},
			{at: 2, o: SlowSuccess, want: Counts{3, 1, 1}},
		}},
		{"a verdict leaves the window a span after its bucket began", []step{
			{at: 0, o: Failure, want: Counts{1, 1, 0}},
			{at: 29*s + 999, o: Success, want: Counts{2, 1, 0}},
			{at: 30 * s, o: Success, want: Counts{2, 0, 0}},
		}},
		{"buckets are a tenth of the span", []step{
			{at: 2*s + 999_999_999, o: Failure, want: Counts{1, 1, 0}}, // bucket [0, 3s)
			{at: 3 * s, o: Success, want: Counts{2, 1, 0}},             // bucket [3s, 6s)
			{at: 32 * s, o: Success, want: Counts{2, 0, 0}},            // [0, 3s) has left
			{at: 33 * s, o: Success, want: Counts{2, 0, 0}},            // reuses [3s, 6s)'s slot
		}},
		{"a slot reused after a long silence starts empty", []step{
			{at: 1 * s, o: Failure, want: Counts{1, 1, 0}},
			{at: 301 * s, o: Success, want: Counts{1, 0, 0}},
		}},
		{"a verdict older than the window is dropped", []step{
			{at: 31 * s, o: Success, want: Counts{1, 0, 0}},
			{at: 1 * s, o: Failure, want: Counts{1, 0, 0}}, // same slot, older round; the newer bucket still counts
			{at: 31 * s, o: Success, want: Counts{2, 0, 0}},
		}},
		{"a verdict from a slightly earlier clock reading counts", []step{
			{at: 10 * s, o: Success, want: Counts{1, 0, 0}},
			{at: 8 * s, o: Failure, want: Counts{2, 1, 0}},
		}},
		{"reset clears every bucket", []step{
			{at: 0, o: Failure, want: Counts{1, 1, 0}},
			{at: 5 * s, o: SlowSuccess, want: Counts{2, 1, 1}},
			{at: 6 * s, reset: true, want: Counts{}},
			{at: 6 * s, o: Success, want: Counts{1, 0, 0}},
		}},
		{"negative clock offsets roll too", []step{
			{at: -1, o: Failure, want: Counts{1, 1, 0}},
			{at: 0, o: Success, want: Counts{2, 1, 0}},
			{at: 27*s - 1, o: Success, want: Counts{3, 1, 0}},
			{at: 27 * s, o: Success, want: Counts{3, 0, 0}}, // [-3s, 0) has left
		}},
	}
	for _, tt := range tests {
		w := New(30 * time.Second)
		for i, st := range tt.steps {
			if st.reset {
				w.Reset()
			} else {
				w.Add(st.at, st.o)
			}
			if got := w.Counts(st.at); got != st.want {
				t.Errorf("%s: step %d: Counts(%v) = %+v, want %+v", tt.name, i, time.Duration(st.at), got, st.want)
			}
		}
	}
}

func TestSpan(t *testing.T) {
	tests := []struct {
		span, want time.Duration
	}{
		{0, DefaultSpan},
		{-time.Second, DefaultSpan},
		{10 * time.Second, 10 * time.Second},
		{5 * time.Nanosecond, 10 * time.Nanosecond}, // 1 ns buckets at least
		{95 * time.Nanosecond, 90 * time.Nanosecond},
	}
	for _, tt := range tests {
		if got := New(tt.span).Span(); got != tt.want {
			t.Errorf("New(%v).Span() = %v, want %v", tt.span, got, tt.want)
		}
	}
}

func TestRecord(t *testing.T) {
	r := Rule{FailureRate: 0.5, SlowRate: 0.5, MinCalls: 4}
	w := New(10 * time.Second)
	seq := []struct {
		o    Outcome
		want bool
	}{
		{Failure, false},     // 1/1, below min calls
		{Success, false},     // 1/2
		{Failure, false},     // 2/3
		{Success, false},     // plain successes never trip: 2/4
		{Failure, true},      // 3/5
		{SlowSuccess, false}, // 1 slow of 6
		{SlowSuccess, false}, // 2 of 7
		{SlowSuccess, false}, // 3 of 8
		{SlowSuccess, false}, // 4 of 9
	}
	for i, st := range seq {
		if got := w.Record(int64(i)*int64(time.Millisecond), st.o, r); got != st.want {
			t.Errorf("verdict %d (%d): Record = %v, want %v", i, st.o, got, st.want)
		}
	}
	if !w.Record(int64(time.Second), SlowSuccess, r) { // 5 slow of 10
		t.Errorf("5 slow of 10 against 0.5: Record = false, want true")
	}
}

// TestRollingFakeClock walks a clock through two spans, one verdict per
// second, and checks the count after each against the verdicts of the last
// ten whole buckets.
func TestRollingFakeClock(t *testing.T) {
	w := New(10 * time.Second) // 1 s buckets
	for sec := int64(0); sec < 25; sec++ {
		o := Success
		if sec%2 == 0 {
			o = Failure
		}
		w.Add(sec*s+s/2, o)
		first := max(sec-9, 0)
		var want Counts
		for k := first; k <= sec; k++ {
			want.Verdicts++
			if k%2 == 0 {
				want.Failures++
			}
		}
		if got := w.Counts(sec*s + s/2); got != want {
			t.Fatalf("at %ds: Counts = %+v, want %+v", sec, got, want)
		}
	}
	if got := w.Counts(100 * s); got != (Counts{}) {
		t.Fatalf("a window untouched for longer than its span: Counts = %+v, want empty", got)
	}
}

// TestRollingSynctest rolls buckets on the real clock inside a synctest
// bubble, where time.Sleep advances the fake clock: the window reads no clock
// and starts no goroutine, so buckets roll only when touched.
func TestRollingSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now()
		now := func() int64 { return int64(time.Since(epoch)) }
		w := New(30 * time.Second)
		for range 6 {
			w.Add(now(), Failure)
			time.Sleep(2 * time.Second)
		}
		// failures at 0,2,...,10 s; now 12 s.
		if got := w.Counts(now()); got != (Counts{6, 6, 0}) {
			t.Fatalf("at 12s: %+v, want 6 failures", got)
		}
		time.Sleep(19 * time.Second) // 31 s: bucket [0,3s) has left
		if got := w.Counts(now()); got != (Counts{4, 4, 0}) {
			t.Fatalf("at 31s: %+v, want 4 failures (those at 0 and 2 s have left)", got)
		}
		w.Add(now(), Success)
		time.Sleep(6 * time.Second) // 37 s: [6s, 9s) has left
		if got := w.Counts(now()); got != (Counts{2, 1, 0}) {
			t.Fatalf("at 37s: %+v, want the failure at 10 s and the success at 31 s", got)
		}
		time.Sleep(2 * time.Second) // 39 s: [9s, 12s) has left
		if got := w.Counts(now()); got != (Counts{1, 0, 0}) {
			t.Fatalf("at 39s: %+v, want the success at 31 s", got)
		}
		time.Sleep(30 * time.Second)
		if got := w.Counts(now()); got != (Counts{}) {
			t.Fatalf("at 70s: %+v, want empty", got)
		}
	})
}

// TestConcurrentAdd checks, under -race, that no verdict is lost while
// goroutines roll the same buckets.
func TestConcurrentAdd(t *testing.T) {
	const workers, each = 8, 1000
	w := New(10 * time.Nanosecond) // 1 ns buckets: every clock offset rolls
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				o := Success
				if (g+i)%4 == 0 {
					o = Failure
				}
				w.Add(int64(i/100), o) // ten offsets, one bucket each
			}
		})
	}
	wg.Wait()
	got := w.Counts(9)
	if got.Verdicts != workers*each || got.Failures != workers*each/4 {
		t.Fatalf("Counts = %+v, want %d verdicts and %d failures", got, workers*each, workers*each/4)
	}
}

func BenchmarkAddSuccess(b *testing.B) {
	b.ReportAllocs()
	w := New(30 * time.Second)
	var now int64
	for b.Loop() {
		now += 100 // rolls a bucket every 3e7 verdicts
		w.Add(now, Success)
	}
}

func BenchmarkRecordFailure(b *testing.B) {
	b.ReportAllocs()
	w := New(30 * time.Second)
	r := Rule{FailureRate: 2, MinCalls: 20} // never trips
	var now int64
	for b.Loop() {
		now += 100
		w.Record(now, Failure, r)
	}
}

func BenchmarkAddSuccessParallel(b *testing.B) {
	b.ReportAllocs()
	w := New(30 * time.Second)
	epoch := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Add(int64(time.Since(epoch)), Success)
		}
	})
}
