package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/internal/retrybudget"
	"github.com/loopctl/loopctl-go/retry"
)

// Settings configures a [RoundTripper]. The zero value is usable: one breaker
// per host with the breaker's defaults, the default retry ladder, over
// [http.DefaultTransport].
type Settings struct {
	// Base sends the requests. nil: [http.DefaultTransport].
	Base http.RoundTripper

	// Key returns the name of the breaker a request goes through, e.g.
	// r.URL.Host + " " + r.Header.Get("X-Model"). It is called once per
	// request, on the caller's goroutine, and must not read the body.
	// nil: the request's host (r.URL.Host, with its port if given).
	Key func(r *http.Request) string

	// Breaker configures the breaker of every key (see [health.NewRegistry]:
	// Name is ignored and OnStateChange receives the key). Breaker.Now is
	// also the clock the probe's remaining lease and Retry-After dates are
	// measured on. Zero: the breaker's defaults (3 failures trip it, 30s
	// cooldown, 30s probe lease). Negative values: [New] returns an error.
	Breaker breaker.Settings

	// Retry is the ladder around each request. Zero: [retry.Policy]'s
	// defaults (3 transient retries from 100ms with full jitter; 3
	// rate-limited retries honouring Retry-After up to 60s, else 5s).
	// MaxRetries negative: no transient retries. An invalid policy: [New]
	// returns an error.
	Retry retry.Policy

	// RetryBudget is what each request adds to its key's retry budget
	// (SEMANTICS §8.3): each retry and rate-limited wait of the
	// ladder spends one token, and with less than one the ladder makes no
	// retry (the last answer is returned as it is). The budget of a key
	// starts full. Zero: 0.2; negative: off (the ladder alone limits
	// retries); NaN: an error.
	RetryBudget float64
	// RetryBudgetBurst is the size of each key's retry budget. Zero: 10.
	// Negative (or NaN): an error.
	RetryBudgetBurst float64
}

// RoundTripper is an [http.RoundTripper] that sends every request through a
// breaker and the retry ladder; see the package documentation. Create it
// with [New]. A RoundTripper is safe for concurrent use.
type RoundTripper struct {
	base   http.RoundTripper
	key    func(*http.Request) string
	reg    *health.Registry
	policy retry.Policy
	now    func() time.Time

	budgetFeed, budgetBurst float64
	budgets                 sync.Map // key -> *retrybudget.Bucket
}

var _ http.RoundTripper = (*RoundTripper)(nil)

// New returns a RoundTripper configured by s. Invalid breaker settings or an
// invalid retry policy are an error naming the field.
func New(s Settings) (*RoundTripper, error) {
	reg, err := health.NewRegistry(s.Breaker)
	if err != nil {
		return nil, fmt.Errorf("transport: Settings.Breaker: %w", err)
	}
	if err := s.Retry.Validate(); err != nil {
		return nil, fmt.Errorf("transport: Settings.Retry: %w", err)
	}
	if math.IsNaN(s.RetryBudget) {
		return nil, errors.New("transport: Settings.RetryBudget must be a number (got NaN)")
	}
	if !(s.RetryBudgetBurst >= 0) {
		return nil, fmt.Errorf("transport: Settings.RetryBudgetBurst must not be negative (got %v)", s.RetryBudgetBurst)
	}
	t := &RoundTripper{base: s.Base, key: s.Key, reg: reg, policy: s.Retry, now: s.Breaker.Now,
		budgetFeed: s.RetryBudget, budgetBurst: s.RetryBudgetBurst}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.now == nil {
		t.now = time.Now
	}
	return t, nil
}

// Registry returns the registry holding one breaker (and its statistics) per
// key, for dashboards and tests: its reads are pure.
func (t *RoundTripper) Registry() *health.Registry { return t.reg }

// Key returns the breaker key of r, as Settings.Key says.
func (t *RoundTripper) Key(r *http.Request) string {
	if t.key != nil {
		return t.key(r)
	}
	return r.URL.Host
}

