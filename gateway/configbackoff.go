package gateway

import (
	"cmp"
	"math"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"go.yaml.in/yaml/v3"
)

// The breaker keys of SEMANTICS §9.1 (GATEWAY §11.1): repeated trips back
// off. breaker.recovery_backoff is the factor (0 or 1: off) and
// breaker.max_recovery_timeout its cap and the trip count's reset window
// (default 10 × the recovery_timeout in force).

// factor reads breaker.recovery_backoff: a number; the checks are
// backoff's, so a config built in Go gets the same problems.
func (d decoder) factor(dst *float64) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			d.bad(p, n, "%q is not a number (a factor of at least 1, or 0 or 1 for off)", s)
			return
		}
		*dst = v
	}
}

// backoff checks a model's backoff keys at path p (its breaker section):
// the factor finite and at least 1 (0 or 1: off), the cap not negative and
// not below the recovery_timeout in force, explicit or default.
func (ps *problems) backoff(p string, b Breaker) {
	ps.backoffOver(p, b, fallback.DefaultRecoveryTimeout)
}

// backoffOver checks the backoff keys of a breaker section (at path p)
// whose recovery_timeout defaults to rec0: a model's, or a pool's, whose
// members' default is shorter.
func (ps *problems) backoffOver(p string, b Breaker, rec0 time.Duration) {
	switch f := b.RecoveryBackoff; {
	case math.IsNaN(f) || math.IsInf(f, 0):
		ps.add(p+".recovery_backoff", "must be a finite number (got %s)", fmtFactor(f))
	case f < 0:
		ps.add(p+".recovery_backoff", "must not be negative (got %s)", fmtFactor(f))
	case f > 0 && f < 1:
		ps.add(p+".recovery_backoff", "must be at least 1, or 0 or 1 for off (got %s): below 1 it would shorten each repeated cooldown", fmtFactor(f))
	}
	rec := cmp.Or(b.RecoveryTimeout, rec0)
	switch {
	case b.MaxRecoveryTimeout < 0:
		ps.add(p+".max_recovery_timeout", "must not be negative")
	case b.MaxRecoveryTimeout > 0 && b.MaxRecoveryTimeout < rec && b.RecoveryTimeout >= 0:
		ps.add(p+".max_recovery_timeout", "%v is below recovery_timeout (%v in force)", b.MaxRecoveryTimeout, rec)
	}
}

func fmtFactor(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
