package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	status := func(code int) error { return &StatusError{Code: code, Err: errors.New("boom")} }
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Transient},
		{"unrecognised", errors.New("mystery"), Transient},

		{"400", status(400), Permanent},
		{"401", status(401), Permanent},
		{"403", status(403), Permanent},
		{"404", status(404), Permanent},
		{"409", status(409), Permanent},
		{"413", status(413), Permanent},
		{"422", status(422), Permanent},
		{"499", status(499), Permanent},
		{"408", status(408), Transient},
		{"429", status(429), RateLimited},
		{"500", status(500), Transient},
		{"501", status(501), Transient},
		{"502", status(502), Transient},
		{"503", status(503), Transient},
		{"504", status(504), Transient},
		{"529", status(529), Transient},
		{"599", status(599), Transient},
		{"0", status(0), Transient},
		{"200", status(200), Transient},
		{"302", status(302), Transient},
		{"600", status(600), Transient},
		{"-1", status(-1), Transient},
		{"wrapped 404", fmt.Errorf("call: %w", status(404)), Permanent},
		{"wrapped 429", fmt.Errorf("call: %w", status(429)), RateLimited},
		{"joined 429", errors.Join(errors.New("x"), status(429)), RateLimited},

		{"canceled", context.Canceled, Permanent},
		{"wrapped canceled", fmt.Errorf("op: %w", context.Canceled), Permanent},
		{"503 wrapping canceled", &StatusError{Code: 503, Err: context.Canceled}, Permanent},
		{"deadline exceeded", context.DeadlineExceeded, Transient},
		{"os deadline exceeded", os.ErrDeadlineExceeded, Transient},
		{"unexpected EOF", io.ErrUnexpectedEOF, Transient},
		{"EOF", io.EOF, Transient},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}, Transient},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, Transient},
		{"net closed", net.ErrClosed, Transient},
		{"dns timeout", &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}, Transient},

		{"unrecoverable", Unrecoverable(errors.New("bad input")), Permanent},
		{"unrecoverable 503", Unrecoverable(status(503)), Permanent},
		{"unrecoverable 429", Unrecoverable(status(429)), Permanent},
		{"wrapped unrecoverable", fmt.Errorf("x: %w", Unrecoverable(io.EOF)), Permanent},
		{"503 wrapping unrecoverable", &StatusError{Code: 503, Err: Unrecoverable(io.EOF)}, Permanent},

		{"escalation", &EscalationError{Attempts: 4, Err: status(429)}, RateLimited},
		{"escalation without status", &EscalationError{Attempts: 4}, RateLimited},
		{"wrapped escalation", fmt.Errorf("turn: %w", &EscalationError{Attempts: 4}), RateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[Class]string{Transient: "transient", RateLimited: "rate-limited", Permanent: "permanent", 9: "Class(9)", -1: "Class(-1)"} {
		if got := c.String(); got != want {
			t.Errorf("Class(%d).String() = %q, want %q", int(c), got, want)
		}
	}
}

func TestStatusError(t *testing.T) {
	inner := errors.New("overloaded")
	tests := []struct {
		err  *StatusError
		want string
	}{
		{&StatusError{Code: 503, Err: inner}, "retry: HTTP 503 Service Unavailable: overloaded"},
		{&StatusError{Code: 429, RetryAfter: time.Second}, "retry: HTTP 429 Too Many Requests"},
		{&StatusError{Code: 529, Err: inner}, "retry: HTTP 529: overloaded"},
		{&StatusError{Code: 0}, "retry: HTTP 0"},
		{&StatusError{Code: 400, Err: inner, Message: "maximum context length is 8192 tokens",
			ErrorCode: "context_length_exceeded", Type: "invalid_request_error"},
			"retry: HTTP 400 Bad Request: maximum context length is 8192 tokens (code context_length_exceeded, type invalid_request_error)"},
		{&StatusError{Code: 413, Err: inner, Message: "prompt is too long", Type: "request_too_large"},
			"retry: HTTP 413 Request Entity Too Large: prompt is too long (type request_too_large)"},
		{&StatusError{Code: 401, Err: inner, Message: "invalid x-api-key"},
			"retry: HTTP 401 Unauthorized: invalid x-api-key"},
		{&StatusError{Code: 422, ErrorCode: "bad_param"}, "retry: HTTP 422 Unprocessable Entity (code bad_param)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}

	se := &StatusError{Code: 502, Err: inner}
	if se.Unwrap() != inner || !errors.Is(se, inner) {
		t.Error("StatusError does not unwrap to Err")
	}
	if (&StatusError{Code: 502}).Unwrap() != nil {
		t.Error("Unwrap of nil Err is not nil")
	}
	wrapped := fmt.Errorf("provider: %w", se)
	var got *StatusError
	if !errors.As(wrapped, &got) || got != se {
		t.Error("errors.As does not find the StatusError")
	}
	if !errors.Is(&StatusError{Code: 500, Err: io.ErrUnexpectedEOF}, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not see through StatusError")
	}
}

func TestEscalationError(t *testing.T) {
	last := &StatusError{Code: 429, RetryAfter: 2 * time.Minute, Err: errors.New("slow down")}
	esc := &EscalationError{Attempts: 4, RetryAfter: 2 * time.Minute, Err: last}
	if !errors.Is(esc, ErrRateLimitEscalation) {
		t.Error("errors.Is(esc, ErrRateLimitEscalation) is false")
	}
	if !errors.Is(fmt.Errorf("turn: %w", esc), ErrRateLimitEscalation) {
		t.Error("wrapped escalation does not match ErrRateLimitEscalation")
	}
	if errors.Is(last, ErrRateLimitEscalation) || errors.Is(esc, ErrInvalidPolicy) {
		t.Error("unexpected match")
	}
	if esc.Unwrap() != last {
		t.Error("Unwrap does not give Err")
	}
	var se *StatusError
	if !errors.As(esc, &se) || se != last {
		t.Error("errors.As does not find the StatusError through the escalation")
	}
	var e2 *EscalationError
	if !errors.As(fmt.Errorf("x: %w", esc), &e2) || e2 != esc {
		t.Error("errors.As does not find the EscalationError")
	}
	want := "retry: rate limit escalation after 4 rate-limited attempts (retry after 2m0s): retry: HTTP 429 Too Many Requests: slow down"
	if got := esc.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&EscalationError{Attempts: 2}).Error(), "retry: rate limit escalation after 2 rate-limited attempts"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestUnrecoverable(t *testing.T) {
	if Unrecoverable(nil) != nil {
		t.Fatal("Unrecoverable(nil) != nil")
	}
	inner := &StatusError{Code: 503, Err: io.ErrUnexpectedEOF}
	u := Unrecoverable(inner)
	if u.Error() != inner.Error() {
		t.Errorf("message %q, want %q", u.Error(), inner.Error())
	}
	if !errors.Is(u, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not see through Unrecoverable")
	}
	var se *StatusError
	if !errors.As(u, &se) || se != inner {
		t.Error("errors.As does not see through Unrecoverable")
	}
	if Classify(u) != Permanent || Classify(inner) != Transient {
		t.Error("Unrecoverable did not make the error permanent")
	}
}
