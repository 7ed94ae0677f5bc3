// Package fleet shares tool breakers ([breaker] semantics, SEMANTICS §1) and
// model breakers ([fallback] semantics, §3) across the processes of a fleet
// through Redis or Valkey, so that N copies of an agent or gateway behave as
// one breaker: the thresholds count fleet-wide, one probe is in flight for the
// whole fleet, and every cooldown and lease is measured on the store's clock.
//
// Every transition is one atomic Lua script on the store (EVALSHA, reloaded
// after NOSCRIPT), reading the store's TIME. Each process keeps a mirror of
// every shared breaker, fed by the replies of its own scripts and by a
// pub/sub message the script publishes on every change, so that the common
// events cost no round trip: a gate and a success in a quiet Closed breaker,
// a refusal before the cooldown's end, routing in Primary and in Fallback
// before the cooldown. Every other event is one script call.
//
// When the store does not answer within [Options.StoreTimeout], each breaker
// follows the [Policy]: by default it switches to a local in-process breaker
// seeded from its mirror, and switches back (the store's state wins) when the
// store answers again.
//
// The model breaker follows SEMANTICS through its
// [fallback.Backend] ([Store.ModelBackend]): Quota failures, hints that hold
// the cooldown, timeouts dated at their ticket's issue (on the store's clock),
// and the turn memory of [fallback.Manager.Next] and [fallback.Manager.Hedge]
// (one probe per turn for the whole fleet, routing past slow models). A
// state written by a process without cooldown ends is read with its cooldown
// end at trip time + RecoveryTimeout. While the store is down, the local manager serves
// turns without their memory (Next is Begin there, and Hedge hands out none).
//
// Holds, releases, resets and disables with an end (SEMANTICS §8.5, docs/FLEET.md:
// [ModelBreaker.Hold], [ModelBreaker.Release], [ModelBreaker.Disable])
// are written through the store like a trip, with their ends on the store's
// clock; [ModelBreaker.Reconfigure] changes a breaker's settings with no
// state written, and [StoreName] names a breaker by its primary and chain so
// that a reload keeps it exactly when they are unchanged.
//
// A gateway's pools share their member breakers through [Store.ToolBackend]
// (named member@<upstream>/<model>) and the members disabled by hand through
// [Store.MemberDisables]: a key per disabled member with its TTL on the
// store's clock, read from a mirror with no round trip.
//
// This is the only package of the module that imports a Redis client
// (github.com/redis/rueidis).
package fleet
