package gateway

// The retry budget: each same-model retry of an attempt's ladder (and each
// rate-limited wait on the same model) spends a token of its model's budget,
// kept by the route's model breaker, so that retries cannot multiply an
// outage's load; with none left the ladder stops, the attempt ends with its
// failure and the request moves on to the next usable model, or fails
// (SEMANTICS §8.3).
//
// "Moves on": once the budget has refused a retry on a model, a later
// attempt of the request that the breaker routes back to that model is
// skipped (Turn.Skip: no verdict, and the rest of the request is routed
// past the model). Otherwise the refused retry would only come back as the
// request's next attempt, on the same model.
//
// With a failure-rate window (breaker.failure_rate, §8.1) and another model
// usable, the ladder makes no transient retries on the same model: the
// failed try ends its attempt with its verdict, and the request's next
// attempt (where the breaker routes: the same model until it trips, then
// the backup) is the retry, and spends a token like one (none: skipped).
// The window counts verdicts, one per attempt: a retry inside the attempt
// would hide from it the failure it retries, and a model failing a third
// of its calls, each retried once, would show the window a failure share
// of a tenth.

// mayRetry reports whether the request may retry on the ticket's model
// (model, its upstream/model): the turn's budget, or for a ticket without
// a verdict (count_tokens) the model's budget by name; retry.budget: 0
// refuses every retry. A refusal is counted in
// loopctl_retry_budget_exhausted_total{model} and remembered (under
// refusedMu: a hedge's ladder calls it on its own goroutine).
func (x *exchange) mayRetry(tk ticket, model string) bool {
	ok := false
	switch {
	case x.in.rt.noRetry:
	case tk.model != "":
		ok = x.in.rt.mgr.Retry(tk.model)
	default:
		ok = tk.fallback.Retry()
	}
	if !ok {
		x.g.m.budgetExhausted(model)
		x.walk.refused.add(model)
	}
	return ok
}

// retryRefused reports whether a later attempt of the request on model,
// which failed it, is a same-model retry that the budget refuses: it
// refused one already, or (with a failure-rate window, where the ladder
// makes none) it refuses this one.
func (x *exchange) retryRefused(tk ticket, model string) bool {
	if !x.walk.is(model, markFailed) {
		return false
	}
	if x.walk.refused.has(model) {
		return true
	}
	return x.in.rt.settings.FailureRate > 0 && !x.mayRetry(tk, model)
}

// retryBudget returns the ladder's Policy.Budget for an attempt of tk on
// the upstream model model.
func (x *exchange) retryBudget(tk ticket, model string) func() bool {
	return func() bool { return x.mayRetry(tk, model) }
}
