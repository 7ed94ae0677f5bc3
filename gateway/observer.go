package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/loopctl/loopctl-go/fallback"
)

// Observer is told of each request on a model endpoint and of each
// upstream attempt the request makes, e.g. to trace them (loopctl serve
// turns them into OpenTelemetry spans when OTEL_EXPORTER_OTLP_ENDPOINT is
// set). A Start method returns the context the request or the attempt goes
// on with, so an observer may carry its own state in it (a span); the
// matching End method gets that context back. The methods are called on
// the request's goroutine (a hedged attempt's StartAttempt on the
// attempt's own), outside the gateway's locks; they must not block. Every
// StartRequest is followed by one EndRequest, every StartAttempt by one
// EndAttempt when the attempt's ticket is settled (for a streamed answer:
// when the stream ends).
type Observer interface {
	// StartRequest is called when a request on a model endpoint arrives,
	// before its key and body are read.
	StartRequest(ctx context.Context, r RequestStart) context.Context
	// EndRequest is called when the request is answered.
	EndRequest(ctx context.Context, r RequestEnd)
	// StartAttempt is called when an attempt is sent to an upstream; its
	// upstream requests (each try of the retry ladder) carry the context
	// it returns.
	StartAttempt(ctx context.Context, a AttemptStart) context.Context
	// EndAttempt is called when the attempt's ticket is settled.
	EndAttempt(ctx context.Context, a AttemptEnd)
}

// RequestStart is what is known of a request when it arrives.
type RequestStart struct {
	// API is the endpoint: chat, responses, embeddings, messages or
	// count_tokens (the request log's api).
	API string
}

// RequestEnd is how a request was answered: the request log line's fields.
type RequestEnd struct {
	API        string // the endpoint, as in RequestStart
	Model      string // the client's model name (the route's, once routed)
	Served     string // the upstream/model that served it ("" if none)
	Attempts   int    // attempts made (turns of the model breaker)
	Status     int    // the HTTP status answered (499: the client went away)
	Outcome    string // the outcome label of loopctl_gateway_requests_total
	Stream     bool   // the client asked for a stream
	Client     string // the client key's name ("" without client_keys)
	Translated string // x-loopctl-translated, when the answer was translated
	Error      string // what went wrong, when the outcome is not a success
}

// AttemptStart is one attempt as the model breaker routed it.
type AttemptStart struct {
	Model    string // the client's model name (the route)
	Target   string // upstream/model
	Upstream string // the upstream's name
	// UpstreamModel is the model name sent upstream (for Azure OpenAI the
	// deployment).
	UpstreamModel string
	// API is the upstream's API: openai, anthropic, bedrock or vertex.
	API string
	// Host is the upstream's host (the base URL's), "" if none.
	Host string
	// Attempt is the attempt's number in the request, from 1.
	Attempt int
	// Probe: the breaker handed out this attempt as a probe of a model
	// whose breaker is open (half-open); Hedge: a hedge of a slow
	// attempt (SEMANTICS §7.4).
	Probe, Hedge bool
	// State and ActiveModel are the model breaker's state and routed
	// model when it routed the attempt.
	State       fallback.State
	ActiveModel string
}

// Verdicts of an attempt's ticket (AttemptEnd.Verdict).
const (
	VerdictSuccess = "success"
	VerdictFailure = "failure"
	VerdictCancel  = "cancel" // no verdict: the client went away, or a rival won
	VerdictSkip    = "skip"   // the entry could not serve the request: no verdict
)

// AttemptEnd is how an attempt's ticket was settled.
type AttemptEnd struct {
	// Verdict is VerdictSuccess, VerdictFailure, VerdictCancel or
	// VerdictSkip; a failure has its Kind.
	Verdict string
	Kind    fallback.Kind
	// Status is the upstream's HTTP status (0: none came).
	Status int
	// Err is the attempt's error (nil on success).
	Err error
	// ResponseModel, InputTokens and OutputTokens are what a whole
	// (non-streamed) answer said of itself; Usage says whether it gave
	// its token counts.
	ResponseModel             string
	InputTokens, OutputTokens int64
	Usage                     bool
	// State and ActiveModel are the model breaker's state and routed
	// model just after the verdict: a change from AttemptStart's is a
	// transition this verdict (or a concurrent request's) caused.
	State       fallback.State
	ActiveModel string
}

