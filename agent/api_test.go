package agent_test

import (
	"context"
	"time"

	"github.com/loopctl/loopctl-go/agent"
)

// The agent's revision 2 names (SEMANTICS rev 2, docs/API.md "Revision 2
// additions": the non-idempotent tool option, the stop reason, run ids and
// the fall-through in events): this file stops compiling if one drifts.
var (
	_               = agent.Tool{Timeout: time.Duration(0), NotIdempotent: false}
	_               = agent.Response{StopReason: agent.StopReason("")}
	_               = agent.Result{StopReason: agent.StopEnd, RunID: ""}
	_               = agent.TurnRecord{StopReason: agent.StopLength}
	_               = agent.Event{RunID: "", StopReason: agent.StopToolCalls, FallThrough: ""}
	_               = agent.Response{Model: ""}
	_               = agent.Event{Usage: agent.Usage{}, ResponseModel: ""}
	_               = agent.Event{FailedOver: false} // rev 3
	_               = agent.TurnRecord{FailedOver: false}
	_               = []agent.EventKind{agent.EventTurnRefused}
	_ error         = &agent.UnavailableError{Tool: "", Err: nil} // issue 19 item 17
	_ agent.Outcome = agent.OutcomeUnavailable
	_               = []agent.StopReason{agent.StopEnd, agent.StopLength, agent.StopToolCalls, agent.StopContentFilter}

	_ func(context.Context, string) context.Context = agent.ContextWithRunID
	_ func(context.Context) (string, bool)          = agent.RunIDFromContext
	_ func(context.Context) (int, int, bool)        = agent.AttemptFromContext
)
