// Package faults holds the scripted failure patterns the benchmarks' sick
// upstreams share, so that every harness breaks its upstreams the same way.
package faults

// BrownoutFails reports whether the nth request (from 0) a browned-out
// upstream receives fails: the 2nd, 5th and 8th of every 10, so three in
// ten fail and never two in a row (the 8th and the next 2nd are three
// apart). A consecutive-failure breaker never trips on it.
func BrownoutFails(n int) bool {
	switch n % 10 {
	case 1, 4, 7:
		return true
	}
	return false
}
