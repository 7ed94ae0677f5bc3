// Package pool spreads one model's requests over several deployments of it
// (two API keys with their own rate limits, the same model on Anthropic,
// Bedrock and Vertex, OpenAI and two Azure regions), each behind its own
// [breaker.Breaker], balanced by what the pool measures of them.
//
// A [Pool] has two main methods: [Pool.Choose] picks the member that serves
// a request's next attempt and returns an [Attempt], the handle the caller
// settles with the member's verdict; [Pool.End] ends the pool attempt and
// returns its one verdict for the model breaker ([Result]). A request's
// memory across its attempts is a [Request]. Most callers should use [Do],
// which runs the whole pool attempt and settles every member attempt in a
// defer, so that a panic settles too. A gateway adds [Pool.Hedge] (a second
// member for a request still waiting), [Pool.Admits] and [Pool.Unavailable]
// (whether to skip the pool, and what to answer), [Pool.Pin] (the one member
// a stateful request may use), [Pool.Peek] and [Pool.Status].
//
// The choice, among the members admitted for the request (their breaker would
// allow, they have headroom, the caller's predicate says they can serve it,
// and the request has not tried them yet), is made in this order: a member
// whose probe is due, so that latency never starves a probe; the request's
// home by weighted rendezvous hashing of its session key, so that a
// conversation stays on the deployment that holds its prompt cache, unless
// the home is over its bounded load or much costlier than the cheapest
// member; else the cheaper of two members drawn by weight, the cost being the
// member's latency estimate × (in flight + 1) / weight.
//
// Time comes from the now arguments and randomness from Settings.Rand: the
// package starts no goroutine and keeps no timer. Leases are released lazily,
// the next time the pool is touched, so an attempt that is never settled
// cannot wedge a member. The choice allocates nothing.
//
// Each member's breaker must read the same clock as the now arguments. The
// exact rules are in docs/SEMANTICS.md, section 9.3.
package pool
