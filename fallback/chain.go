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

// reset returns to Primary, keeping manual disables.
func (c *machine) reset(clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	c.expireDisables(clk, rec)
	from, fromModel := c.state, c.stateModel()
	c.state = Primary
	c.changeState()
	c.epoch++
	c.clearStreak()
	c.probeSuccesses = 0
	c.trippedAt, c.cooldownEnd, c.cause = time.Time{}, time.Time{}, CauseRecoveryTimeout
	c.activated = false
	c.probing, c.probeStart = false, time.Time{}
	c.trips = 0 // §9.1: Reset forgets the openings in a row
	if from != Primary {
		c.closedAt = clk.now()
	}
	for i := range c.chain {
		c.chain[i].attempts = 0
	}
	if c.win != nil {
		c.win.Reset() // Reset clears the counters, the window's too (§8.1)
	}
	if from != Primary {
		rec.emit(Transition{From: from, To: Primary, FromModel: fromModel, ToModel: c.cfg.primary, At: clk.now()})
	}
}