// RoundTrip sends r through its key's breaker and the retry ladder. It
// returns an [*OpenError] without sending anything when the breaker refuses,
// the last response (whatever its status) when one was received, and the
// last error otherwise. Like every RoundTripper it closes r.Body, and it does
// not modify r.
func (t *RoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	key := t.Key(r)
	p, err := t.reg.Allow(key)
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		oe, _ := errors.AsType[*breaker.OpenError](err)
		return nil, &OpenError{Key: key, Err: oe}
	}
	var (
		parent = r.Context()
		cancel context.CancelFunc
		lease  context.Context
	)
	if end, ok := p.Deadline(); ok {
		lease, cancel = context.WithTimeout(r.Context(), end.Sub(t.now()))
		r = r.WithContext(lease)
	}
	b := t.budget(key)
	b.Feed()
	began := time.Now()
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode >= 400 {
		resp, err = t.ladder(r, b, resp, err)
	}
	if err != nil {
		if lease != nil && lease.Err() == context.DeadlineExceeded && parent.Err() == nil {
			err = &ProbeTimeoutError{Key: key, Err: err}
		}
		settle(p, parent, err, 0)
		if cancel != nil {
			cancel()
		}
		return nil, err
	}
	return pass(resp, p, parent, cancel, began), nil
}

// ladder retries the request whose first attempt returned (resp, err) (an
// error or an error status) and returns the last attempt's response, or the
// error when there is no response to give (no response at all, the context
// ended, or the body could not be replayed).
func (t *RoundTripper) ladder(r *http.Request, b *retrybudget.Bucket, resp *http.Response, err error) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return resp, err // not replayable: one attempt
	}
	ctx := r.Context()
	last, first := resp, true
	pol := t.policy
	if !b.Off() {
		user := pol.Budget
		pol.Budget = func() bool { return (user == nil || user()) && b.Spend() }
	}
	_, err = retry.Do(ctx, pol, func(ctx context.Context) (struct{}, error) {
		if first {
			first = false
			return struct{}{}, t.attemptError(last, err)
		}
		discard(last)
		last = nil
		rr := r.WithContext(ctx)
		if r.GetBody != nil {
			b, berr := r.GetBody()
			if berr != nil {
				return struct{}{}, retry.Unrecoverable(fmt.Errorf("transport: replaying the request body: %w", berr))
			}
			rr.Body = b
		}
		resp, aerr := t.base.RoundTrip(rr)
		last = resp
		return struct{}{}, t.attemptError(resp, aerr)
	})
	if err == nil || (last != nil && ctx.Err() == nil) {
		return last, nil
	}
	discard(last)
	return nil, err
}

// budget returns the retry budget of key.
func (t *RoundTripper) budget(key string) *retrybudget.Bucket {
	if b, ok := t.budgets.Load(key); ok {
		return b.(*retrybudget.Bucket)
	}
	nb := new(retrybudget.Bucket)
	nb.Init(t.budgetFeed, t.budgetBurst)
	b, _ := t.budgets.LoadOrStore(key, nb)
	return b.(*retrybudget.Bucket)
}

// attemptError is the error the ladder classifies for one attempt: err, or a
// *retry.StatusError for an error status (with its kind and hint: the
// headers' hint, and for 403, 429 and 5xx the provider's error type, code and
// message read ahead from the body, which the caller still reads whole), or
// nil.
func (t *RoundTripper) attemptError(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	if resp.StatusCode < 400 {
		return nil
	}
	now := t.now()
	se := &retry.StatusError{
		Code:       resp.StatusCode,
		RetryAfter: retry.RetryAfterFromHeader(resp.Header, now),
		Hint:       retry.HintFromHeader(resp.Header, now),
		Err:        errStatus,
	}
	if peeksBody(resp.StatusCode) {
		se.Type, se.ErrorCode, se.Message = peekError(resp)
	}
	se.Limit = retry.LimitFor(se.Code, se.Type, se.ErrorCode, se.Message)
	return se
}

// errStatus is the Err of the StatusError of an error response.
var errStatus = errors.New("transport: error status")

// discard drains a little of an unused response's body, so its connection
// can be reused, and closes it.
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}
