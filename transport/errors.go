package transport

import (
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// OpenError is the soft refusal: the request's breaker is open (or its probe
// is in flight), so nothing was sent. It satisfies errors.Is(err,
// breaker.ErrOpen), and errors.As finds both the *OpenError and the
// breaker's [*breaker.OpenError] (through Unwrap), also through the
// *url.Error an [http.Client] wraps it in.
type OpenError struct {
	// Key is the breaker's key (the host, or what Settings.Key returned).
	Key string
	// Err is the breaker's refusal; its RetryIn says how long until a probe
	// may be granted. It is shared between refusals: treat it as read-only.
	Err *breaker.OpenError
}

// Error returns text such as
//
//	transport: circuit breaker open for "api.openai.com"; next probe in 12s
func (e *OpenError) Error() string {
	s := "transport: circuit breaker open for " + strconv.Quote(e.Key)
	if e.Err != nil {
		if e.Err.State == breaker.HalfOpen {
			s += " (a probe is in flight)"
		}
		s += "; next probe in " + e.Err.RetryIn.String()
	}
	return s
}

// RetryIn returns how long until the breaker may grant a probe (0 if unknown).
func (e *OpenError) RetryIn() time.Duration {
	if e.Err == nil {
		return 0
	}
	return e.Err.RetryIn
}

// Is reports whether target is [breaker.ErrOpen].
func (e *OpenError) Is(target error) bool { return target == breaker.ErrOpen }

// Unwrap returns the breaker's refusal (nil if none).
func (e *OpenError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// ProbeTimeoutError is the error of a probe cut at the end of its lease (the
// caller's own deadline had not passed). It is a failure of the probed key,
// and errors.Is(err, context.DeadlineExceeded) holds through Unwrap.
type ProbeTimeoutError struct {
	// Key is the breaker's key.
	Key string
	// Err is the error the request ended with.
	Err error
}

// Error returns text such as
//
//	transport: probe of "api.openai.com" cut at the end of its lease: context deadline exceeded
func (e *ProbeTimeoutError) Error() string {
	return "transport: probe of " + strconv.Quote(e.Key) + " cut at the end of its lease: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *ProbeTimeoutError) Unwrap() error { return e.Err }