// observed is the observer's view of one attempt, shared by the copies of
// its ticket. The attempt's goroutine writes ctx and answer before the
// ticket is settled, and every settlement happens after that goroutine
// has handed its outcome back (a channel receive, hedge.go), so no lock is
// needed.
type observed struct {
	obs     Observer
	mgr     *fallback.Manager
	start   AttemptStart
	ctx     context.Context // set by StartAttempt; nil: never sent
	end     AttemptEnd
	settled bool
}

// observe returns t with an observed attached for attempt n of x (hedge:
// a hedge), when the gateway has an Observer.
func (x *exchange) observe(t ticket, n int, hedge bool) ticket {
	return x.observeOn(t, x.in.rt.targets[t.Model()], n, hedge)
}

// observeMember returns t with an observed attached for the attempt of
// t's pool entry on its member mt (the attempt's Target is the member).
func (x *exchange) observeMember(t ticket, mt *target) ticket {
	if t.seen == nil {
		return t
	}
	return x.observeOn(t, mt, t.seen.start.Attempt+x.walk.pools.extra, t.seen.start.Hedge)
}

// observeOn returns t with an observed attached for attempt n of x on the
// target tg (hedge: a hedge), when the gateway has an Observer.
func (x *exchange) observeOn(t ticket, tg *target, n int, hedge bool) ticket {
	obs := x.g.opt.Observer
	if obs == nil {
		return t
	}
	mgr := x.in.rt.mgr
	a := AttemptStart{Model: x.in.rt.name, Target: t.Model(), Attempt: n, Probe: t.fallback.IsProbe(), Hedge: hedge,
		State: mgr.State(), ActiveModel: mgr.ActiveModel()}
	if tg != nil && tg.up != nil {
		a.Target, a.Upstream, a.UpstreamModel, a.API = tg.ref, tg.up.name, tg.model, tg.up.api
		if tg.up.cloud != nil {
			a.API = tg.up.cloud.api
		}
		for _, u := range tg.up.urls { // parsed once (upstream.prepare)
			if u != nil {
				a.Host = u.Hostname()
				break
			}
		}
	}
	t.seen = &observed{obs: obs, mgr: mgr, start: a}
	return t
}

// sent tells the observer that the attempt is sent; it returns the
// context the attempt goes on with.
func (o *observed) sent(ctx context.Context) context.Context {
	if o == nil {
		return ctx
	}
	o.ctx = o.obs.StartAttempt(ctx, o.start)
	return o.ctx
}

// failed notes the attempt's error, and the upstream's status if it
// answered.
func (o *observed) failed(err error) {
	if o == nil {
		return
	}
	o.end.Err = err
	var ue *upstreamError
	if errors.As(err, &ue) {
		o.end.Status = ue.status
	}
}

// answered notes what a served answer says of itself: its status, and
// for a whole answer its model and token usage (each wire's usage object:
// prompt_tokens and completion_tokens, or input_tokens and
// output_tokens).
func (o *observed) answered(res *result) {
	if o == nil {
		return
	}
	if res.resp != nil {
		o.end.Status = res.resp.StatusCode
	}
	if res.body == nil {
		return
	}
	var a struct {
		Model string `json:"model"`
		Usage *struct {
			Prompt     *int64 `json:"prompt_tokens"`
			Completion *int64 `json:"completion_tokens"`
			Input      *int64 `json:"input_tokens"`
			Output     *int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(res.body.Bytes(), &a) != nil {
		return
	}
	o.end.ResponseModel = a.Model
	if u := a.Usage; u != nil {
		in, out := u.Input, u.Output
		if u.Prompt != nil {
			in, out = u.Prompt, u.Completion
		}
		if in != nil {
			o.end.InputTokens, o.end.Usage = *in, true
		}
		if out != nil {
			o.end.OutputTokens = *out
		}
	}
}

// settle tells the observer how the attempt's ticket was settled, once,
// if the attempt was sent.
func (o *observed) settle(verdict string, k fallback.Kind) {
	if o == nil || o.ctx == nil || o.settled {
		return
	}
	o.settled = true
	o.end.Verdict, o.end.Kind = verdict, k
	if verdict != VerdictFailure {
		o.end.Kind = 0
	}
	o.end.State, o.end.ActiveModel = o.mgr.State(), o.mgr.ActiveModel()
	o.obs.EndAttempt(o.ctx, o.end)
}
