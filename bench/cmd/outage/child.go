package main

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"time"
)

// child is a process the harness started (loopctl serve, node); every
// child is in children until it is stopped, so that any exit path can stop
// them all (stopAll).
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  *syncBuffer
}

var (
	childrenMu sync.Mutex
	children   = map[*child]bool{}
)

// startChild starts bin with args in dir (and env added to the harness's),
// its output kept in its log.
func startChild(bin, dir string, env []string, args ...string) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	c := &child{cmd: cmd, done: make(chan struct{}), log: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = c.log, c.log
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	childrenMu.Lock()
	children[c] = true
	childrenMu.Unlock()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop interrupts the process, kills it if it has not exited within 3s,
// and waits for it.
func (c *child) stop() {
	childrenMu.Lock()
	delete(children, c)
	childrenMu.Unlock()
	if c.exited() {
		return
	}
	c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// stopAll stops every child still running.
func stopAll() {
	childrenMu.Lock()
	var cs []*child
	for c := range children {
		cs = append(cs, c)
	}
	childrenMu.Unlock()
	for _, c := range cs {
		c.stop()
	}
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the
// harness's reads at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 4<<20 { // keep the end: drop the first half
		rest := append([]byte(nil), s.b.Bytes()[s.b.Len()/2:]...)
		s.b.Reset()
		s.b.Write(rest)
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
