package fallback

// The retry budget of SEMANTICS §8.3.

// feed adds the turn a's tokens to the retry budget of the model that serves
// entry (-1: the primary), once per turn and model (a nil turn is a turn of
// one attempt; a model past the 64th is fed by every attempt).
func (m *Manager) feed(a *Attempts, entry int) {
	i := entry + 1
	if a != nil && i < 64 {
		bit := uint64(1) << uint(i)
		if a.fed.Load()&bit != 0 || a.fed.Or(bit)&bit != 0 {
			return
		}
	}
	m.budgets[i].Feed()
}

// Retry spends one token of the retry budget of the ticket's model
// (SEMANTICS §8.3) and reports whether the caller may retry the turn's
// request on the same model: false, spending nothing, when the budget holds
// less than one token. Then no retry is made: the attempt ends with its
// failure, settled as usual, and the turn moves on ([Manager.Next]: the next
// usable model, or the failure). Call it before each same-model retry of the
// retry ladder, and before a rate-limited wait on the same model; never for
// a request's first attempt, never for a hedge (hedges have their own
// budget, [Manager.Hedge]). Each turn that reaches a model adds RetryBudget
// tokens to its budget (capped at RetryBudgetBurst; the budget starts full).
// With RetryBudget negative it always reports true; the zero Turn reports
// false. A retry.Policy takes it as its Budget: Budget: ticket.Retry.
func (t Ticket) Retry() bool {
	if t.m == nil {
		return false
	}
	return t.m.budgets[t.entry()+1].Spend()
}

// Retry is [Ticket.Retry] for the model named model (the primary or a chain
// entry), for a caller that holds no ticket. A model the manager does not
// know has no budget here: Retry reports true.
func (m *Manager) Retry(model string) bool {
	i := 0
	if model != m.cfg.primary {
		if i = m.index(model) + 1; i == 0 {
			return true
		}
	}
	return m.budgets[i].Spend()
}
