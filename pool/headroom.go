package pool

import "time"

// Limit is one rate-limit figure an answer carried: how much the provider
// said was left, and when that limit resets.
type Limit struct {
	// Remaining is what is left (requests or tokens) as of the answer.
	Remaining int64
	// Reset is when the limit is whole again. Zero: the figure is ignored
	// (a remaining figure without its reset says nothing of when it ends).
	// A reset at or before the answer's arrival restores the limit.
	Reset time.Time
}

// Headroom is what one answer of a member said it has left, as parsed from
// its headers (the gateway reads OpenAI's x-ratelimit-* and Anthropic's
// anthropic-ratelimit-*; GATEWAY §11.3). A zero Limit is a figure the answer
// did not carry.
type Headroom struct {
	// Requests is the request limit (x-ratelimit-*-requests,
	// anthropic-ratelimit-requests-*).
	Requests Limit
	// Tokens is a token limit compared with the request's whole input
	// estimate, [Need].Tokens (x-ratelimit-*-tokens).
	Tokens Limit
	// InputTokens is a token limit compared with the request's uncached
	// input estimate, [Need].InputTokens
	// (anthropic-ratelimit-input-tokens-*).
	InputTokens Limit
	// OutputTokens is an output-token limit: none left means no headroom
	// (anthropic-ratelimit-output-tokens-*).
	OutputTokens Limit
}

// Need is what a request asks of a member, for [Pool.Choose].
type Need struct {
	// Session is the request's session: it homes the request (zero: none).
	Session Session
	// Stream says the request streams: its cost reads the member's stream
	// latency estimate, else the whole-answer one.
	Stream bool
	// Tokens is the request's estimated whole input, compared with a
	// member's Tokens headroom. Zero: not estimated.
	Tokens int64
	// InputTokens is the estimated input a provider counts against its
	// input-token limit (at Anthropic, the uncached input: the tokens after
	// the last cache breakpoint, or the whole estimate with none).
	InputTokens int64
	// CanServe reports whether member i (an index into Settings.Members)
	// can serve the request (its wire, its parameters). It is called
	// outside every lock. Zero (nil): every member can.
	CanServe func(i int) bool
}

// figure is one kind of headroom: R's figure (the answer whose request
// started latest among those that carried it) and the count at R's start.
type figure struct {
	set       bool
	seq       uint64 // R's start sequence
	remaining int64
	reset     int64
	arrived   int64
	base      int64 // tokens started up to and including R (requests: unused)
}

// note records l from an answer that arrived at now, of the attempt that
// started with sequence seq and count base. An answer whose request started
// before R's changes nothing; a reset in the past restores the figure.
func (f *figure) note(now int64, l Limit, seq uint64, base int64) {
	if l.Reset.IsZero() || f.set && seq < f.seq {
		return
	}
	reset := l.Reset.UnixNano()
	if reset <= now {
		*f = figure{}
		return
	}
	*f = figure{set: true, seq: seq, remaining: l.Remaining, reset: reset, arrived: now, base: base}
}

// requestsUntil returns when d has request headroom again: 0 if now.
// Requests started after R's are counted against R's remaining figure.
func (d *deployment) requestsUntil(now int64) int64 {
	f := &d.requests
	if !f.set || now >= f.reset || f.remaining-int64(d.starts-f.seq-1) > 0 {
		return 0
	}
	return f.reset
}

// tokensUntil returns when figure f (counted against the running total
// total) has room for need tokens again: 0 if now. A token bucket refills
// continuously, so a member out of tokens is admitted again at the earlier
// of its reset and 1 s after R arrived.
func tokensUntil(f *figure, now, total, need int64) int64 {
	if !f.set {
		return 0
	}
	until := min(f.reset, f.arrived+int64(time.Second))
	if now >= until || f.remaining-(total-f.base) >= need {
		return 0
	}
	return until
}

// headroomUntil returns when d has headroom for a request needing n again:
// 0 if it has now.
func (d *deployment) headroomUntil(now int64, n *Need) int64 {
	u := d.requestsUntil(now)
	u = max(u, tokensUntil(&d.tok, now, d.tokens, n.Tokens))
	u = max(u, tokensUntil(&d.inTok, now, d.input, n.InputTokens))
	if f := &d.outTok; f.set && f.remaining <= 0 {
		u = max(u, tokensUntil(f, now, 0, 1))
	}
	return u
}

// ample reports that no headroom figure of d is out for a request needing
// n, whatever the time: each figure is unset or has room by its count, so
// headroomUntil is 0. It is the common case, decided without the resets.
func (d *deployment) ample(n *Need) bool {
	return (!d.requests.set || d.requests.remaining-int64(d.starts-d.requests.seq-1) > 0) &&
		(!d.tok.set || d.tok.remaining-(d.tokens-d.tok.base) >= n.Tokens) &&
		(!d.inTok.set || d.inTok.remaining-(d.input-d.inTok.base) >= n.InputTokens) &&
		(!d.outTok.set || d.outTok.remaining > 0)
}

// noteHeadroom records the figures of an answer of attempt a that arrived at
// now.
func (d *deployment) noteHeadroom(now int64, h *Headroom, a *Attempt) {
	d.requests.note(now, h.Requests, a.seq, 0)
	d.tok.note(now, h.Tokens, a.seq, a.tokBase)
	d.inTok.note(now, h.InputTokens, a.seq, a.inBase)
	d.outTok.note(now, h.OutputTokens, a.seq, 0)
	d.limited = d.requests.set || d.tok.set || d.inTok.set || d.outTok.set
}
