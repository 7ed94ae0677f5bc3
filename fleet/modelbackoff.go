package fleet

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// Repeated trips back off on the store too (SEMANTICS §9.1, docs/FLEET.md):
// the trip count n and closedAt are part of the shared state (the script's
// hash field k), so the fleet backs off as one. The mirror applies the same
// arithmetic as the script for the lazy steps a pure read runs (a lapsed
// probe lease that re-trips) and for the count a read reports.

// backoffArgs are the script arguments of the backoff settings: the factor
// (≤ 1: off) and MaxRecoveryTimeout in µs.
func backoffArgs(fs fallback.Settings) [2]string {
	return [2]string{strconv.FormatFloat(max(fs.RecoveryBackoff, 1), 'g', -1, 64),
		strconv.FormatInt(fs.MaxRecoveryTimeout.Microseconds(), 10)}
}

// maxRecovery is MaxRecoveryTimeout with its default (10 × RecoveryTimeout,
// saturating), as fallback applies it; fs has RecoveryTimeout's default.
func maxRecovery(fs fallback.Settings) fallback.Settings {
	if fs.MaxRecoveryTimeout == 0 {
		fs.MaxRecoveryTimeout = math.MaxInt64
		if fs.RecoveryTimeout <= math.MaxInt64/10 {
			fs.MaxRecoveryTimeout = 10 * fs.RecoveryTimeout
		}
	}
	return fs
}

// cooldown is c(n) in µs, computed as the script computes it, with the
// cause it gives (backoff when n > 1 and the factor grows).
func (tu *modelTune) cooldown(n int) (int64, fallback.Cause) {
	f, limit := max(tu.set.RecoveryBackoff, 1), tu.set.MaxRecoveryTimeout.Microseconds()
	if n <= 1 || f <= 1 {
		return tu.rec, fallback.CauseRecoveryTimeout
	}
	d := float64(tu.rec) * math.Pow(f, float64(n-1))
	if math.IsNaN(d) || d >= float64(limit) {
		return limit, fallback.CauseBackoff
	}
	return int64(math.Floor(d)), fallback.CauseBackoff
}

// opening updates the mirror copy c's trip count for an opening at at (µs)
// from c's state, as the script's opening does: from Primary, n = 0 first
// once MaxRecoveryTimeout has passed since closedAt.
func (tu *modelTune) opening(c *modelMirror, at int64, raise bool) {
	if c.st == fallback.Primary && at-c.closedAt >= tu.set.MaxRecoveryTimeout.Microseconds() {
		c.trips = 0
	}
	if raise {
		c.trips++
	}
}

// viewTrips is the trip count a read reports at now (µs): 0 in Primary once
// MaxRecoveryTimeout has passed since closedAt.
func (tu *modelTune) viewTrips(c *modelMirror, now int64) int {
	if c.st == fallback.Primary && now-c.closedAt >= tu.set.MaxRecoveryTimeout.Microseconds() {
		return 0
	}
	return c.trips
}

// SuccessAfter reports that the turn succeeded and that its first content
// came firstContent after the turn's start, as [fallback.Turn.SuccessAfter]
// does: with SlowCallAfter set, a probe later than it re-opens the shared
// breaker at once and raises the trip count (SEMANTICS §9.2); any other
// ticket is a success (a ModelBreaker used directly keeps no slow-call
// window: that is the fallback.Manager's, per process).
func (t Turn) SuccessAfter(firstContent time.Duration) {
	if t.m != nil && t.probe != 0 {
		if after := t.m.tuned().set.SlowCallAfter; after > 0 && firstContent > after {
			t.settle("trip", fallback.Failure{})
			return
		}
	}
	t.Success()
}

// seedTrips replays a trip count on the local manager lm, whose clock reads
// *at while it is seeded (docs/FLEET.md: a local breaker seeded from the
// mirror keeps n): cycles openings, each closed by probe successes at the
// end of its own cooldown, the last closing at end. lm's next opening then
// counts on from the fleet's n, as the shared breaker's would.
func (m *ModelBreaker) seedTrips(lm *fallback.Manager, at *atomic.Pointer[time.Time], cycles int, end time.Time) {
	tu := m.tuned()
	var total time.Duration
	for k := 1; k <= cycles; k++ {
		d, _ := tu.cooldown(k)
		total += time.Duration(d) * time.Microsecond
	}
	t := end.Add(-total)
	for range cycles {
		at.Store(&t)
		for lm.State() == fallback.Primary {
			tk, err := lm.Begin()
			if err != nil {
				return
			}
			tk.Failure(fallback.Transient)
		}
		t = lm.Snapshot().CooldownEnds
		at.Store(&t)
		for lm.State() != fallback.Primary {
			tk, err := lm.Begin()
			if err != nil || !tk.IsProbe() {
				tk.Cancel()
				return
			}
			tk.Success()
		}
	}
}
