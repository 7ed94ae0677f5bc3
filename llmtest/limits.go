package llmtest

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limits are a deployment's rate limits, enforced and announced the way the
// services do, so that a test can drive a pool (or any client) that reads
// them: every answer carries the wire's rate-limit headers, and a request
// over a limit gets 429 with the wire's rate-limit error, the same headers
// and Retry-After. On the OpenAI wires (chat, Responses, embeddings) the
// headers are x-ratelimit-{limit,remaining,reset}-{requests,tokens}, the
// reset a duration ("1s", "6m0s", "20ms"); on the Messages wire
// anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset},
// the reset an RFC 3339 time.
//
// The limits count in fixed windows: the first request opens one, which
// resets Window later; the next request after that opens the next. Use one
// *Limits per deployment (it is safe for concurrent use) and wrap its script
// with [Limits.Script].
type Limits struct {
	// Requests is the number of requests per window; 0: not limited, and
	// not announced.
	Requests int64
	// InputTokens is the input tokens per window, counted from each reply's
	// Usage (on the OpenAI wires the "tokens" limit, cached tokens
	// included; on the Messages wire the input-tokens limit, which leaves
	// cached tokens out, as Anthropic's does). 0: not limited.
	InputTokens int64
	// OutputTokens is the output tokens per window (announced on the
	// Messages wire only). 0: not limited.
	OutputTokens int64
	// Window is the span of a window. Zero: 1 minute.
	Window time.Duration
	// Now is the clock. Zero (nil): time.Now.
	Now func() time.Time

	mu                    sync.Mutex
	start                 time.Time // the window's start; zero before the first request
	requests, input, outp int64     // used in the window
}

// Script returns s behind l: each request is counted against the window
// (and refused with 429 when a limit is spent), and every answer, s's or
// the refusal, carries the headers of what is left after it.
func (l *Limits) Script(s Script) Script {
	return func(r Request) Reply {
		anthropic := r.Endpoint == "messages" || r.Endpoint == "count_tokens"
		now, over := l.take()
		if over {
			h := l.headers(now, anthropic)
			h.Set("Retry-After", strconv.FormatInt(int64((l.reset().Sub(now)+time.Second-1)/time.Second), 10))
			return Reply{Header: h, Fault: &Fault{Status: http.StatusTooManyRequests, Message: "llmtest: rate limit exceeded"}}
		}
		rep := s(r)
		l.spend(rep.Usage, anthropic)
		rep.Header = merge(rep.Header, l.headers(now, anthropic))
		return rep
	}
}

// take opens a window if none is running and counts a request in it,
// unless a limit is spent (over).
func (l *Limits) take() (now time.Time, over bool) {
	now = time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.start.IsZero() || !now.Before(l.start.Add(l.window())) {
		l.start, l.requests, l.input, l.outp = now, 0, 0, 0
	}
	if spent(l.Requests, l.requests) || spent(l.InputTokens, l.input) || spent(l.OutputTokens, l.outp) {
		return now, true
	}
	l.requests++
	return now, false
}

// spent reports whether a limit (0: none) is used up.
func spent(limit, used int64) bool { return limit > 0 && used >= limit }

// spend counts a reply's tokens.
func (l *Limits) spend(u Usage, anthropic bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if anthropic {
		l.input += u.InputTokens
	} else {
		l.input += u.prompt()
	}
	l.outp += u.OutputTokens
}

func (l *Limits) window() time.Duration {
	if l.Window <= 0 {
		return time.Minute
	}
	return l.Window
}

// reset returns the running window's end.
func (l *Limits) reset() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start.Add(l.window())
}

// headers returns the rate-limit headers of what is left in the window at
// now, on the Messages wire or the OpenAI wires.
func (l *Limits) headers(now time.Time, anthropic bool) http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := http.Header{}
	reset := l.start.Add(l.window())
	put := func(name string, limit, used int64) {
		if limit <= 0 {
			return
		}
		left := strconv.FormatInt(max(0, limit-used), 10)
		if anthropic {
			h.Set("anthropic-ratelimit-"+name+"-limit", strconv.FormatInt(limit, 10))
			h.Set("anthropic-ratelimit-"+name+"-remaining", left)
			// Rounded up to the second: a client must not come back early.
			h.Set("anthropic-ratelimit-"+name+"-reset", reset.Add(time.Second-1).Truncate(time.Second).UTC().Format(time.RFC3339))
			return
		}
		h.Set("x-ratelimit-limit-"+name, strconv.FormatInt(limit, 10))
		h.Set("x-ratelimit-remaining-"+name, left)
		h.Set("x-ratelimit-reset-"+name, reset.Sub(now).Round(time.Millisecond).String())
	}
	put("requests", l.Requests, l.requests)
	if anthropic {
		put("input-tokens", l.InputTokens, l.input)
		put("output-tokens", l.OutputTokens, l.outp)
	} else {
		put("tokens", l.InputTokens, l.input)
	}
	return h
}

// merge returns a with b's values added (a new header when a is nil).
func merge(a, b http.Header) http.Header {
	if a == nil {
		return b
	}
	a = a.Clone()
	for k, vs := range b {
		for _, v := range vs {
			a.Add(k, v)
		}
	}
	return a
}
