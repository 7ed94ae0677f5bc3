package fleet

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

func TestOptionsErrors(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr())
	for _, tc := range []struct {
		o     Options
		field string
	}{
		{Options{}, "Client"},
		{Options{Client: c, Prefix: "a{b"}, "Prefix"},
		{Options{Client: c, StoreTimeout: -1}, "StoreTimeout"},
		{Options{Client: c, RetryInterval: -1}, "RetryInterval"},
		{Options{Client: c, Policy: 7}, "Policy"},
	} {
		_, err := New(tc.o)
		var oe *OptionsError
		if !errors.As(err, &oe) || oe.Field != tc.field || !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.o, err, tc.field)
		}
	}
	if _, err := Dial("redis://"+srv.Addr(), Options{Client: c}); err == nil {
		t.Error("Dial with a Client: no error")
	}
}

// TestDialAndMetrics: a Store made by Dial works, and its collector reports
// the store's state and every breaker's mode (one-hot).
func TestDialAndMetrics(t *testing.T) {
	srv := redistest.Start(t)
	s, err := Dial("redis://"+srv.Addr(), Options{Prefix: "dial", StoreTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Tool(breaker.Settings{Name: "search", FailureThreshold: -1}); !errors.Is(err, breaker.ErrInvalidSettings) {
		t.Fatalf("bad tool settings: %v", err)
	}
	b, err := s.Tool(breaker.Settings{Name: "search"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tool(breaker.Settings{Name: "search"}); err == nil {
		t.Fatal("a second breaker of the same name: no error")
	}
	if _, err := s.Model("chat", fallback.Settings{Primary: " "}); !errors.Is(err, fallback.ErrInvalidSettings) {
		t.Fatalf("bad model settings: %v", err)
	}
	if _, err := s.Model("chat", fallback.Settings{Primary: "a", Chain: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	p, _ := b.Allow()
	p.Failure()
	if got := b.Snapshot().ConsecutiveFailures; got != 1 {
		t.Fatalf("failures %d", got)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.Collector())
	want := `
# HELP loopctl_store_up 1 while the breakers' shared store answers, 0 while it is down.
# TYPE loopctl_store_up gauge
loopctl_store_up{store="dial"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loopctl_store_up"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check with the store up: %v", err)
	}
	srv.Kill()
	eventually(t, 3*time.Second, "local mode", func() bool { return b.Mode() == LocalMode && !s.Up() })
	if err := s.Check(context.Background()); !errors.Is(err, ErrStoreDown) {
		t.Fatalf("Check with the store down: %v", err)
	}
	n, err := testutil.GatherAndCount(reg, "loopctl_store_mode")
	if err != nil || n != 8 {
		t.Fatalf("%d loopctl_store_mode series (%v), want 2 breakers x 4 modes", n, err)
	}
	if v := testutil.ToFloat64(modeGauge(s, "search", "tool", "local")); v != 1 {
		t.Fatalf("store_mode local = %v after the store went down", v)
	}
}

// modeGauge extracts one loopctl_store_mode series as a collector.
func modeGauge(s *Store, name, kind, mode string) prometheus.Collector {
	ch := make(chan prometheus.Metric, 64)
	s.Collector().Collect(ch)
	close(ch)
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"})
	for m := range ch {
		if strings.Contains(m.Desc().String(), "loopctl_store_mode") {
			var d dto.Metric
			_ = m.Write(&d)
			labels := map[string]string{}
			for _, l := range d.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["breaker"] == name && labels["kind"] == kind && labels["mode"] == mode {
				g.Set(d.GetGauge().GetValue())
			}
		}
	}
	return g
}

// TestDialWithoutTheStore (FLEET rev 2, "Starting without the store"): Dial
// to a store that does not answer is an error only with Options.Required;
// without it the Store is down from the start (its breakers run locally)
// and joins when the store answers.
func TestDialWithoutTheStore(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr()
	srv.Kill()
	if s, err := Dial(url, Options{Prefix: "late", Required: true}); err == nil {
		s.Close()
		t.Fatal("Required with the store down: no error")
	}
	var changes []bool
	var mu sync.Mutex
	s, err := Dial(url, Options{Prefix: "late", RetryInterval: 20 * time.Millisecond,
		OnStoreChange: func(up bool) { mu.Lock(); changes = append(changes, up); mu.Unlock() }})
	if err != nil {
		t.Fatalf("the store down at start, not Required: %v", err)
	}
	defer settleDelayedDials(t)
	defer s.Close()
	if s.Up() || s.DialError() == nil {
		t.Fatalf("the store reads up (%v) or has no dial error (%v) before it ever answered", s.Up(), s.DialError())
	}
	b, err := s.Tool(breaker.Settings{Name: "search"})
	if err != nil || b.Mode() != LocalMode {
		t.Fatalf("a breaker of a store down at start: %v, mode %v", err, b.Mode())
	}
	srv.Restart(false)
	eventually(t, 10*time.Second, "joined", func() bool { return s.Up() && b.Mode() == Shared })
	mu.Lock()
	defer mu.Unlock()
	if len(changes) < 2 || changes[0] || !changes[len(changes)-1] {
		t.Fatalf("OnStoreChange calls %v, want down first and up last", changes)
	}
}

// settleDelayedDials waits (up to 5s) for the delayed retries that a
// client's failed dials leave behind to end on their own, so that the leak
// check at the end of the package sees none.
func settleDelayedDials(t *testing.T) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b := make([]byte, 1<<20)
		if !strings.Contains(string(b[:runtime.Stack(b, true)]), "rueidis.(*call).DelayDo") {
			return
		}
	}
	t.Log("rueidis's delayed dial retries still run after 5s")
}
