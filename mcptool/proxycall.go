package mcptool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/internal/durtext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaKey is the _meta key under which the proxy describes a refusal or a
// failed call, as a [CallMeta].
const MetaKey = "loopctl/call"

// CallMeta is the machine-readable account of a refused or failed call, in
// the result's _meta[MetaKey]. It is never put in structuredContent, so a
// tool's outputSchema is never violated by it.
type CallMeta struct {
	Outcome Outcome `json:"outcome"`             // refused, failure, server_down, timeout, invalid_arguments, cancel, rejected
	Server  string  `json:"server"`              // the upstream
	Tool    string  `json:"tool"`                // the tool's name on the upstream
	Breaker string  `json:"breaker"`             // the breaker key, "server/tool"
	State   string  `json:"state"`               // the breaker's state after the call: closed, open, half-open
	RetryMs int64   `json:"retryAfterMs"`        // until the tool may be called again (0: now)
	Error   string  `json:"error,omitempty"`     // what went wrong
	Probe   bool    `json:"probe,omitempty"`     // the call was the breaker's probe
	Alts    []Alt   `json:"alternatives"`        // other tools that can serve
	Timeout int64   `json:"timeoutMs,omitempty"` // the deadline a timed-out call had
}

// Alt is another tool that can serve, with whether its breaker would take a
// call now.
type Alt struct {
	Tool      string `json:"tool"`
	Available bool   `json:"available"`
}

// call runs one call of pt: gate, deadline, upstream call, verdict, result.
// progress, if not nil, receives the server's progress notifications.
func (p *Proxy) call(ctx context.Context, pt *proxyTool, args []byte, progress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, CallInfo) {
	start := time.Now()
	info := CallInfo{Name: pt.name, Server: pt.up.Name(), Tool: pt.tool, Breaker: pt.key}
	opts := p.toolOptions(pt.key)
	permit, err := p.reg.Allow(pt.key)
	if err != nil {
		info.Outcome, info.Err, info.Duration = OutcomeRefused, err, time.Since(start)
		res := p.failed(pt, info, retryIn(err), opts)
		p.finish(info)
		return res, info
	}
	info.Probe = permit.IsProbe()
	cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if end, ok := permit.Deadline(); ok {
		// The lease is on the breakers' clock: apply what remains of it.
		lease := end.Sub(p.now())
		var cancelLease context.CancelFunc
		cctx, cancelLease = context.WithTimeout(cctx, lease)
		defer cancelLease()
		opts.Timeout = min(opts.Timeout, lease) // for the timeout's text
	}
	if dl, ok := ctx.Deadline(); ok {
		opts.Timeout = min(opts.Timeout, time.Until(dl)) // the caller's deadline came first
	}
	settled := false
	defer func() {
		if !settled { // a panic below: leave no probe slot held
			permit.Cancel()
		}
	}()
	began := time.Now()
	res, err := pt.up.CallToolProgress(cctx, pt.tool, args, progress)
	took := time.Since(began)
	settled = true
	outcome, v := classify(ctx, cctx, res, err, opts)
	settle(permit, v, took)
	info.Outcome, info.Err, info.Duration = outcome, err, time.Since(start)
	if err == nil {
		p.finish(info)
		return res, info
	}
	var wait time.Duration
	if de, ok := errors.AsType[*DownError](err); ok {
		wait = de.RetryIn
	}
	if b := p.reg.Breaker(pt.key); b.State() != breaker.Closed {
		wait = max(wait, b.RetryIn())
	}
	res = p.failed(pt, info, wait, opts)
	p.finish(info)
	return res, info
}

// settle gives permit verdict v of a call that took took: a success's result
// is its first content (SEMANTICS §8.2).
func settle(permit health.Permit, v verdict, took time.Duration) {
	switch v {
	case verdictSuccess:
		permit.SuccessAfter(took)
	case verdictFailure:
		permit.Failure()
	case verdictTimeout:
		permit.Timeout()
	default:
		permit.Cancel()
	}
}

// retryIn returns the wait a refusal carries.
func retryIn(err error) time.Duration {
	if oe, ok := errors.AsType[*breaker.OpenError](err); ok {
		return oe.RetryIn
	}
	return 0
}

