package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

func TestFailureOf(t *testing.T) {
	hint := time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC)
	const ran = 3 * time.Second
	tests := []struct {
		name string
		err  error
		want fallback.Failure
	}{
		{"quota", &retry.StatusError{Code: 429, Limit: retry.Quota, Hint: hint}, fallback.Failure{Kind: fallback.Quota, Hint: hint}},
		{"throttle", &retry.StatusError{Code: 429, Limit: retry.Throttle}, fallback.Failure{Kind: fallback.RateLimit}},
		{"overload", &retry.StatusError{Code: 529, Limit: retry.Overload}, fallback.Failure{Kind: fallback.RateLimit}},
		{"a 429 read by its code", &retry.StatusError{Code: 429}, fallback.Failure{Kind: fallback.RateLimit}},
		{"transient 500", &retry.StatusError{Code: 500}, fallback.Failure{}},
		{"timeout", fmt.Errorf("read: %w", context.DeadlineExceeded), fallback.Failure{Timeout: true, Elapsed: ran}},
		{"escalation without a kind is a rate limit", &retry.EscalationError{Err: errors.New("x")}, fallback.Failure{Kind: fallback.RateLimit}},
		{"escalation keeps its quota", &retry.EscalationError{Limit: retry.Quota, Hint: hint}, fallback.Failure{Kind: fallback.Quota, Hint: hint}},
		{"a rate limit is never a timeout", &retry.StatusError{Code: 429, Limit: retry.Throttle, Err: context.DeadlineExceeded}, fallback.Failure{Kind: fallback.RateLimit}},
		{"plain error", errors.New("boom"), fallback.Failure{}},
	}
	for _, tt := range tests {
		if got := FailureOf(tt.err, ran); got != tt.want {
			t.Errorf("%s: FailureOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
