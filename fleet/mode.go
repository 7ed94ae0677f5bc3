package fleet

import "strconv"

// Policy says what a breaker does while its store does not answer.
type Policy int

// The store-down policies.
const (
	// Local switches to a local in-process breaker with the same settings,
	// seeded from the mirror (an open breaker stays open until the same
	// cooldown end). Each process may then probe on its own, at most once per
	// cooldown. The default.
	Local Policy = iota
	// FailOpen allows every call while the store is down; verdicts are dropped.
	FailOpen
	// FailClosed refuses every call while the store is down.
	FailClosed
)

// String returns "local", "fail_open" or "fail_closed".
func (p Policy) String() string {
	switch p {
	case Local:
		return "local"
	case FailOpen:
		return "fail_open"
	case FailClosed:
		return "fail_closed"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// Mode is where a breaker's state lives at the moment.
type Mode int

// The modes of a shared breaker.
const (
	// Shared: the store answers; the state is the fleet's.
	Shared Mode = iota
	// LocalMode: the store is down; a local breaker seeded from the mirror decides.
	LocalMode
	// FailOpenMode: the store is down; every call is allowed.
	FailOpenMode
	// FailClosedMode: the store is down; every call is refused.
	FailClosedMode
)

// String returns "shared", "local", "fail_open" or "fail_closed": the values
// of the mode label of the loopctl_store_mode metric.
func (m Mode) String() string {
	switch m {
	case Shared:
		return "shared"
	case LocalMode:
		return "local"
	case FailOpenMode:
		return "fail_open"
	case FailClosedMode:
		return "fail_closed"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Modes lists every Mode, in order, for one-hot metrics.
var Modes = []Mode{Shared, LocalMode, FailOpenMode, FailClosedMode}

// downMode is the mode policy p selects while the store is down.
func (p Policy) downMode() Mode {
	switch p {
	case FailOpen:
		return FailOpenMode
	case FailClosed:
		return FailClosedMode
	}
	return LocalMode
}
