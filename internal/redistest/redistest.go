// Package redistest starts real redis-server processes for tests: each on a
// free loopback port (never the default 6379), with a temporary working
// directory, stopped when the test ends. It also provides the fault
// injections the fleet tests need: SIGKILL and restart (with or without the
// data), SIGSTOP and SIGCONT, and a TCP proxy that adds latency.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server process owned by a test.
type Server struct {
	tb    testing.TB
	bin   string
	dir   string
	port  int
	extra []string // more arguments (a cluster node's)

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Binary returns the path of redis-server, or an error saying how to install it.
func Binary() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", errors.New("redis-server not found on PATH; install with: apt-get install -y redis-server")
	}
	return p, nil
}

// Start starts a redis-server on a free loopback port and registers its
// shutdown with tb.Cleanup. The test fails (it never skips) when
// redis-server is not installed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		tb.Fatal(err)
	}
	return StartBinary(tb, bin)
}

// StartBinary is [Start] with another server binary that takes
// redis-server's arguments, such as valkey-server.
func StartBinary(tb testing.TB, bin string) *Server {
	tb.Helper()
	s := &Server{tb: tb, bin: bin, dir: tb.TempDir(), port: freePort(tb)}
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Kill() })
	return s
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

func (s *Server) start() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "no",
		"--dbfilename", "dump.rdb", "--protected-mode", "yes",
		"--loglevel", "warning", "--daemonize", "no"}, s.extra...)
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s.ping() == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return fmt.Errorf("redistest: %s did not answer PING within 10s", filepath.Base(s.bin))
}

// ping sends an inline PING and waits for +PONG.
func (s *Server) ping() error {
	_, err := s.Command("PING")
	return err
}

// Command sends one command (inline, space-separated arguments without
// spaces) on a fresh connection and returns the first line of the reply, or
// for a bulk reply its body.
func (s *Server) Command(args ...string) (string, error) { return Command(s.Addr(), args...) }

// Command sends one command to the server at addr on a fresh connection, as
// [Server.Command] does.
func Command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "-"):
		return "", errors.New(line[1:])
	case strings.HasPrefix(line, "$"):
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return line[1:], nil
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// CommandStat returns the number of calls of a command (lower case, e.g.
// "evalsha") from INFO commandstats.
func (s *Server) CommandStat(cmd string) (int64, error) {
	info, err := s.Command("INFO", "commandstats")
	if err != nil {
		return 0, err
	}
	return ParseCommandStat(info, cmd), nil
}

// Scripts returns the number of scripts the server has run: the calls of
// EVALSHA and EVAL together, read from one INFO commandstats so that both
// counts are of the same moment.
func (s *Server) Scripts() (int64, error) {
	info, err := s.Command("INFO", "commandstats")
	if err != nil {
		return 0, err
	}
	return ParseCommandStat(info, "evalsha") + ParseCommandStat(info, "eval"), nil
}

// ParseCommandStat extracts calls= for cmdstat_<cmd> from INFO commandstats
// text; 0 if the command was never called.
func ParseCommandStat(info, cmd string) int64 {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
	}
	return 0
}

// Calls returns the total number of commands the server has processed
// (total_commands_processed), including the INFO that reads it.
func (s *Server) Calls() (int64, error) {
	info, err := s.Command("INFO", "stats")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("redistest: no total_commands_processed in INFO stats")
}

// Kill stops the server with SIGKILL (no data saved) and waits for it. It
// does nothing if the server is not running.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process must run to die cleanly
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// Save makes the server write its data to disk (SAVE), so that a restart
// with data finds it.
func (s *Server) Save() error {
	_, err := s.Command("SAVE")
	return err
}

// Restart starts the server again on the same port after Kill. With
// keepData, the dump written by the last Save is loaded; without, the
// directory is emptied first and the server starts empty.
func (s *Server) Restart(keepData bool) {
	s.tb.Helper()
	s.Kill()
	if !keepData {
		_ = os.Remove(filepath.Join(s.dir, "dump.rdb"))
	}
	if err := s.start(); err != nil {
		s.tb.Fatal(err)
	}
}

// Stop pauses the server with SIGSTOP: connections stay open, nothing answers.
func (s *Server) Stop() { s.signal(syscall.SIGSTOP) }

// Cont resumes a server paused with Stop.
func (s *Server) Cont() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p != 6379 {
			return p
		}
	}
}
