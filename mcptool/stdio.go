package mcptool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// commandTransport is the stdio transport of [Command]: mcp.CommandTransport
// with a stdout that skips lines that are not JSON-RPC messages.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	log       *slog.Logger
}

// Connect starts the process.
func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := &jsonLines{r: bufio.NewReaderSize(stdout, 64<<10), log: t.log, cmd: t.cmd.Path}
	w := &processStdin{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate}
	return (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: w}).Connect(ctx)
}

// maxLogged bounds how much of a skipped line is logged.
const maxLogged = 200

// jsonLines passes the lines of r that start (after blanks) with '{' or '['
// and skips the others, logging each.
type jsonLines struct {
	r    *bufio.Reader
	log  *slog.Logger
	cmd  string
	mid  bool // inside a line
	skip bool // the current line is being skipped
	buf  []byte
}

// Read implements io.Reader.
func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.buf) == 0 {
		chunk, err := j.r.ReadSlice('\n')
		if len(chunk) > 0 {
			j.take(chunk)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if len(j.buf) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, j.buf)
	j.buf = j.buf[n:]
	return n, nil
}

// take handles one chunk: a whole line, or a part of one.
func (j *jsonLines) take(chunk []byte) {
	if !j.mid {
		body := bytes.TrimLeft(chunk, " \t\r")
		j.skip = len(body) > 0 && body[0] != '{' && body[0] != '[' && body[0] != '\n'
		if j.skip {
			line := bytes.TrimRight(body, "\r\n")
			if len(line) > maxLogged {
				line = append(line[:maxLogged:maxLogged], "…"...)
			}
			j.log.Warn("mcp server wrote a non-JSON line to stdout; skipped", "command", j.cmd, "line", string(line))
		}
	}
	j.mid = chunk[len(chunk)-1] != '\n'
	if !j.skip {
		j.buf = append(j.buf[:0], chunk...)
	}
}

// processStdin is the process's stdin; closing it ends the process as
// mcp.CommandTransport does: stdin closed, then SIGTERM, then SIGKILL.
type processStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

// Close closes stdin and waits for the process, escalating after terminate.
func (s *processStdin) Close() error {
	if err := s.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(s.terminate)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}
