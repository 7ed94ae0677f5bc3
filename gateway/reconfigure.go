package gateway

import (
	"errors"

	"github.com/loopctl/loopctl-go/fallback"
)

// reconfigure applies s to rt's breaker in place (fallback.Manager's
// Reconfigure): its state, holds and disables are kept.
func (g *Gateway) reconfigure(rt *route, s fallback.Settings) error {
	s.OnTransition = g.transitions(rt.name)
	r, ok := any(rt.mgr).(interface{ Reconfigure(fallback.Settings) error })
	if !ok {
		return errors.New("fallback.Manager has no Reconfigure (merge the hold branch)")
	}
	return r.Reconfigure(s)
}
