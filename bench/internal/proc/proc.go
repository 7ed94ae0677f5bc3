// Package proc runs the benchmarks' child processes (loopctl serve, the
// Portkey gateway on node, the harness's own roles) as users run them: each
// is its own process, dies with the harness (a parent-death signal on
// Linux), and is listed until it is stopped, so that every exit path of a
// harness can stop them all with StopAll. A Child's output is kept in its
// Log unless the caller routes it elsewhere.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Child is a started process.
type Child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// Log holds what the process wrote, when Start gave it no other
	// output (the last 2-4 MiB).
	Log *Buffer
}

var (
	mu       sync.Mutex
	children = map[*Child]bool{}
)

// Start starts cmd as a Child: with the parent-death signal, and with its
// stdout and stderr kept in Log where cmd has none.
func Start(cmd *exec.Cmd) (*Child, error) {
	c := &Child{cmd: cmd, done: make(chan struct{}), Log: &Buffer{}}
	if cmd.Stdout == nil {
		cmd.Stdout = c.Log
	}
	if cmd.Stderr == nil {
		cmd.Stderr = c.Log
	}
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	mu.Lock()
	children[c] = true
	mu.Unlock()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Pid is the process id, for a harness's log.
func (c *Child) Pid() string { return strconv.Itoa(c.cmd.Process.Pid) }

// Exited reports whether the process has ended.
func (c *Child) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Stop interrupts the process, kills it if it has not exited within 3s,
// and waits for it. Stopping a stopped Child does nothing.
func (c *Child) Stop() {
	mu.Lock()
	delete(children, c)
	mu.Unlock()
	if c.Exited() {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// StopAll stops every Child still running.
func StopAll() {
	mu.Lock()
	var cs []*Child
	for c := range children {
		cs = append(cs, c)
	}
	mu.Unlock()
	for _, c := range cs {
		c.Stop()
	}
}

// FreeAddr returns a loopback address ("127.0.0.1:port") that was free a
// moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// WaitReady polls url until it answers with a status below 500, c exits,
// ctx ends or limit passes.
func WaitReady(ctx context.Context, url string, c *Child, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if c.Exited() {
			return errors.New("exited before it answered")
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		req, _ := http.NewRequestWithContext(rctx, "GET", url, nil)
		res, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			res.Body.Close()
			if res.StatusCode < 500 {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering %s after %v: %v", url, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Buffer is a bytes.Buffer safe for a process's writes and the harness's
// reads at once; past 4 MiB it keeps the end.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, first dropping the older half past 4 MiB.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 4<<20 {
		rest := append([]byte(nil), s.b.Bytes()[s.b.Len()/2:]...)
		s.b.Reset()
		s.b.Write(rest)
	}
	return s.b.Write(p)
}

// String returns what is kept.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail returns the last n bytes of s, marked "..." when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
