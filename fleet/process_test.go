package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// Settings of the OS-process fleet test.
const (
	procCooldown  = 200 * time.Millisecond
	procDown      = 900 * time.Millisecond // the upstream is down this long after the children start calling
	procUp        = 500 * time.Millisecond
	procThreshold = 3
)

// childMain is the body of a child process (see TestMain): it calls the
// upstream through a tool breaker, shared through Redis or in-process, every
// 2ms until its time is up, and marks probe calls with X-Probe.
func childMain() {
	upstream, addr, mode := os.Getenv("FLEET_CHILD_UPSTREAM"), os.Getenv("FLEET_CHILD_REDIS"), os.Getenv("FLEET_CHILD_MODE")
	run, _ := time.ParseDuration(os.Getenv("FLEET_CHILD_RUN"))
	set := breaker.Settings{Name: "upstream", FailureThreshold: procThreshold, RecoveryDuration: procCooldown, ProbeTimeout: time.Second}
	if mode == "shared" {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer c.Close()
		s, err := New(Options{Client: c, Prefix: os.Getenv("FLEET_CHILD_PREFIX"), StoreTimeout: time.Second})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer s.Close()
		<-s.Ready()
		set.Backend = s.ToolBackend()
	}
	b, err := breaker.New(set)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	client := &http.Client{Timeout: time.Second}
	end := time.Now().Add(run)
	for time.Now().Before(end) {
		p, err := b.Allow()
		if err == nil {
			req, _ := http.NewRequest("GET", upstream, nil)
			if p.IsProbe() {
				req.Header.Set("X-Probe", "1")
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			p.Done(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// upstreamLog records the requests that reached the scripted upstream.
type upstreamLog struct {
	mu     sync.Mutex
	start  time.Time
	down   atomic.Bool
	probes []time.Duration // arrival of probe requests, since start
	downN  int             // requests while down
	total  int
}

// TestFleetOfProcesses runs K=3 OS processes calling one upstream that is
// down for a while and then comes back, once with the tool breaker shared
// through one redis-server and once in-process, and counts what reaches the
// upstream. Shared: never two probes of the fleet within one cooldown.
// In-process: each process probes on its own (about K per cooldown).
func TestFleetOfProcesses(t *testing.T) {
	fleetOfProcesses(t, redistest.Start(t).Addr())
}

// fleetOfProcesses is TestFleetOfProcesses with the store at addr (a
// redis-server, or any node of a cluster).
func fleetOfProcesses(t *testing.T, addr string) {
	t.Helper()
	const k = 3
	results := map[string]*upstreamLog{}
	for _, mode := range []string{"shared", "local"} {
		lg := &upstreamLog{}
		lg.down.Store(true)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lg.mu.Lock()
			defer lg.mu.Unlock()
			lg.total++
			if !lg.down.Load() {
				return
			}
			lg.downN++
			if r.Header.Get("X-Probe") != "" {
				lg.probes = append(lg.probes, time.Since(lg.start))
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		var cmds []*exec.Cmd
		for range k {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "FLEET_CHILD=1", "FLEET_CHILD_UPSTREAM="+up.URL, "FLEET_CHILD_REDIS="+addr,
				"FLEET_CHILD_MODE="+mode, "FLEET_CHILD_RUN="+(procDown+procUp).String(), "FLEET_CHILD_PREFIX=proc"+strconv.Itoa(os.Getpid()))
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		// the upstream's outage starts with the children's first calls
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for {
			lg.mu.Lock()
			n := lg.total
			lg.mu.Unlock()
			if n > 0 || ctx.Err() != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		lg.mu.Lock()
		lg.start = time.Now()
		lg.mu.Unlock()
		time.Sleep(procDown)
		lg.down.Store(false)
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
		}
		up.Close()
		results[mode] = lg
	}
	sh, lo := results["shared"], results["local"]
	t.Logf("upstream down %v, cooldown %v, K=%d: shared state: %d requests while down, %d probes; in-process: %d requests while down, %d probes",
		procDown, procCooldown, k, sh.downN, len(sh.probes), lo.downN, len(lo.probes))
	for i := 1; i < len(sh.probes); i++ {
		if gap := sh.probes[i] - sh.probes[i-1]; gap < procCooldown-20*time.Millisecond {
			t.Fatalf("shared: two probes of the fleet %v apart (cooldown %v): %v", gap, procCooldown, sh.probes)
		}
	}
	if max := int(procDown/procCooldown) + 1; len(sh.probes) > max || len(sh.probes) == 0 {
		t.Fatalf("shared: %d probes while down for %v, want 1..%d", len(sh.probes), procDown, max)
	}
	if len(lo.probes) <= len(sh.probes) {
		t.Fatalf("in-process state sent %d probes, shared %d: the comparison shows nothing", len(lo.probes), len(sh.probes))
	}
}
