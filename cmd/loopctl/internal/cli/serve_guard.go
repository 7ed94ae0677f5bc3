package cli

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of the guards against slow clients.
const (
	// defaultBodyGrace is how long a request body may take before the
	// minimum rate applies.
	defaultBodyGrace = 5 * time.Second
	// defaultBodyRate is the minimum rate of a request body after the grace
	// period, in bytes per second: a client dripping its body more slowly is
	// cut (its slot goes to someone else).
	defaultBodyRate = 4 << 10
)

// connLimit returns how many client connections serve accepts at once with
// nofile file descriptors: half of what the limit leaves after a reserve,
// so that every client connection can have an upstream connection (and the
// store, the log and the listener theirs) without ever reaching the limit.
func connLimit(nofile uint64) int {
	const reserve = 64
	if nofile <= 2*reserve {
		return 16
	}
	return int(min((nofile-reserve)/2, 1<<20))
}

// fdLimit returns the process's soft limit on open files (0: unknown).
func fdLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}

// limitListener accepts at most n connections at once: past it, Accept
// waits for one to close (new connections wait in the kernel's backlog,
// taking no file descriptor of the process).
type limitListener struct {
	net.Listener
	sem    chan struct{}
	open   atomic.Int64
	onOpen func(open int) // called with the count after each accept (tests)
	done   chan struct{}
	once   sync.Once
}

func newLimitListener(l net.Listener, n int, onOpen func(int)) *limitListener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), onOpen: onOpen, done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	n := l.open.Add(1)
	if l.onOpen != nil {
		l.onOpen(int(n))
	}
	return &limitConn{Conn: c, l: l}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		<-c.l.sem
	})
	return err
}

// minRate wraps h so that a request body must arrive at rate bytes per
// second once grace has passed (never later than total from the start): a
// body dripped more slowly is cut by the connection's read deadline.
func minRate(h http.Handler, grace time.Duration, rate int64, total time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &rateBody{ReadCloser: r.Body, rc: http.NewResponseController(w), start: time.Now(), grace: grace, rate: rate, total: total}
		}
		h.ServeHTTP(w, r)
	})
}

type rateBody struct {
	io.ReadCloser
	rc           *http.ResponseController
	start        time.Time
	grace, total time.Duration
	rate, n      int64
	done         bool
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	allowed := b.grace + time.Duration(float64(b.n)/float64(b.rate)*float64(time.Second))
	_ = b.rc.SetReadDeadline(b.start.Add(min(allowed, b.total)))
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err == io.EOF {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{}) // the body is in: no deadline on what follows
	}
	return n, err
}
