package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real loopctl binary, built once for the tests that send it signals
// or put it in an image: static (CGO_ENABLED=0), as the Dockerfile builds it.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// loopctlBinary returns the path of the static loopctl binary, building it
// on first use (removed by TestMain).
func loopctlBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "loopctl-bin-"); binErr != nil {
			return
		}
		_ = os.Chmod(binDir, 0o755)
		binPath = filepath.Join(binDir, "loopctl")
		// The Dockerfile's flags (the image test puts it in the image), with
		// the checkout's commit named as the Dockerfile's COMMIT names it
		// (Go's own VCS stamp is off in a git worktree and with
		// GOFLAGS=-buildvcs=false).
		ldflags := "-s -w"
		if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
			ldflags += " -X github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli.commit=" + strings.TrimSpace(string(head))
		}
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags="+ldflags, "-o", binPath, "github.com/loopctl/loopctl-go/cmd/loopctl")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if binErr != nil {
		t.Fatalf("building loopctl: %v", binErr)
	}
	return binPath
}

// removeBinary removes the binary loopctlBinary built (from TestMain).
func removeBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// proc is a loopctl process started by startLoopctl.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	stdout *syncBuffer
	stderr *syncBuffer
	exited chan struct{}
	code   int
}

// startLoopctl starts the binary with args (and cmd tuned by setup, if
// given) and waits until it says where it listens; it is killed when the
// test ends if still running.
func startLoopctl(t *testing.T, setup func(*exec.Cmd), args ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: exec.Command(loopctlBinary(t), args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(p.cmd)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			_, _ = p.stdout.Write([]byte(sc.Text() + "\n"))
			if rest, ok := strings.CutPrefix(sc.Text(), "loopctl serve: listening on http://"); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	select {
	case p.addr = <-addr:
	case <-p.exited:
		t.Fatalf("loopctl exited (%d) before listening: %s", p.code, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("loopctl did not say where it listens within 30s: %s", p.stderr)
	}
	return p
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits up to d for the process to exit and returns its exit code.
func (p *proc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(d):
		p.t.Fatalf("loopctl still running %v later: %s", d, p.stdout)
		return -1
	}
}

// waitLog waits up to 5 s for text in the process's stderr (its log).
func (p *proc) waitLog(text string) {
	p.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.stderr.String(), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q in the log within 5s:\n%s", text, p.stderr)
		}
	}
}

// request sends a request to the process with key (may be "") and returns
// the status and body.
func (p *proc) request(method, path, key, body string) (int, string) {
	p.t.Helper()
	req, err := http.NewRequest(method, "http://"+p.addr+path, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// stream starts a streaming chat request for model and returns its body once
// the first content ("first ") arrived, with what was read so far.
func (p *proc) stream(model, key string) (io.ReadCloser, string) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "first ") {
		n, err := res.Body.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			p.t.Fatalf("stream %d ended before its first content: %v %s", res.StatusCode, err, seen.String())
		}
	}
	return res.Body, seen.String()
}
