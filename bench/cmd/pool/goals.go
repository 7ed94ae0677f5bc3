package main

import (
	"fmt"
	"math"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// unit is how a goal's figure is written.
type unit int

const (
	count  unit = iota
	share       // a fraction, written as a percentage
	millis      // a duration in nanoseconds, written in ms
	points      // percentage points
)

// goal is one figure of a run and its bound: figure ≤ limit (≥ with
// atLeast). measure returns false when the run gives no figure.
type goal struct {
	run     string // the run's label in the table, when not the scenario's
	text    string
	limit   float64
	atLeast bool
	unit    unit
	measure func(r *result) (float64, bool)
}

// met reports whether v meets the goal.
func (g goal) met(v float64) bool {
	if g.atLeast {
		return v >= g.limit-1e-9
	}
	return v <= g.limit+1e-9
}

// bound is the goal as text: "≤ 8", "≥ 95 %".
func (g goal) bound() string {
	op := "≤"
	if g.atLeast {
		op = "≥"
	}
	return op + " " + g.unit.format(g.limit)
}

func (u unit) format(v float64) string {
	switch u {
	case share:
		return fmt.Sprintf("%.1f %%", 100*v)
	case millis:
		return fmt.Sprintf("%.0f ms", v/float64(time.Millisecond))
	case points:
		return fmt.Sprintf("%.1f points", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// every are the goals of every run: no client failure, no request
// reaching one member twice, every member request with its member's key.
var every = []goal{
	{text: "client failures", unit: count, measure: func(r *result) (float64, bool) {
		n := 0
		for _, rec := range r.recs {
			if !rec.ok {
				n++
			}
		}
		return float64(n), true
	}},
	{text: "client requests reaching one member twice", unit: count, measure: func(r *result) (float64, bool) {
		n := 0
		for _, arr := range r.arr {
			seen := map[string]int{}
			for _, a := range arr {
				if a.id != "" {
					if seen[a.id]++; seen[a.id] == 2 {
						n++
					}
				}
			}
		}
		return float64(n), true
	}},
	{text: "member requests without that member's own key", unit: count, measure: func(r *result) (float64, bool) {
		n := 0
		for _, arr := range r.arr {
			for _, a := range arr {
				if !a.keyOK {
					n++
				}
			}
		}
		return float64(n), true
	}},
}

// sickRequests counts the load's requests that reached m3 while it was sick.
func sickRequests(r *result) int {
	n := 0
	for _, a := range r.arr[sickMember] {
		if a.sick && a.id != "" {
			n++
		}
	}
	return n
}

// inWindow are the sent requests due while m3 was sick.
func inWindow(r *result) []record {
	var out []record
	for _, rec := range r.recs {
		if rec.sent && rec.at >= r.sched.from && rec.at < r.sched.to {
			out = append(out, rec)
		}
	}
	return out
}

func sickAtMost(n int) goal {
	return goal{text: "requests reaching m3 while sick", limit: float64(n), unit: count,
		measure: func(r *result) (float64, bool) { return float64(sickRequests(r)), true }}
}

func sickShareAtMost(f float64) goal {
	return goal{text: "m3's requests while sick / the client requests of that time", limit: f, unit: share,
		measure: func(r *result) (float64, bool) {
			in := len(inWindow(r))
			return float64(sickRequests(r)) / float64(max(in, 1)), in > 0
		}}
}

func p99AtMost(d time.Duration) goal {
	return goal{text: "client p99 time to first content while m3 is sick", limit: float64(d), unit: millis,
		measure: func(r *result) (float64, bool) {
			var ds []time.Duration
			for _, rec := range inWindow(r) {
				ds = append(ds, rec.ttfc)
			}
			return float64(serve.Quantile(ds, 0.99)), len(ds) > 0
		}}
}

func m3Throttled(n int) goal {
	return goal{text: "429s from m3 in the whole run", limit: float64(n), unit: count,
		measure: func(r *result) (float64, bool) {
			k := 0
			for _, a := range r.arr[sickMember] {
				if a.id != "" && a.status == 429 {
					k++
				}
			}
			return float64(k), true
		}}
}

// The affinity goals of the healthy run.
var (
	sessionOnOne = goal{text: "a session's requests on one member (mean over sessions)", limit: 0.95, atLeast: true, unit: share,
		measure: func(r *result) (float64, bool) {
			sum, k := 0.0, 0
			for _, c := range served(r.recs, 0, math.MaxInt64) {
				if _, most, total := top(c); total > 0 {
					sum += float64(most) / float64(total)
					k++
				}
			}
			return sum / float64(max(k, 1)), k > 0
		}}
	topIsHome = goal{text: "sessions whose member is their rule 3(b) home (of 50)", limit: 48, atLeast: true, unit: count,
		measure: func(r *result) (float64, bool) {
			h, k := homes(), 0
			for s, c := range served(r.recs, 0, math.MaxInt64) {
				if m, _, total := top(c); total > 0 && m == h[s] {
					k++
				}
			}
			return float64(k), true
		}}
	shareOfHomes = goal{text: "largest gap between a member's share of requests and its share of homes", limit: 8, unit: points,
		measure: func(r *result) (float64, bool) {
			h := homes()
			var req, home [3]float64
			total := 0.0
			for s, c := range served(r.recs, 0, math.MaxInt64) {
				home[h[s]]++
				for i, v := range c {
					req[i] += float64(v)
					total += float64(v)
				}
			}
			gap := 0.0
			for i := range req {
				gap = max(gap, math.Abs(100*req[i]/max(total, 1)-100*home[i]/sessions))
			}
			return gap, total > 0
		}}
)

// The down-then-back goals, measured on the down run: m3 is down while
// sick and healthy after.
const downBack = "m3 down (500), then back"

var (
	homeStays = goal{run: downBack, text: "requests of sessions homed on m1/m2 served by their home", limit: 0.95, atLeast: true, unit: share,
		measure: func(r *result) (float64, bool) {
			h := homes()
			on, all := 0, 0
			for s, c := range served(r.recs, 0, math.MaxInt64) {
				if h[s] != sickMember {
					on += c[h[s]]
					all += c[0] + c[1] + c[2]
				}
			}
			return float64(on) / float64(max(all, 1)), all > 0
		}}
	homeReturns = goal{run: downBack, text: "requests of m3's sessions served by m3 once it serves again", limit: 0.80, atLeast: true, unit: share,
		measure: func(r *result) (float64, bool) {
			back, ok := servesAgain(r)
			if !ok {
				return 0, false
			}
			h := homes()
			on, all := 0, 0
			for s, c := range served(r.recs, int64(back), math.MaxInt64) {
				if h[s] == sickMember {
					on += c[sickMember]
					all += c[0] + c[1] + c[2]
				}
			}
			return float64(on) / float64(max(all, 1)), all > 0
		}}
)

// servesAgain returns when m3 first answered a request of the load well
// after it was sick (its arrival), and false if it never did.
func servesAgain(r *result) (time.Duration, bool) {
	for _, a := range r.arr[sickMember] {
		if a.at >= r.sched.to && a.id != "" && a.status == 200 {
			return a.at, true
		}
	}
	return 0, false
}
