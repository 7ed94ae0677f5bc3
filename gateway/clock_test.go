package gateway

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// feed is an upstream body: each Read waits for a chunk on c or for the
// attempt's context to end (a transport's read is cut by its cancellation).
type feed struct {
	c   chan string
	ctx context.Context
}

func (f *feed) Read(p []byte) (int, error) {
	select {
	case s, ok := <-f.c:
		if !ok {
			return 0, io.EOF
		}
		return copy(p, s), nil
	case <-f.ctx.Done():
		return 0, errors.New("read on a cancelled connection")
	}
}

func (f *feed) Close() error { return nil }

// The attempt clock's four bounds, each with the cause it cancels with, in
// virtual time: first_byte until firstByte, idle only inside a read after
// the first bytes (a slow reader is not a silent upstream), request in all,
// and the deadline its parent states (the request's, which has no timer of
// its own).
func TestAttemptClock(t *testing.T) {
	for _, tc := range []struct {
		name             string
		first, idle, req time.Duration
		deadline         time.Duration   // the request's deadline (0: none)
		headers          time.Duration   // when firstByte is called (0: never)
		reader           []time.Duration // the reader's pauses between reads (a slow client)
		send             []time.Duration // when the upstream sends each chunk (from the start)
		want             error           // the cause (nil: not cancelled)
		at               time.Duration   // when
	}{
		{name: "no first byte", first: time.Second, idle: time.Second, req: time.Minute, want: errFirstByte, at: time.Second},
		{name: "first byte in time, then silent inside a read", first: time.Second, idle: 2 * time.Second, req: time.Minute,
			headers: 500 * time.Millisecond, send: []time.Duration{600 * time.Millisecond}, want: errIdle, at: 2600 * time.Millisecond},
		{name: "a slow reader is not idle", first: time.Second, idle: 2 * time.Second, req: time.Minute,
			headers: 100 * time.Millisecond, reader: []time.Duration{5 * time.Second},
			send: []time.Duration{200 * time.Millisecond, 5300 * time.Millisecond}, want: nil},
		{name: "a steady stream past the request bound", first: time.Second, idle: 2 * time.Second, req: 5 * time.Second,
			headers: 100 * time.Millisecond, send: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5500 * time.Millisecond},
			want: errRequestTimeout, at: 5 * time.Second},
		{name: "the request's deadline before first_byte", first: time.Second, idle: time.Second, req: time.Minute,
			deadline: 700 * time.Millisecond, want: context.DeadlineExceeded, at: 700 * time.Millisecond},
		{name: "the request's deadline inside a steady stream", first: time.Second, idle: 2 * time.Second, req: time.Minute,
			deadline: 3500 * time.Millisecond, headers: 100 * time.Millisecond,
			send: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
			want: context.DeadlineExceeded, at: 3500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					c      attemptClock
					timers clockTimers
				)
				start := time.Now()
				var parent context.Context = context.Background()
				if tc.deadline > 0 {
					parent = &deadlineContext{Context: parent, deadline: start.Add(tc.deadline)}
				}
				ctx := c.start(parent, &timers, tc.first, tc.idle, tc.req)
				defer c.cancel(nil)
				defer c.stop()
				f := &feed{c: make(chan string), ctx: ctx}
				body := c.wrap(f)
				go func() { // the upstream
					for _, at := range tc.send {
						select {
						case <-time.After(start.Add(at).Sub(time.Now())):
							f.c <- "x"
						case <-ctx.Done():
							return
						}
					}
					<-ctx.Done()
				}()
				if tc.headers > 0 {
					time.Sleep(tc.headers)
					c.firstByte()
				}
				buf := make([]byte, 8)
				for i := 0; ; i++ {
					if i > 0 && i-1 < len(tc.reader) {
						time.Sleep(tc.reader[i-1])
					}
					if i >= len(tc.send) && tc.want == nil {
						break
					}
					if _, err := body.Read(buf); err != nil {
						break
					}
				}
				if tc.want != nil {
					<-ctx.Done()
				}
				got := context.Cause(ctx)
				if tc.want == nil {
					if got != nil {
						t.Fatalf("cancelled with %v after %v, want not cancelled", got, time.Since(start))
					}
					return
				}
				if !errors.Is(got, tc.want) || time.Since(start) != tc.at {
					t.Fatalf("cancelled with %v after %v, want %v after %v", got, time.Since(start), tc.want, tc.at)
				}
			})
		})
	}
}
