package fleet

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/loopctl/loopctl-go/internal/redistest"
)

// newClient connects a fresh client (one simulated process) to srv.
func newClient(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:  []string{addr},
		DisableCache: true,
		// a short dial timeout keeps reconnects to a dead store quick
		Dialer: dialer(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// startStore returns a Store on its own client (one simulated process).
func startStore(t testing.TB, srv *redistest.Server, o Options) *Store {
	t.Helper()
	return newFakeStore(t, srv, o, nil)
}

// newFakeStore is startStore with a virtual store clock (µs); nil: TIME.
func newFakeStore(t testing.TB, srv *redistest.Server, o Options, fake func() int64) *Store {
	t.Helper()
	o.Client = newClient(t, srv.Addr())
	if o.Prefix == "" {
		o.Prefix = "t"
	}
	if o.StoreTimeout == 0 {
		o.StoreTimeout = 2 * time.Second // -race on a busy machine; fault tests set their own
	}
	return readyStore(t, o, fake)
}

// readyStore makes the Store of o (with the virtual clock fake, or nil),
// closed when the test ends, and waits until it has subscribed.
func readyStore(t testing.TB, o Options, fake func() int64) *Store {
	t.Helper()
	s, err := newStore(o, fake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	select {
	case <-s.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("the Store did not subscribe within 5s")
	}
	return s
}

// eventually polls cond every ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// eventuallyTool is eventually with the breaker's state in the failure text.
func eventuallyTool(t testing.TB, d time.Duration, what string, b *ToolBreaker, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("after %v: %s: %+v (store up %v)", d, what, b.Snapshot(), b.s.Up())
		}
		time.Sleep(time.Millisecond)
	}
}
