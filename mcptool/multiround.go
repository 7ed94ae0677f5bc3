package mcptool

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client on 2026-07-28 or later cannot be sent a request while its call is
// served: the server answers the call with the input it needs
// (inputRequests, with a requestState) and the client calls again with the
// answers (SEP-2322, multi round-trip requests). An upstream on an earlier
// version asks its host in the middle of the call and waits. So for such a
// client the proxy runs the upstream call in the background, answers the
// client's call with each request the upstream makes of its host, and hands
// the answers the client's next call carries to the waiting upstream, until
// the upstream's result is the answer. The client's cancelling a round ends
// the call; between rounds the call has its own deadline, as any (the tool's
// timeout), so a state the client never comes back with ends with it.

// multiRound reports whether ss's client is asked through its calls' results.
func multiRound(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= "2026-07-28"
}

// pendingCall is an upstream call of a new-protocol client, running in the
// background.
type pendingCall struct {
	asks chan *hostAsk            // the upstream's requests for the host
	done chan *mcp.CallToolResult // the call's result; buffered
	mu   sync.Mutex               // guards wait
	wait map[string]*hostAsk      // asked of the client, by input request id
	ids  atomic.Int64             // source of input request ids
	stop context.CancelFunc       // ends the call: its client gave up on a round
}

// hostAsk is one request of the upstream for the host, waiting for its answer.
type hostAsk struct {
	req    mcp.InputRequest
	answer chan mcp.InputResponse // buffered
}

// pendingCalls are the calls waiting for their client's next round, by
// request state.
type pendingCalls struct {
	mu sync.Mutex
	m  map[string]*pendingCall
	n  atomic.Int64
}

// put keeps pc until the client's next round and returns its state.
func (ps *pendingCalls) put(pc *pendingCall) string {
	state := "loopctl-call-" + strconv.FormatInt(ps.n.Add(1), 10)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[string]*pendingCall{}
	}
	ps.m[state] = pc
	return state
}

// take returns and forgets the call of state (nil if none).
func (ps *pendingCalls) take(state string) *pendingCall {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	pc := ps.m[state]
	delete(ps.m, state)
	return pc
}

// drop forgets every state of pc.
func (ps *pendingCalls) drop(pc *pendingCall) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for k, v := range ps.m {
		if v == pc {
			delete(ps.m, k)
		}
	}
}

// askAs asks the client of pc for req and returns its answer as an R.
func askAs[R mcp.InputResponse](ctx context.Context, pc *pendingCall, req mcp.InputRequest) (R, error) {
	var zero R
	a := &hostAsk{req: req, answer: make(chan mcp.InputResponse, 1)}
	select {
	case pc.asks <- a:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case r := <-a.answer:
		if v, ok := r.(R); ok {
			return v, nil
		}
		return zero, fmt.Errorf("mcptool: the client answered %T, want %T", r, zero)
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// callMultiRound serves one round of a new-protocol client's call of pt:
// the first starts the upstream call, a later one (with a request state)
// delivers the answers its call carries.
func (p *Proxy) callMultiRound(ctx context.Context, pt *proxyTool, req *mcp.CallToolRequest, relay func(*mcp.ProgressNotificationParams)) *mcp.CallToolResult {
	if state := req.Params.RequestState; state != "" {
		pc := p.pending.take(state)
		if pc == nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("tool %s: the call this answers has ended (its request state %q is unknown)", describe(pt), state)}}}
		}
		pc.mu.Lock()
		for id, r := range req.Params.InputResponses {
			if a := pc.wait[id]; a != nil {
				delete(pc.wait, id)
				a.answer <- r
			}
		}
		pc.mu.Unlock()
		return p.nextRound(ctx, pc)
	}
	pc := &pendingCall{asks: make(chan *hostAsk), done: make(chan *mcp.CallToolResult, 1), wait: map[string]*hostAsk{}}
	// The call outlives this round's request, and ends with the proxy.
	if !p.background() {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("tool %s was not called: the proxy is closing", describe(pt))}}}
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pc.stop = cancel
	go func() {
		defer p.wg.Done()
		defer cancel()
		go func() {
			select {
			case <-p.closing:
				cancel()
			case <-cctx.Done():
			}
		}()
		defer p.pending.drop(pc)
		defer p.callers.enter(pt.up, caller{ss: req.Session, pc: pc})()
		res, _ := p.call(cctx, pt, req.Params.Arguments, relay)
		pc.done <- res
	}()
	return p.nextRound(ctx, pc)
}

// nextRound waits for pc's next request for the host (answered to the client
// as input it must give) or its result.
func (p *Proxy) nextRound(ctx context.Context, pc *pendingCall) *mcp.CallToolResult {
	select {
	case a := <-pc.asks:
		id := "input-" + strconv.FormatInt(pc.ids.Add(1), 10)
		pc.mu.Lock()
		pc.wait[id] = a
		pc.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{id: a.req}, RequestState: p.pending.put(pc)}
	case res := <-pc.done:
		return res
	case <-ctx.Done():
		// The client gave up on its call: so does the proxy, and the cut
		// reaches the upstream (the answer is not sent).
		pc.stop()
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the call was cancelled"}}}
	}
}

// background counts one more background call, unless the proxy is closing
// (then false): Close waits for every call counted.
func (p *Proxy) background() bool {
	p.bgMu.Lock()
	defer p.bgMu.Unlock()
	select {
	case <-p.closing:
		return false
	default:
	}
	p.wg.Add(1)
	return true
}