// finish reports a call to OnCall and the log.
func (p *Proxy) finish(info CallInfo) {
	level := slog.LevelInfo
	switch info.Outcome {
	case OutcomeFailure, OutcomeTimeout, OutcomeRefused:
		level = slog.LevelWarn
	}
	if p.log.Enabled(context.Background(), level) {
		attrs := []slog.Attr{
			slog.String("server", info.Server), slog.String("tool", info.Tool),
			slog.String("outcome", string(info.Outcome)), slog.Duration("duration", info.Duration),
			slog.Bool("probe", info.Probe), slog.String("state", p.reg.Breaker(info.Breaker).State().String()),
		}
		if info.Err != nil {
			attrs = append(attrs, slog.String("error", info.Err.Error()))
		}
		p.log.LogAttrs(context.Background(), level, "mcp call", attrs...)
	}
	if p.cfg.OnCall != nil {
		p.cfg.OnCall(info)
	}
}

// failed builds the isError result of a refused or failed call: a text the
// model can act on and the same facts under _meta.
func (p *Proxy) failed(pt *proxyTool, info CallInfo, wait time.Duration, opts ToolOptions) *mcp.CallToolResult {
	b := p.reg.Breaker(pt.key)
	meta := CallMeta{
		Outcome: info.Outcome, Server: info.Server, Tool: info.Tool, Breaker: info.Breaker,
		State: b.State().String(), RetryMs: durtext.RoundUp(wait).Milliseconds(), Probe: info.Probe,
		Alts: []Alt{},
	}
	if info.Err != nil {
		meta.Error = info.Err.Error()
	}
	var text strings.Builder
	switch info.Outcome {
	case OutcomeRefused:
		fmt.Fprintf(&text, "tool temporarily unavailable: circuit breaker open for tool %s", describe(pt))
		if info.Server != "" && !pt.up.Status().Up {
			text.WriteString(", whose server is down and restarting")
		}
	case OutcomeTimeout:
		meta.Timeout = opts.Timeout.Milliseconds()
		// the deadline the call had (--timeout 1s reads "1s"), not the time measured
		fmt.Fprintf(&text, "tool %s timed out after %v", describe(pt), durtext.RoundUp(opts.Timeout))
	case OutcomeInvalidArguments:
		fmt.Fprintf(&text, "invalid arguments for tool %s: %v", describe(pt), info.Err)
	case OutcomeCancel:
		fmt.Fprintf(&text, "tool %s was cancelled", describe(pt))
	case OutcomeServerDown:
		fmt.Fprintf(&text, "tool %s is unavailable: %s", describe(pt), downReason(info.Err))
	case OutcomeRejected:
		fmt.Fprintf(&text, "tool %s was not run: its server refused the request's protocol version (%v)", describe(pt), info.Err)
	default:
		fmt.Fprintf(&text, "tool %s failed: %v", describe(pt), info.Err)
	}
	if info.Outcome != OutcomeInvalidArguments && info.Outcome != OutcomeCancel {
		text.WriteString("; retry " + durtext.Wait(wait))
		alts := p.alternatives(pt)
		if len(alts) == 0 {
			text.WriteString("; no other tool can serve it")
		} else {
			text.WriteString("; other tools that can serve it: ")
			for i, name := range alts {
				ok := p.reg.WouldAllow(p.servedKey(name))
				meta.Alts = append(meta.Alts, Alt{Tool: name, Available: ok})
				if i > 0 {
					text.WriteString(", ")
				}
				text.WriteString(name)
				if ok {
					text.WriteString(" (available)")
				} else {
					text.WriteString(" (unavailable)")
				}
			}
		}
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: text.String()}},
		IsError: true,
		Meta:    mcp.Meta{MetaKey: meta},
	}
}

// now reads the breakers' clock.
func (p *Proxy) now() time.Time {
	if p.cfg.Breaker.Now != nil {
		return p.cfg.Breaker.Now()
	}
	return time.Now()
}

// downReason says why a call found its server down: what a person must do
// when the server wants an OAuth login (a restart will not help), else that
// it is restarting.
func downReason(err error) string {
	if login, ok := errors.AsType[*LoginRequiredError](err); ok {
		return login.Error()
	}
	return "its server is down and restarting"
}
