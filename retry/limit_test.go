package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

func TestLimitFor(t *testing.T) {
	tests := []struct {
		code                  int
		errType, errCode, msg string
		want                  Limit
	}{
		// Quota: 429 or 403 with a quota code or type.
		{429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota", Quota},
		{429, "", "insufficient_quota", "", Quota},
		{429, "insufficient_quota", "", "", Quota},
		{403, "", "billing_hard_limit_reached", "", Quota},
		{429, "billing_not_active", "", "", Quota},
		{403, "QUOTA_EXCEEDED", "", "", Quota},
		{429, "", "quota_exceeded", "", Quota},
		{429, "RESOURCE_EXHAUSTED", "", "Quota exceeded for metric: generate_content_requests", Quota},
		{429, "", "resource_exhausted", "You exceeded your current QUOTA", Quota},
		{429, "RESOURCE_EXHAUSTED", "", "Resource has been exhausted (e.g. check rate limits).", Throttle},
		{403, "RESOURCE_EXHAUSTED", "", "quota", NoLimit}, // RESOURCE_EXHAUSTED: 429 bodies only
		{500, "insufficient_quota", "", "", NoLimit},      // quota: 429 and 403 only
		{402, "", "insufficient_quota", "", NoLimit},
		{403, "permission_error", "", "quota", NoLimit}, // the message alone does not make a quota
		{429, "rate_limit_error", "", "insufficient quota", Throttle},

		// Overload.
		{529, "", "", "", Overload},
		{529, "overloaded_error", "", "Overloaded", Overload},
		{500, "overloaded_error", "", "", Overload},
		{200, "overloaded_error", "", "", Overload}, // a stream's error event
		{429, "overloaded_error", "", "", Overload},
		{503, "", "", "The server is Overloaded", Overload},
		{503, "server_overloaded", "", "", Overload},
		{503, "", "engine_overloaded", "", Overload},
		{503, "", "", "Service Unavailable", NoLimit},
		{500, "", "", "overloaded", NoLimit}, // the message counts for a 503 only

		// Throttle: every other 429.
		{429, "", "", "", Throttle},
		{429, "rate_limit_exceeded", "rate_limit_exceeded", "Rate limit reached for requests", Throttle},

		// Not rate-limited.
		{403, "", "", "", NoLimit},
		{400, "", "", "", NoLimit},
		{0, "", "", "", NoLimit},
		{-1, "", "", "", NoLimit},
	}
	for _, tt := range tests {
		if got := LimitFor(tt.code, tt.errType, tt.errCode, tt.msg); got != tt.want {
			t.Errorf("LimitFor(%d, %q, %q, %q) = %v, want %v", tt.code, tt.errType, tt.errCode, tt.msg, got, tt.want)
		}
	}
}

func TestLimitOf(t *testing.T) {
	hint := now.Add(time.Minute)
	quota := &StatusError{Code: 429, ErrorCode: "insufficient_quota", Hint: hint}
	tests := []struct {
		name     string
		err      error
		want     Limit
		wantHint time.Time
	}{
		{"nil", nil, NoLimit, time.Time{}},
		{"plain", errors.New("x"), NoLimit, time.Time{}},
		{"500", st(500, 0), NoLimit, time.Time{}},
		{"hand-built 429", st(429, time.Second), Throttle, time.Time{}},
		{"hand-built 529", st(529, 0), Overload, time.Time{}},
		{"codes", quota, Quota, hint},
		{"wrapped", fmt.Errorf("call: %w", quota), Quota, hint},
		{"explicit kind wins", &StatusError{Code: 503, Limit: Throttle, Hint: hint}, Throttle, hint},
		{"escalation", &EscalationError{Attempts: 1, Limit: Overload, Hint: hint, Err: st(429, 0)}, Overload, hint},
		{"escalation without kind: its error's", &EscalationError{Err: quota}, Quota, time.Time{}},
		{"bare escalation: a throttle", &EscalationError{Attempts: 4}, Throttle, time.Time{}},
	}
	for _, tt := range tests {
		l, h := LimitOf(tt.err)
		if l != tt.want || !h.Equal(tt.wantHint) {
			t.Errorf("%s: LimitOf = (%v, %v), want (%v, %v)", tt.name, l, h, tt.want, tt.wantHint)
		}
	}
}

// timeoutErr is a net.Error.
type timeoutErr struct{ timeout bool }

func (e timeoutErr) Error() string   { return "i/o" }
func (e timeoutErr) Timeout() bool   { return e.timeout }
func (e timeoutErr) Temporary() bool { return false }

var _ net.Error = timeoutErr{}

func TestIsTimeout(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), true},
		{os.ErrDeadlineExceeded, true}, // a net.Error with Timeout()
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true},
		{timeoutErr{true}, true},
		{timeoutErr{false}, false},
		{context.Canceled, false},
		{fmt.Errorf("%w and %w", context.Canceled, context.DeadlineExceeded), false},
		{st(504, 0), false},
		{errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		if got := IsTimeout(tt.err); got != tt.want {
			t.Errorf("IsTimeout(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestLimitText(t *testing.T) {
	for l, want := range map[Limit]string{NoLimit: "none", Throttle: "throttle", Quota: "quota", Overload: "overload", 9: "Limit(9)", -1: "Limit(-1)"} {
		if got := l.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(l), got, want)
		}
	}
	for _, l := range []Limit{NoLimit, Throttle, Quota, Overload} {
		b, err := json.Marshal(l)
		if err != nil || string(b) != `"`+l.String()+`"` {
			t.Fatalf("Marshal(%v) = %s, %v", l, b, err)
		}
		var got Limit
		if err := json.Unmarshal(b, &got); err != nil || got != l {
			t.Fatalf("Unmarshal(%s) = %v, %v", b, got, err)
		}
	}
	var l Limit
	if l.UnmarshalText([]byte("Quota")) == nil {
		t.Error("UnmarshalText(Quota) = nil error")
	}
	if _, err := Limit(4).MarshalText(); err == nil {
		t.Error("Limit(4).MarshalText() = nil error")
	}
}

func TestEscalationText(t *testing.T) {
	e := &EscalationError{Attempts: 1, Limit: Quota, RetryAfter: time.Minute, Err: errors.New("429")}
	if got, want := e.Error(), "retry: rate limit escalation (quota) after 1 rate-limited attempts (retry after 1m0s): 429"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &EscalationError{Attempts: 4, Limit: Throttle}
	if got, want := e.Error(), "retry: rate limit escalation after 4 rate-limited attempts"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// FuzzLimitFor: never panics; Quota only for 403 and 429, Throttle only for
// 429, and case never matters.
func FuzzLimitFor(f *testing.F) {
	f.Add(429, "insufficient_quota", "", "")
	f.Add(429, "RESOURCE_EXHAUSTED", "", "quota exceeded")
	f.Add(503, "", "", "overloaded")
	f.Add(529, "", "", "")
	f.Add(403, "", "billing_not_active", "")
	f.Fuzz(func(t *testing.T, code int, errType, errCode, msg string) {
		l := LimitFor(code, errType, errCode, msg)
		switch {
		case l == Quota && code != 429 && code != 403:
			t.Fatalf("Quota for %d", code)
		case l == Throttle && code != 429:
			t.Fatalf("Throttle for %d", code)
		case code == 429 && l == NoLimit:
			t.Fatalf("a 429 not rate-limited")
		}
		if u := LimitFor(code, upper(errType), upper(errCode), upper(msg)); u != l {
			t.Fatalf("upper case changes %v to %v", l, u)
		}
	})
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
