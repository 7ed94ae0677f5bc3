package retry

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/internal/durtext"
)

// Class is the rung of the ladder an error belongs to; see [Classify].
type Class int

const (
	// Transient errors are retried with exponential backoff and jitter.
	Transient Class = iota
	// RateLimited errors (HTTP 429) are retried on their own budget,
	// honouring the server's Retry-After hint, and eventually escalate.
	RateLimited
	// Permanent errors are never retried.
	Permanent
)

// String returns "transient", "rate-limited" or "permanent"
// ("Class(n)" for any other value).
func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case RateLimited:
		return "rate-limited"
	case Permanent:
		return "permanent"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Classify reports how the ladder treats err. The whole chain of err is
// searched (errors.Is / errors.As), in this order:
//
//   - an error marked with [Unrecoverable]: Permanent;
//   - context.Canceled: Permanent (cancellation is never retried);
//   - an [*EscalationError]: RateLimited;
//   - a [*StatusError]: 429 is RateLimited; 408 and every 5xx (500, 502,
//     503, 504, 529, ...) are Transient; every other 4xx is Permanent; any
//     other code (1xx, 2xx, 3xx, nonsense) is Transient;
//   - everything else, including context.DeadlineExceeded, net.Error
//     timeouts, connection errors (refused, reset, closed) and
//     io.ErrUnexpectedEOF: Transient. An error the ladder does not
//     recognise is given the benefit of the doubt.
//
// Classify(nil) returns Transient, the zero Class; nil is not a failure and
// [Do] never classifies it.
func Classify(err error) Class {
	if err == nil {
		return Transient
	}
	if _, ok := errors.AsType[*unrecoverableError](err); ok {
		return Permanent
	}
	if errors.Is(err, context.Canceled) {
		return Permanent
	}
	if _, ok := errors.AsType[*EscalationError](err); ok {
		return RateLimited
	}
	if se, ok := errors.AsType[*StatusError](err); ok {
		return classifyCode(se.Code)
	}
	return Transient
}

// classifyCode classifies an HTTP status code.
func classifyCode(code int) Class {
	switch {
	case code == http.StatusTooManyRequests:
		return RateLimited
	case code == http.StatusRequestTimeout:
		return Transient
	case code >= 400 && code < 500:
		return Permanent
	default: // 5xx and anything that is not a client error
		return Transient
	}
}

// StatusError is how adapters report an HTTP failure: the response's status
// code, the server's hint (as a wait and as a time), what the provider said
// about it (its error message, code and type, when the body carried them),
// the kind of rate limit it is, and the underlying error (typically the
// SDK's error, or the response body). [Classify] uses Code; [Do] uses the
// kind ([LimitOf]) and RetryAfter (else Hint) for rate-limited retries.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// RetryAfter is the server's hint of when to try again
	// (see [RetryAfterFromHeader]); 0 means no hint.
	RetryAfter time.Duration
	// Err is the underlying error; it may be nil.
	Err error

	// Message is the provider's own error message, e.g. "This model's
	// maximum context length is 8192 tokens..."; "": none was given.
	Message string
	// ErrorCode is the provider's machine-readable error code, e.g.
	// "context_length_exceeded"; "": none was given.
	ErrorCode string
	// Type is the provider's error type, e.g. "invalid_request_error";
	// "": none was given.
	Type string

	// Limit is the kind of a rate-limited answer (adapters fill it
	// with [LimitFor]). NoLimit: [LimitOf] and [Do] use what LimitFor says
	// for Code, Type, ErrorCode and Message, so a StatusError{Code: 429}
	// is a Throttle.
	Limit Limit
	// Hint is the provider's "call again at" (see [HintFromHeader]),
	// uncapped; the zero Time: none. RetryAfter is the same hint as a wait
	// from when the answer arrived.
	Hint time.Time
}

// Error returns a message like "retry: HTTP 503 Service Unavailable: <Err>",
// or, when the provider gave a message, code or type, one like
// "retry: HTTP 400 Bad Request: <Message> (code context_length_exceeded,
// type invalid_request_error)". Err's text is then left out: an SDK's error
// text repeats the status (it is still there for errors.Is and errors.As).
func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString("retry: HTTP ")
	b.WriteString(strconv.Itoa(e.Code))
	if t := http.StatusText(e.Code); t != "" {
		b.WriteString(" ")
		b.WriteString(t)
	}
	if e.Message == "" && e.ErrorCode == "" && e.Type == "" {
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
		return b.String()
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	var details []string
	if e.ErrorCode != "" {
		details = append(details, "code "+e.ErrorCode)
	}
	if e.Type != "" {
		details = append(details, "type "+e.Type)
	}
	if len(details) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(details, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *StatusError) Unwrap() error { return e.Err }

// ErrRateLimitEscalation is matched (errors.Is) by every [*EscalationError].
var ErrRateLimitEscalation = errors.New("retry: rate limit escalation")

// EscalationError is what [Do] returns when a rate-limited answer stops the
// ladder so the caller can switch models instead of waiting: the
// (RateLimitRetries+1)-th Throttle, a Quota answer (at once), a rate-limit
// wait that would pass Policy.RateLimitWait, and with Policy.Failover the
// first rate-limited answer of any kind. errors.Is(err,
// ErrRateLimitEscalation) is true, and Unwrap gives the last error (so
// errors.As still finds its [*StatusError]).
type EscalationError struct {
	// Attempts is the number of rate-limited answers on the rate-limit
	// budget received, counting the one that escalates: Throttles, and the
	// Quota or (with Failover) Overload answer that escalates
	// (RateLimitRetries+1: 4 by default, when the budget is spent).
	Attempts int
	// RetryAfter is the last response's hint as a wait, uncapped; 0 if it
	// gave none.
	RetryAfter time.Duration
	// Err is the last rate-limited error.
	Err error

	// Limit is the last answer's kind (Throttle, Quota or Overload).
	Limit Limit
	// Hint is the last answer's hint as a time, uncapped; zero: none.
	Hint time.Time
}

// Error returns a message like "retry: rate limit escalation after 4
// rate-limited attempts (retry after 2m0s): <Err>"; a Quota or Overload
// escalation says so: "retry: rate limit escalation (quota) after 1
// rate-limited attempts: <Err>".
func (e *EscalationError) Error() string {
	s := "retry: rate limit escalation"
	if e.Limit == Quota || e.Limit == Overload {
		s += " (" + e.Limit.String() + ")"
	}
	s += " after " + strconv.Itoa(e.Attempts) + " rate-limited attempts"
	if e.RetryAfter > 0 {
		s += " (retry after " + durtext.RoundUp(e.RetryAfter).String() + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is [ErrRateLimitEscalation].
func (e *EscalationError) Is(target error) bool { return target == ErrRateLimitEscalation }

// Unwrap returns Err.
func (e *EscalationError) Unwrap() error { return e.Err }

// Unrecoverable marks err so that it is never retried: [Classify] reports
// it as Permanent wherever it sits in an error chain. The result has err's
// message, and errors.Is/As see err through it. Unrecoverable(nil) is nil.
func Unrecoverable(err error) error {
	if err == nil {
		return nil
	}
	return &unrecoverableError{err: err}
}

type unrecoverableError struct{ err error }

func (e *unrecoverableError) Error() string { return e.err.Error() }
func (e *unrecoverableError) Unwrap() error { return e.err }
