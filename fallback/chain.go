package fallback

import "time"

// advanced fires Fallback -> Fallback if the active entry changed from before.
func (c *machine) advanced(before int, clk *clock, rec *recorder) {
	if c.state != Fallback {
		return
	}
	after := c.active()
	if after == before {
		return
	}
	from, to := "", ""
	if before >= 0 {
		from = c.cfg.models[before]
	}
	if after >= 0 {
		to = c.cfg.models[after]
	}
	rec.emit(Transition{From: Fallback, To: Fallback, FromModel: from, ToModel: to, At: clk.now()})
}

// setAvailable enables or disables chain entry i (a disable until enabled,
// with no reason).
func (c *machine) setAvailable(i int, available bool, clk *clock, rec *recorder) {
	c.disable(i, !available, time.Time{}, "", clk, rec)
}

// toPrimary is what every way into Primary clears (a recovery, Reset): a
// new epoch, no streak, no probe, no trip or cooldown, every entry's attempt
// budget afresh and an empty window (§8.1: a recovery's is empty already, but
// for a verdict that raced the trip). The callers keep what differs: the
// sticky flag and the trip count n, which only Reset forgets (§9.1), and when
// it closed.
func (c *machine) toPrimary() {
	c.state = Primary
	c.changeState()
	c.epoch++
	c.clearStreak()
	c.probeSuccesses = 0
	c.trippedAt, c.cooldownEnd, c.cause = time.Time{}, time.Time{}, CauseRecoveryTimeout
	c.probing, c.probeStart = false, time.Time{}
	for i := range c.chain {
		c.chain[i].attempts = 0
	}
	if c.win != nil {
		c.win.Reset()
	}
}

// reset returns to Primary, keeping manual disables.
func (c *machine) reset(clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	c.expireDisables(clk, rec)
	from, fromModel := c.state, c.stateModel()
	if from != Primary {
		c.closedAt = clk.now()
	}
	c.toPrimary()
	c.activated = false
	c.trips = 0 // §9.1: Reset forgets the openings in a row
	if from != Primary {
		rec.emit(Transition{From: from, To: Primary, FromModel: fromModel, ToModel: c.cfg.primary, At: clk.now()})
	}
}
