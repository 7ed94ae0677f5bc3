package cli

import (
	"fmt"
	"log/slog"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/gateway"
)

// openStore connects to the breaker store of cfg. A store that does not
// answer at start is no hard dependency (docs/GATEWAY.md §7, docs/FLEET.md):
// unless store.required is true, serve starts with local breakers and the
// store joins when it answers (fleet.Options.Required). Every change of the
// store's state is logged. The returned function closes the store.
func openStore(cfg gateway.Store, log *slog.Logger) (*fleet.Store, func(), error) {
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = fleet.DefaultPrefix
	}
	onChange := func(up bool) {
		if up {
			log.Info("store up: breakers share their state", "store", prefix)
		} else {
			log.Warn("store down: breakers run locally until it answers", "store", prefix)
		}
	}
	store, err := fleet.Dial(cfg.Redis, fleet.Options{Prefix: prefix, OnStoreChange: onChange, Required: cfg.Required})
	if err != nil {
		return nil, nil, err
	}
	if err := store.DialError(); err != nil {
		log.Warn("store down at start: breakers run locally until it answers", "store", prefix, "err", err.Error())
	}
	return store, store.Close, nil
}

// storeMode is /readyz's word on where the breakers' state lives.
func storeMode(s *fleet.Store) func() string {
	return func() string {
		if s.Up() {
			return "store: shared"
		}
		return "store: local; the store does not answer, breakers run locally until it does"
	}
}

// logTransitions logs every breaker transition: the model, the states, the
// model routed to and why.
func logTransitions(log *slog.Logger) func(string, fallback.Transition) {
	return func(model string, t fallback.Transition) {
		log.Warn("breaker", "model", model, "from", t.From.String(), "to", t.To.String(),
			"routed", t.ToModel, "reason", transitionReason(t))
	}
}

func transitionReason(t fallback.Transition) string {
	switch {
	case t.From == fallback.Primary && t.To == fallback.Fallback:
		return fmt.Sprintf("%s failed trip_threshold times in a row", t.FromModel)
	case t.From == fallback.Fallback && t.To == fallback.Fallback:
		if t.ToModel == "" {
			return "the chain is spent"
		}
		return fmt.Sprintf("%s failed max_fail_count times", t.FromModel)
	case t.To == fallback.Recovering:
		return "recovery_timeout passed: probing the primary"
	case t.From == fallback.Recovering && t.To == fallback.Primary:
		return "the probes succeeded"
	case t.From == fallback.Recovering && t.To == fallback.Fallback:
		return "the probe failed"
	case t.To == fallback.Primary:
		return "reset"
	}
	return "transition"
}
