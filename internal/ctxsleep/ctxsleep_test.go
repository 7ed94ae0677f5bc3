package ctxsleep

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleep(t *testing.T) {
	tests := []struct {
		name    string
		d       time.Duration
		cancel  time.Duration // when ctx ends (0: never)
		want    error
		elapsed time.Duration
	}{
		{"the whole wait", time.Second, 0, nil, time.Second},
		{"cut by ctx", time.Minute, 2 * time.Second, context.Canceled, 2 * time.Second},
		{"no wait", 0, 0, nil, 0},
		{"negative wait", -time.Second, 0, nil, 0},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			start := time.Now()
			if err := Sleep(ctx, tt.d); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("%s: Sleep = %v, want %v", tt.name, err, tt.want)
			}
			if got := time.Since(start); got != tt.elapsed {
				t.Errorf("%s: slept %v, want %v", tt.name, got, tt.elapsed)
			}
		})
	}
}

func TestSleepEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{0, time.Hour} {
		if err := Sleep(ctx, d); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(ended, %v) = %v, want context.Canceled", d, err)
		}
	}
}
