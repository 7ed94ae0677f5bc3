package gateway

// The retry budget of SEMANTICS §8.3 in the gateway: each same-model retry
// of an attempt's ladder (and each rate-limited wait on the same model)
// spends a token of its model's budget, kept by the route's model breaker;
// with none left the ladder stops and the request moves on by §7.

// retryBudget returns the ladder's Policy.Budget for an attempt of turn on
// the upstream model model: the turn's budget, or for a ticket without a
// verdict (count_tokens) the model's budget by name. A refusal is counted
// in loopctl_retry_budget_exhausted_total{model}. With retry.budget: 0
// every retry is refused.
func (x *exchange) retryBudget(turn ticket, model string) func() bool {
	m, mgr := x.g.m, x.rt.mgr
	if x.rt.noRetry {
		return func() bool {
			m.budgetExhausted(model)
			return false
		}
	}
	if turn.model != "" {
		return func() bool {
			if mgr.Retry(turn.model) {
				return true
			}
			m.budgetExhausted(model)
			return false
		}
	}
	t := turn.turn
	return func() bool {
		if t.Retry() {
			return true
		}
		m.budgetExhausted(model)
		return false
	}
}
