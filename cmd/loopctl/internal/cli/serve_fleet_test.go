package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// fleetReplicaEnv, when set in the environment, makes the test binary run
// `loopctl serve` with the arguments it holds (separated by newlines) instead
// of the tests: that is how TestServeFleet starts its replicas as separate OS
// processes.
const fleetReplicaEnv = "LOOPCTL_FLEET_REPLICA_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(fleetReplicaEnv); args != "" {
		os.Exit(Main(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	code := m.Run()
	removeBinary()
	os.Exit(code)
}

// Settings of the serve fleet test.
const (
	fleetK        = 3
	fleetCooldown = 300 * time.Millisecond
	fleetDown     = 1200 * time.Millisecond // the primary is down this long
	fleetUp       = 600 * time.Millisecond  // traffic after it is back
	fleetEvery    = 20 * time.Millisecond   // one request per replica this often
)

// primaryLog records the requests that reached the primary upstream model.
type primaryLog struct {
	down atomic.Bool
	mu   sync.Mutex
	at   []time.Time // arrival of every request while down
}

func (l *primaryLog) script() llmtest.Script {
	return llmtest.ByModel(map[string]llmtest.Script{
		"a": func(llmtest.Request) llmtest.Reply {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.down.Load() {
				l.at = append(l.at, time.Now())
				return llmtest.Error(503)
			}
			return llmtest.Text("from a")
		},
		"b": llmtest.Always(llmtest.Text("from b")),
	})
}

// startReplica starts `loopctl serve` as a separate OS process (the test
// binary re-executed, see TestMain) and returns its address once /readyz
// answers 200. The process is killed when the test ends.
func startReplica(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fleetReplicaEnv+"="+strings.Join(append([]string{"serve"}, args...), "\n"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var exitErr error
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case exitErr = <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				exitErr = fmt.Errorf("no exit 5s after SIGTERM: %v", <-done)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if exitErr != nil {
			t.Errorf("replica: %v", exitErr)
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "loopctl serve: listening on http://"); ok {
				lines <- strings.Fields(rest)[0]
			}
		}
	}()
	select {
	case addr = <-lines:
	case <-time.After(10 * time.Second):
		t.Fatal("replica did not say where it listens within 10s")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return addr, stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not ready within 5s: %v", addr, err)
		}
	}
}

// fleetRun is what one run of the fleet saw at the primary.
type fleetRun struct {
	trip     int             // requests to the primary in the outage's first 2/3 cooldown (before any probe is due)
	probes   []time.Duration // later requests while down, since the outage began
	recovery []time.Duration // per replica: from the primary's return to its first answer from the primary
	served   int             // client requests answered 200
	total    int             // client requests sent
}

