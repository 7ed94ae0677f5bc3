package fleet

import (
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// toolKey is the store key of the tool breaker name under prefix.
func toolKey(prefix, name string) string { return (&Store{prefix: prefix}).key("tool", name) }

// modelKey is the store key of the model breaker name under prefix.
func modelKey(prefix, name string) string { return (&Store{prefix: prefix}).key("model", name) }

// clusterTarget is the master of a cluster that serves one key, reached
// through another node (which stays up while the master is broken).
type clusterTarget struct {
	*redistest.Server
	seed string
}

// Addr returns the node the processes connect to first.
func (c clusterTarget) Addr() string { return c.seed }

// masterFor returns the fault target serving key on c.
func masterFor(t *testing.T, c *redistest.Cluster, key string) faultTarget {
	t.Helper()
	i, err := c.MasterOf(key)
	if err != nil {
		t.Fatal(err)
	}
	nodes := c.Nodes()
	return clusterTarget{Server: nodes[i], seed: nodes[(i+1)%len(nodes)].Addr()}
}

// clusterStore is one process's Store on the cluster, reached through addr.
func clusterStore(t *testing.T, addr, prefix string) *Store {
	t.Helper()
	return readyStore(t, Options{Client: newClient(t, addr), Prefix: prefix, StoreTimeout: 2 * time.Second}, nil)
}

// TestCluster runs the fleet and fault tests against a Redis Cluster of three
// masters (no replicas) that it starts itself: breakers spread over every
// master and are shared across nodes; a master killed mid-outage (restarted
// empty and with its data) and paused; K OS processes behind the cluster.
// The latency test is not run here: cluster clients connect to the nodes'
// own addresses, around a proxy.
func TestCluster(t *testing.T) {
	began := time.Now()
	c := redistest.StartCluster(t, 3)
	t.Logf("3-master cluster up in %v", time.Since(began).Round(time.Millisecond))
	// A failed subtest may leave a master down: the next ones would fail for it.
	if !t.Run("spread", func(t *testing.T) { clusterSpread(t, c) }) {
		return
	}
	for i, keep := range []bool{false, true} {
		if !t.Run(fmt.Sprint("masterKilled/keepData=", keep), func(t *testing.T) {
			if err := c.WaitOK(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			// writes are refused for 2s after a master restarts (CLUSTER_WRITABLE_DELAY)
			storeKilledMidOutage(t, func(key string) faultTarget { return masterFor(t, c, key) }, "ckill"+strconv.Itoa(i), keep, 3*time.Second)
		}) {
			return
		}
	}
	if !t.Run("masterPaused", func(t *testing.T) {
		if err := c.WaitOK(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		storePaused(t, func(key string) faultTarget { return masterFor(t, c, key) }, "cpause")
	}) {
		return
	}
	t.Run("processes", func(t *testing.T) {
		if err := c.WaitOK(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		fleetOfProcesses(t, c.Addrs()[1])
	})
	t.Logf("whole cluster run: %v", time.Since(began).Round(time.Millisecond))
}

// clusterSpread: tool and model breakers of one prefix land on every master
// (one key, so one slot, per breaker), and a trip made through one node
// reaches a process connected to another.
func clusterSpread(t *testing.T, c *redistest.Cluster) {
	const prefix = "spread"
	addrs := c.Addrs()
	s1, s2 := clusterStore(t, addrs[0], prefix), clusterStore(t, addrs[2], prefix)
	perMaster := make([]int, len(addrs))
	var keys []string
	for i := range 12 {
		name := "tool" + strconv.Itoa(i)
		set := breaker.Settings{Name: name, FailureThreshold: 1, RecoveryDuration: time.Minute}
		b1, err := s1.Tool(set)
		if err != nil {
			t.Fatal(err)
		}
		b2, err := s2.Tool(set)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b1.Allow()
		if err != nil {
			t.Fatal(err)
		}
		p.Failure()
		eventuallyTool(t, 2*time.Second, "the trip reaches the other process", b2, func() bool { return b2.State() == breaker.Open })
		keys = append(keys, toolKey(prefix, name))
	}
	fs := fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1, RecoveryTimeout: time.Minute, RecoverySuccessesNeeded: 1}
	for i := range 6 {
		name := "model" + strconv.Itoa(i)
		m1, err := s1.Model(name, fs)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := s2.Model(name, fs)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := m1.Begin()
		if err != nil {
			t.Fatal(err)
		}
		tk.Failure(fallback.Transient)
		eventually(t, 2*time.Second, "the model's trip reaches the other process", func() bool { return m2.State() == fallback.Fallback })
		keys = append(keys, modelKey(prefix, name))
	}
	for _, key := range keys {
		i, err := c.MasterOf(key)
		if err != nil {
			t.Fatal(err)
		}
		perMaster[i]++
		if n, err := c.Nodes()[i].Command("EXISTS", key); err != nil || n != "1" {
			t.Fatalf("key %s is not on its slot's master %d: %q %v", key, i, n, err)
		}
	}
	for i, node := range c.Nodes() {
		n, err := node.Command("DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		if perMaster[i] == 0 || n != strconv.Itoa(perMaster[i]) {
			t.Fatalf("master %d holds %s keys, want its %d breakers' (one key each): %v", i, n, perMaster[i], perMaster)
		}
	}
	t.Logf("18 breakers over 3 masters: %v keys", perMaster)
}

// TestValkey runs the fault tests against Debian's valkey-server when the
// distribution has it. Debian 12 (bookworm) does not package it (Debian 13,
// trixie, does): then the test says so and skips.
func TestValkey(t *testing.T) {
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Skip("valkey-server is not installed: Debian 12 (bookworm) does not package it (`apt-cache policy valkey-server` finds no candidate); Debian 13 (trixie) does, and there this test runs the fault tests against it")
	}
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprint("killed/keepData=", keep), func(t *testing.T) {
			storeKilledMidOutage(t, func(string) faultTarget { return redistest.StartBinary(t, bin) }, "vkill", keep, time.Second)
		})
	}
	t.Run("paused", func(t *testing.T) {
		storePaused(t, func(string) faultTarget { return redistest.StartBinary(t, bin) }, "vpause")
	})
}
