package redistest

import (
	"strings"
	"testing"
	"time"
)

func TestParseCommandStat(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_evalsha:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\ncmdstat_eval:calls=1,usec=9\r\n"
	for _, tc := range []struct {
		cmd  string
		want int64
	}{
		{"evalsha", 12},
		{"eval", 1},
		{"get", 0},
	} {
		if got := ParseCommandStat(info, tc.cmd); got != tc.want {
			t.Errorf("ParseCommandStat(%q) = %d, want %d", tc.cmd, got, tc.want)
		}
	}
}

// TestServerAndProxy: a server answers, counts commands, restarts, and a
// proxy with latency forwards to it.
func TestServerAndProxy(t *testing.T) {
	s := Start(t)
	if s.Port() == 6379 {
		t.Fatal("the default port")
	}
	if _, err := s.Command("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Command("EVAL", "return 1", "0"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Scripts(); err != nil || n != 1 {
		t.Fatalf("Scripts after one EVAL = %d, %v; want 1", n, err)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s.Restart(true)
	if v, err := s.Command("GET", "k"); err != nil || v != "v" {
		t.Fatalf("after a restart with data: %q, %v", v, err)
	}
	s.Restart(false)
	if v, err := s.Command("GET", "k"); err != nil || v != "" {
		t.Fatalf("after an empty restart: %q, %v", v, err)
	}
	p := StartProxy(t, s.Addr())
	p.SetDelay(20 * time.Millisecond)
	start := time.Now()
	if v, err := Command(p.Addr(), "PING"); err != nil || v != "PONG" {
		t.Fatalf("PING through the proxy: %q, %v", v, err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("a round trip through a 20ms proxy took %v", d)
	}
}

// TestCluster: three masters serve every slot between them, and a key's
// master is the one whose ranges hold its slot.
func TestCluster(t *testing.T) {
	c := StartCluster(t, 3)
	total := 0
	for i := range c.Nodes() {
		for _, r := range c.Ranges(i) {
			total += r[1] - r[0] + 1
		}
		if len(c.Ranges(i)) == 0 {
			t.Fatalf("node %d serves no slot", i)
		}
	}
	if total != 16384 {
		t.Fatalf("the masters serve %d slots, want 16384", total)
	}
	i, err := c.MasterOf("{a}x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Nodes()[i].Command("SET", "{a}x", "1"); err != nil {
		t.Fatalf("SET on the key's master: %v", err)
	}
	if _, err := c.Nodes()[(i+1)%3].Command("SET", "{a}x", "1"); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Fatalf("SET on another master: %v, want MOVED", err)
	}
}
