package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClusterNodeTimeout is the cluster-node-timeout of a [Cluster]: a master
// that does not answer for longer is marked failed by the others, and with
// cluster-require-full-coverage (the default, kept) the cluster refuses
// every command until it is back.
const ClusterNodeTimeout = 5 * time.Second

// Cluster is a Redis Cluster of masters without replicas, each a [Server]
// on a free loopback port (its cluster bus on port+10000), joined with
// `redis-cli --cluster create`.
type Cluster struct {
	nodes  []*Server
	ranges [][][2]int // per node, the slot ranges it serves
}

// StartCluster starts a cluster of n masters (n ≥ 3, as redis-cli requires)
// and waits until every node reports cluster_state:ok. The nodes stop when
// the test ends. The test fails when redis-server or redis-cli is missing.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		tb.Fatal(err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		tb.Fatal("redis-cli not found on PATH; install with: apt-get install -y redis-tools")
	}
	c := &Cluster{}
	args := []string{"--cluster", "create"}
	for range n {
		s := &Server{tb: tb, bin: bin, dir: tb.TempDir(), port: freeClusterPort(tb), extra: []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10)}}
		if err := s.start(); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.Kill)
		c.nodes = append(c.nodes, s)
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	var out bytes.Buffer
	cmd := exec.Command(cli, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out.String())
	}
	if err := c.WaitOK(10 * time.Second); err != nil {
		tb.Fatalf("%v\n%s", err, out.String())
	}
	for _, s := range c.nodes {
		r, err := s.ownRanges()
		if err != nil {
			tb.Fatal(err)
		}
		c.ranges = append(c.ranges, r)
	}
	return c
}

// Nodes returns the masters, in the order they were started.
func (c *Cluster) Nodes() []*Server { return c.nodes }

// Addrs returns every node's host:port.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = s.Addr()
	}
	return out
}

// WaitOK waits until every running node reports cluster_state:ok.
func (c *Cluster) WaitOK(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		for _, s := range c.nodes {
			info, err := s.Command("CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: the cluster did not reach cluster_state:ok within %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Slot returns the hash slot of key (CLUSTER KEYSLOT).
func (c *Cluster) Slot(key string) (int, error) {
	for _, s := range c.nodes {
		if v, err := s.Command("CLUSTER", "KEYSLOT", key); err == nil {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("redistest: no cluster node answers CLUSTER KEYSLOT")
}

// MasterOf returns the index of the node serving key's slot.
func (c *Cluster) MasterOf(key string) (int, error) {
	slot, err := c.Slot(key)
	if err != nil {
		return 0, err
	}
	for i, rs := range c.ranges {
		for _, r := range rs {
			if slot >= r[0] && slot <= r[1] {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("redistest: no node serves slot %d", slot)
}

// Ranges returns the slot ranges node i serves, as [first, last] pairs.
func (c *Cluster) Ranges(i int) [][2]int { return c.ranges[i] }

// ownRanges parses the "myself" line of CLUSTER NODES.
func (s *Server) ownRanges() ([][2]int, error) {
	nodes, err := s.Command("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(f[2], "myself") {
			continue
		}
		var out [][2]int
		for _, r := range f[8:] {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				continue // a slot being migrated: none here
			}
			out = append(out, [2]int{a, b})
		}
		return out, nil
	}
	return nil, errors.New("redistest: no myself line in CLUSTER NODES")
}

// freeClusterPort returns a loopback port that was free a moment ago and
// whose cluster bus port (+10000) was free too.
func freeClusterPort(tb testing.TB) int {
	tb.Helper()
	for {
		p := freePort(tb)
		if p+10000 > 65535 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		l.Close()
		return p
	}
}
