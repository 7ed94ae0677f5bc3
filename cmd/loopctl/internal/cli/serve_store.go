package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

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
// model routed to and why. A transition an operator caused says so, with
// the act, the operator's name, reason and end (GATEWAY §9.2): never a
// failure that did not happen.
func logTransitions(log *slog.Logger) func(string, fallback.Transition) {
	return func(model string, t fallback.Transition) {
		attrs := []any{"model", model, "from", t.From.String(), "to", t.To.String(),
			"routed", t.ToModel, "reason", transitionReason(t)}
		if t.Manual != "" {
			why, who := operatorReason(t.Reason)
			attrs = append(attrs, "cause", "operator", "action", t.Manual, "by", who, "operator_reason", why)
			if !t.Until.IsZero() {
				attrs = append(attrs, "until", t.Until.UTC().Format(time.RFC3339))
			}
		}
		log.Warn("breaker", attrs...)
	}
}

// operatorReason splits the reason the gateway stores for an admin act,
// "REASON (by NAME)", into the reason given and the admin key's name.
func operatorReason(s string) (why, who string) {
	i := strings.LastIndex(s, " (by ")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return s, ""
	}
	return s[:i], s[i+len(" (by ") : len(s)-1]
}

// manualReason is the reason of a transition an operator caused.
func manualReason(t fallback.Transition) string {
	why, who := operatorReason(t.Reason)
	by := "an operator"
	if who != "" {
		by += " (" + who + ")"
	}
	s := ""
	switch t.Manual {
	case "hold":
		s = t.FromModel + " held by " + by
	case "hold_end":
		s = "the operator's hold of " + t.ToModel + " ended: probing it"
	case "disable":
		s = t.FromModel + " disabled by " + by
	case "disable_end":
		s = "an operator's disable ended: " + t.ToModel + " is back in the chain"
	case "enable":
		s = t.ToModel + " enabled by " + by
	case "reset":
		s = "reset by " + by
	default:
		s = t.Manual + " by " + by
	}
	if t.Manual == "hold" || t.Manual == "disable" {
		if !t.Until.IsZero() {
			s += " until " + t.Until.UTC().Format(time.RFC3339)
		}
		if why != "" {
			s += ": " + why
		}
	}
	return s
}

func transitionReason(t fallback.Transition) string {
	switch {
	case t.Manual != "":
		return manualReason(t)
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

// fleetStore opens the store that store.redis names, if any, and shares the
// gateway's breakers through it (opts). The close it returns is a no-op
// without a store; ok is false, with the reason written to stderr, when the
// store cannot be opened.
func fleetStore(cfg gateway.Store, opts *gateway.Options, log *slog.Logger, stderr io.Writer) (store *fleet.Store, closeStore func(), ok bool) {
	if cfg.Redis == "" {
		return nil, func() {}, true
	}
	st, closeStore, err := openStore(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl serve: store.redis: %v\n", err)
		return nil, nil, false
	}
	shareThroughStore(opts, st)
	return st, closeStore, true
}
