// Package health keeps one circuit breaker and a running health record per
// tool, and routes calls away from sick tools.
//
// A [Registry] creates a [breaker.Breaker] for each tool name on first use,
// all with the registry's settings. Its gate, [Registry.Allow], returns a
// [Permit]; settling the permit reports the verdict to the tool's breaker and
// records the call's outcome and duration (from the gate to the settlement) in
// the tool's [Stats]: calls, successes, failures, total and maximum duration,
// and an exponentially weighted moving average (EWMA) of success. The stats
// give each tool a score (0.3·success rate + 0.7·EWMA) and a [Status]: a tool
// whose breaker is open is Unhealthy; otherwise it is Healthy from a score of
// 0.8, Degraded from 0.5, and Unhealthy below.
//
// [Do] is the gate, the call and the verdict in one, like [breaker.Do]: it
// bounds a probe's call by the probe's lease.
//
// A [Router] maps a tool to an ordered list of backups and, using only pure
// reads, picks the first candidate whose breaker would allow a call, else
// refuses softly with an error matching [breaker.ErrOpen]. The breakers alone
// decide: a tripped tool whose probe is due is resolved to itself even while a
// backup is healthy, and a tool whose probe is in flight is skipped. Status and
// score are reported, never used to route. The caller then takes the gate on
// the resolved name and settles under that same name.
//
// Lookups of known tools take no global lock and do not allocate; lookups and
// pure reads (Breaker, WouldAllow, Stats, Status, Summary, Reset) never create
// a tool: only the gate does. The semantics are
// in docs/SEMANTICS.md, section 2.
package health
