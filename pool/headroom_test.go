package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// TestHeadroomTable has one case per clause of headroom (docs/SEMANTICS.md
// §9.3 rule 5). Each row starts attempts on m0 (steps), then asks whether m0
// is admitted at the row's instant for a request needing need tokens.
func TestHeadroomTable(t *testing.T) {
	type step struct {
		at     time.Duration // when the attempt starts
		answer time.Duration // when its answer arrives (0: it stays in flight, no figures)
		tokens int64
		h      func(now time.Time) pool.Headroom
	}
	reqs := func(remaining int64, reset time.Duration) func(time.Time) pool.Headroom {
		return func(now time.Time) pool.Headroom {
			return pool.Headroom{Requests: pool.Limit{Remaining: remaining, Reset: at(reset)}}
		}
	}
	toks := func(remaining int64, reset time.Duration) func(time.Time) pool.Headroom {
		return func(now time.Time) pool.Headroom {
			return pool.Headroom{Tokens: pool.Limit{Remaining: remaining, Reset: at(reset)}}
		}
	}
	type row struct {
		name  string
		steps []step
		need  int64
		when  time.Duration
		want  bool
	}
	minute := time.Minute
	rows := []row{
		{name: "no figures: headroom", steps: []step{{at: 0, answer: 10}}, when: time.Second, want: true},
		{name: "requests: remaining 1, none started since: headroom",
			steps: []step{{at: 0, answer: 10, h: reqs(1, minute)}}, when: time.Second, want: true},
		{name: "requests: remaining 1, one started after R's request: none until the reset",
			steps: []step{{at: 0, answer: 10, h: reqs(1, minute)}, {at: 20}}, when: time.Second, want: false},
		{name: "requests: at the reset, headroom again",
			steps: []step{{at: 0, answer: 10, h: reqs(0, minute)}}, when: minute, want: true},
		{name: "requests: remaining 0 says none until the reset",
			steps: []step{{at: 0, answer: 10, h: reqs(0, minute)}}, when: 59 * time.Second, want: false},
		{name: "R is the answer whose request started latest: an older request's answer changes nothing",
			steps: []step{{at: 0, answer: 30, h: reqs(0, minute)}, {at: 10, answer: 20, h: reqs(5, minute)}},
			when:  time.Second, want: true},
		{name: "a later-started request's answer replaces R",
			steps: []step{{at: 0, answer: 20, h: reqs(5, minute)}, {at: 10, answer: 30, h: reqs(0, minute)}},
			when:  time.Second, want: false},
		{name: "a remaining figure without its reset is ignored",
			steps: []step{{at: 0, answer: 10, h: func(time.Time) pool.Headroom {
				return pool.Headroom{Requests: pool.Limit{Remaining: 0}}
			}}}, when: time.Second, want: true},
		{name: "a reset in the past restores the figure",
			steps: []step{{at: 0, answer: 10, h: reqs(0, minute)}, {at: 20, answer: 30, h: reqs(0, 0)}},
			when:  time.Second, want: true},
		{name: "tokens: remaining less the tokens started after R's ≥ the estimate: headroom",
			steps: []step{{at: 0, answer: 10, h: toks(1000, minute)}, {at: 20, tokens: 500}}, need: 500,
			when: 500 * time.Millisecond, want: true},
		{name: "tokens: less than the estimate: none",
			steps: []step{{at: 0, answer: 10, h: toks(1000, minute)}, {at: 20, tokens: 600}}, need: 500,
			when: 500 * time.Millisecond, want: false},
		{name: "tokens: admitted again 1 s after R arrived, before the reset (buckets refill)",
			steps: []step{{at: 0, answer: 10, h: toks(1000, minute)}, {at: 20, tokens: 600}}, need: 500,
			when: time.Second + 10, want: true},
		{name: "output tokens: none left means no headroom",
			steps: []step{{at: 0, answer: 10, h: func(time.Time) pool.Headroom {
				return pool.Headroom{OutputTokens: pool.Limit{Remaining: 0, Reset: at(minute)}}
			}}}, when: 500 * time.Millisecond, want: false},
		{name: "input tokens are compared with the uncached estimate",
			steps: []step{{at: 0, answer: 10, h: func(time.Time) pool.Headroom {
				return pool.Headroom{InputTokens: pool.Limit{Remaining: 100, Reset: at(minute)}}
			}}}, need: 1000, when: 500 * time.Millisecond, want: true}, // need is Tokens; InputTokens is 50 below
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(2), nil)
			type open struct {
				a pool.Attempt
				s step
			}
			var started []open
			for _, s := range row.steps {
				var r pool.Request
				a, err := f.p.Choose(at(s.at), &r, pool.Need{CanServe: only(0), Tokens: s.tokens})
				if err != nil {
					t.Fatal(err)
				}
				started = append(started, open{a, s})
			}
			for _, o := range sortedByAnswer(started, func(o open) time.Duration { return o.s.answer }) {
				if o.s.answer == 0 {
					continue
				}
				if o.s.h != nil {
					o.a.Headroom(at(o.s.answer), o.s.h(at(o.s.answer)))
				}
				o.a.Success(at(o.s.answer))
			}
			n := pool.Need{Tokens: row.need, InputTokens: 50, CanServe: only(0)}
			if got := f.p.Admits(at(row.when), &pool.Request{}, n); got != row.want {
				t.Fatalf("m0 admitted = %v, want %v (status %+v)", got, row.want, f.p.Status(at(row.when), 0).Headroom)
			}
		})
	}
}

// sortedByAnswer returns xs ordered by key (a stable insertion sort).
func sortedByAnswer[T any](xs []T, key func(T) time.Duration) []T {
	out := append([]T(nil), xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && key(out[j]) < key(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestHeadroomStatus: Status reports the latest remaining figure less what
// started since, with its reset.
func TestHeadroomStatus(t *testing.T) {
	f := newFixture(t, equal(2), nil)
	var r pool.Request
	a := f.choose(t, &r, pool.Need{CanServe: only(0)})
	a.Headroom(at(0), pool.Headroom{Requests: pool.Limit{Remaining: 10, Reset: at(time.Minute)}})
	a.Success(at(0))
	f.inFlight(t, 0, 3)
	got := f.p.Status(at(0), 0).Headroom.Requests
	if want := (pool.Limit{Remaining: 7, Reset: at(time.Minute)}); got.Remaining != want.Remaining || !got.Reset.Equal(want.Reset) {
		t.Fatalf("requests headroom = %+v, want %+v", got, want)
	}
}