// runFleet runs K replicas (sharing breakers through redisURL, or in-process
// when it is empty) under traffic while the primary goes down and comes back.
func runFleet(t *testing.T, redisURL string) fleetRun {
	t.Helper()
	lg := &primaryLog{}
	up := llmtest.NewOpenAI(lg.script())
	defer up.Close()
	prefix := fmt.Sprintf("fleet%d", time.Now().UnixNano())
	cfg := writeConfig(t, fmt.Sprintf(`listen: 127.0.0.1:0
upstreams:
  - name: up
    base_url: %s
models:
  - name: m
    primary: up/a
    chain: [up/b]
    breaker:
      trip_threshold: 1
      recovery_timeout: %v
      recovery_successes: 1
      probe_timeout: 2s
retry:
  max_retries: 0
store:
  prefix: %s
`, up.BaseURL(), fleetCooldown, prefix))
	args := []string{"--config", cfg, "--log-format", "json", "--grace", "1s"}
	if redisURL != "" {
		args = append(args, "--redis", redisURL)
	}
	var addrs []string
	var stops []func()
	for range fleetK {
		a, s := startReplica(t, args...)
		addrs, stops = append(addrs, a), append(stops, s)
	}

	var sent, ok, backAt atomic.Int64 // backAt: UnixNano when the primary came back
	recovered := make([]atomic.Int64, len(addrs))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Timeout: 3 * time.Second}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for _, a := range addrs {
		wg.Go(func() {
			mine := &recovered[slices.Index(addrs, a)]
			tick := time.NewTicker(fleetEvery)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				sent.Add(1)
				res, err := client.Post("http://"+a+"/v1/chat/completions", "application/json",
					strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					ok.Add(1)
					if b := backAt.Load(); b != 0 && mine.Load() == 0 && res.Header.Get("X-Loopctl-Model") == "up/a" {
						mine.Store(time.Now().UnixNano() - b)
					}
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // warm: the primary serves
	lg.down.Store(true)
	start := time.Now()
	time.Sleep(fleetDown)
	lg.mu.Lock()
	lg.down.Store(false)
	backAt.Store(time.Now().UnixNano())
	lg.mu.Unlock()
	time.Sleep(fleetUp)
	cancel()
	wg.Wait()
	for _, s := range stops {
		s()
	}

	lg.mu.Lock()
	defer lg.mu.Unlock()
	var r fleetRun
	for _, at := range lg.at {
		if d := at.Sub(start); d < fleetCooldown*2/3 {
			r.trip++
		} else {
			r.probes = append(r.probes, d.Round(time.Millisecond))
		}
	}
	for i := range recovered {
		r.recovery = append(r.recovery, time.Duration(recovered[i].Load()).Round(time.Millisecond))
	}
	r.served, r.total = int(ok.Load()), int(sent.Load())
	return r
}

// TestServeFleet runs K = 3 `loopctl serve` replicas as separate OS processes
// with traffic on each while the primary upstream model is down for a while
// and then back, once with the model breaker shared through one real
// redis-server and once in-process. Shared: one probe of the primary per
// cooldown for the whole fleet. In-process: each replica probes on its own.
func TestServeFleet(t *testing.T) {
	url := startRedis(t)
	shared := runFleet(t, url)
	local := runFleet(t, "")
	t.Logf("K=%d, primary down %v, cooldown %v, a request per replica every %v:", fleetK, fleetDown, fleetCooldown, fleetEvery)
	for _, x := range []struct {
		name string
		r    fleetRun
	}{{"shared (redis)", shared}, {"in-process", local}} {
		t.Logf("  %s: %d requests reached the primary while down (%d to trip, %d probes at %v); back on the primary after %v; %d/%d client requests answered 200",
			x.name, x.r.trip+len(x.r.probes), x.r.trip, len(x.r.probes), x.r.probes, x.r.recovery, x.r.served, x.r.total)
	}
	for i := 1; i < len(shared.probes); i++ {
		if gap := shared.probes[i] - shared.probes[i-1]; gap < fleetCooldown-30*time.Millisecond {
			t.Errorf("shared: two probes of the fleet %v apart (cooldown %v): %v", gap, fleetCooldown, shared.probes)
		}
	}
	if max := int(fleetDown / fleetCooldown); len(shared.probes) < max-2 || len(shared.probes) > max {
		t.Errorf("shared: %d probes while down for %v, want %d..%d (one per cooldown)", len(shared.probes), fleetDown, max-2, max)
	}
	if shared.trip < 1 || shared.trip > fleetK {
		t.Errorf("shared: %d requests tripped the breaker, want 1..%d", shared.trip, fleetK)
	}
	if len(local.probes) <= len(shared.probes) {
		t.Errorf("in-process replicas sent %d probes, shared %d: the comparison shows nothing", len(local.probes), len(shared.probes))
	}
	for _, r := range []fleetRun{shared, local} {
		for i, d := range r.recovery {
			if d == 0 || d > fleetCooldown+fleetUp/2 {
				t.Errorf("replica %d: not back on the primary within %v of its return (%v)", i, fleetCooldown+fleetUp/2, d)
			}
		}
		if r.served*10 < r.total*9 {
			t.Errorf("only %d of %d client requests answered 200: the chain should serve them", r.served, r.total)
		}
	}
}
