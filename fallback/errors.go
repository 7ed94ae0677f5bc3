package fallback

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/internal/durtext"
)

// ErrExhausted is FallbackExhausted: the manager is tripped, the chain is not
// empty, and every chain entry has failed (or is disabled). [Manager.Begin]
// returns it, as an [*ExhaustedError], before any request is sent. It is a hard
// error: the run should end rather than retreat to the known-bad primary.
var ErrExhausted = errors.New("fallback: every model in the fallback chain has failed (FallbackExhausted)")

// ErrInvalidSettings is matched (with errors.Is) by every [SettingsError].
var ErrInvalidSettings = errors.New("fallback: invalid settings")

// ErrNotInChain is matched (with errors.Is) by the error [Manager.SetAvailable]
// returns for a model that is not a chain entry (the primary or an unknown name).
var ErrNotInChain = errors.New("fallback: model is not a chain entry")

// ExhaustedError is what [Manager.Begin] returns (as *ExhaustedError) when the
// fallback chain is spent. errors.Is(err, ErrExhausted) is true.
type ExhaustedError struct {
	// Primary is the primary model.
	Primary string
	// Chain is the fallback chain, in order (a copy).
	Chain []string
	// State is Fallback, or Recovering while a probe of the primary is in flight.
	State State
	// ProbeAt is when the primary is next expected to be tried: in Fallback the
	// end of the cooldown ([Snapshot.CooldownEnds]); in Recovering the end of
	// the lease of the probe in flight (it frees earlier if the probe settles
	// earlier), or the refusal's time when no probe is in flight (a turn that
	// has held its probe, refused by [Manager.Next]). Exhaustion never moves it.
	ProbeAt time.Time
	// RetryIn is ProbeAt minus the time of the refusal, never negative.
	RetryIn time.Duration
	// Probed is true when the refusal is for a turn ([Manager.Next]) that
	// has held the probe ticket (one probe per turn): the chain is
	// spent, or empty. The caller ends the turn with its probe's error.
	Probed bool
	// ProbeFailure is the report the turn's probe failed with (zero if it
	// was not settled as a failure).
	ProbeFailure Failure
	// Held is true when the manager is held by an operator ([Manager.Hold],
	// SEMANTICS §8.5): a held manager with no chain refuses every turn, and
	// one whose chain is spent refuses like any other. ProbeAt is the
	// hold's end.
	Held bool
}

// Error returns text such as
//
//	fallback: every model in the fallback chain has failed (FallbackExhausted): chain [gpt-b gpt-c]; primary "gpt-a" may be probed in 42s
func (e *ExhaustedError) Error() string {
	var b strings.Builder
	b.WriteString(ErrExhausted.Error())
	b.WriteString(": chain [")
	b.WriteString(strings.Join(e.Chain, " "))
	b.WriteString("]; primary ")
	b.WriteString(strconv.Quote(e.Primary))
	if e.Held {
		b.WriteString(" is held by an operator; may be probed in ")
	} else if e.State == Recovering && e.RetryIn > 0 {
		b.WriteString(" is being probed; probe lease ends in ")
	} else {
		b.WriteString(" may be probed in ")
	}
	b.WriteString(durtext.RoundUp(e.RetryIn).String()) // rounded up, as every wait a person reads
	if e.Probed {
		b.WriteString("; this turn has held the probe (")
		b.WriteString(e.ProbeFailure.Kind.String())
		if e.ProbeFailure.Timeout {
			b.WriteString(", timeout")
		}
		b.WriteString(")")
	}
	return b.String()
}

// Is reports whether target is [ErrExhausted].
func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// SettingsError reports one problem with a [Settings] value. It matches
// [ErrInvalidSettings] with errors.Is. [New] joins one SettingsError per problem
// found (errors.Join), so errors.As finds the first.
type SettingsError struct {
	// Field names the offending field, e.g. "Primary" or "Chain[1]".
	Field string
	// Problem says what is wrong, e.g. `"gpt-b" duplicates Chain[0]`.
	Problem string
}

// Error returns "fallback: " + Field + " " + Problem, e.g.
//
//	fallback: Chain[1] "gpt-b" duplicates Chain[0]
func (e *SettingsError) Error() string { return "fallback: " + e.Field + " " + e.Problem }

// Is reports whether target is [ErrInvalidSettings].
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }
