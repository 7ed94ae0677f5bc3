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

// newStore returns a Store on its own client (one simulated process).
func newStore(t testing.TB, srv *redistest.Server, o Options) *Store {
	t.Helper()
	o.Client = newClient(t, srv.Addr())
	if o.Prefix == "" {
		o.Prefix = "t"
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
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
