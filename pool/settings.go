package pool

import (
	"math"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Default values used when a [Settings] field is zero.
const (
	DefaultAffinitySlack  = 2
	DefaultPenalty        = 30 * time.Second
	DefaultAttemptTimeout = 10 * time.Minute
	// MaxMembers is the most members a pool may have: a [Request] remembers
	// them in fixed-size bit sets, so that it never allocates.
	MaxMembers = 64
)

// tau is the latency estimates' time constant: a sample moves an estimate by
// weight 1 − e^(−Δt/τ), and an estimate with no sample for τ is forgotten.
const tau = 10 * time.Second

// Member is one deployment of the pool's model.
type Member struct {
	// Name names the deployment, as "upstream/model". Its hash places the
	// sessions homed on it (see [Hash]), so it must be the same in every
	// process. Required, and unique within the pool.
	Name string
	// Weight is the member's capacity ratio: a finite number above 0 (1
	// for an equal share). There is no default: zero is an error, so that a
	// forgotten weight is not read as a share.
	Weight float64
	// Breaker is the member's own breaker (SEMANTICS §1): the pool takes its
	// gate for every attempt and settles its permit. It must read the same
	// clock as the now arguments given to the pool. Required.
	Breaker *breaker.Breaker
	// SlowCallAfter is the member breaker's own SlowCallAfter, told to the
	// pool so that a probe whose first content comes later re-opens the
	// breaker when that first content arrives, whatever the stream does
	// afterwards (SEMANTICS §9.2): [Attempt.FirstContent] settles the
	// probe's permit then. Zero: every permit is settled with the
	// attempt's verdict. Negative: an error.
	SlowCallAfter time.Duration
}

// Affinity says whether requests with a session key keep to a home member.
type Affinity int

const (
	// AffinitySession (the zero value) homes each session on the member of
	// the highest weighted rendezvous score, while bounds allow.
	AffinitySession Affinity = iota
	// AffinityNone balances every request by cost alone.
	AffinityNone
)

// Settings configures a [Pool]. Every zero field means its documented default,
// but Members must name at least two members.
type Settings struct {
	// Name names the pool in errors. Zero: "".
	Name string
	// Members are the deployments: at least 2, at most [MaxMembers], no name
	// twice. Their order is the order in which due probes are taken.
	Members []Member
	// Affinity: AffinitySession (zero) or AffinityNone.
	Affinity Affinity
	// AffinitySlack s: a session's home serves while its cost is at most s ×
	// the lowest admitted cost. Zero: 2. Otherwise a finite number ≥ 1.
	AffinitySlack float64
	// Penalty is the latency sample a failure with a verdict gives, so that a
	// member that fails fast never looks fast. Zero: 30s. Negative: an error.
	Penalty time.Duration
	// AttemptTimeout is the lease of a member attempt that is not a probe
	// (a probe's lease is its breaker's ProbeTimeout): an attempt not settled
	// by then is released as a failure dated at the lease's end. Zero: 10
	// min. Negative: an error.
	AttemptTimeout time.Duration
	// Rand returns uniformly distributed 64-bit values for the weighted
	// draws. It must be safe for concurrent use. Zero (nil): math/rand/v2.
	Rand func() uint64
	// Figures holds what is measured of each deployment: in-flight counts,
	// latency estimates, headroom. Pools that list one deployment (by Name)
	// share its figures when they share a *Figures. Zero (nil): the pool
	// keeps its own.
	Figures *Figures
	// Now is the clock [Do] reads; the other methods take now as an
	// argument. Zero (nil): time.Now.
	Now func() time.Time
}

// Validate reports the first bad field of s as a [*SettingsError].
func (s Settings) Validate() error {
	switch n := len(s.Members); {
	case n < 2:
		return &SettingsError{Field: "Members", Value: strconv.Itoa(n) + " members", Rule: "must list at least 2 members"}
	case n > MaxMembers:
		return &SettingsError{Field: "Members", Value: strconv.Itoa(n) + " members", Rule: "must list at most 64 members"}
	}
	for i, m := range s.Members {
		if err := m.validate(i, s.Members[:i]); err != nil {
			return err
		}
	}
	switch sl := s.AffinitySlack; {
	case s.Affinity != AffinitySession && s.Affinity != AffinityNone:
		return &SettingsError{Field: "Affinity", Value: strconv.Itoa(int(s.Affinity)), Rule: "must be AffinitySession or AffinityNone"}
	case sl != 0 && !(sl >= 1 && sl <= math.MaxFloat64):
		return &SettingsError{Field: "AffinitySlack", Value: formatFloat(sl), Rule: "must be 0 or a finite number ≥ 1"}
	case s.Penalty < 0:
		return &SettingsError{Field: "Penalty", Value: s.Penalty.String(), Rule: "must not be negative"}
	case s.AttemptTimeout < 0:
		return &SettingsError{Field: "AttemptTimeout", Value: s.AttemptTimeout.String(), Rule: "must not be negative"}
	}
	return nil
}

// validate checks member i, whose predecessors are before.
func (m Member) validate(i int, before []Member) error {
	field := "Members[" + strconv.Itoa(i) + "]"
	switch {
	case m.Name == "":
		return &SettingsError{Field: field + ".Name", Value: `""`, Rule: "must name the deployment"}
	case !(m.Weight > 0 && m.Weight <= math.MaxFloat64):
		return &SettingsError{Field: field + ".Weight", Value: formatFloat(m.Weight), Rule: "must be a finite number above 0"}
	case m.Breaker == nil:
		return &SettingsError{Field: field + ".Breaker", Value: "nil", Rule: "must be a breaker"}
	case m.SlowCallAfter < 0:
		return &SettingsError{Field: field + ".SlowCallAfter", Value: m.SlowCallAfter.String(), Rule: "must not be negative"}
	}
	for j, o := range before {
		if o.Name == m.Name {
			return &SettingsError{Field: field + ".Name", Value: strconv.Quote(m.Name), Rule: "must not repeat Members[" + strconv.Itoa(j) + "]"}
		}
	}
	return nil
}

// formatFloat formats f for an error message.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
