package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/health"
)

// settle gives p the verdict of a request that ended with err (nil: a
// success): the caller's cancellation is no verdict, a request cut by its
// deadline a timeout (dated at its start: SEMANTICS §1), anything else
// a failure. A success is reported with its time to first content, ttfc
// (SEMANTICS §8.2).
func settle(p health.Permit, parent context.Context, err error, ttfc time.Duration) {
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || parent.Err() == context.Canceled):
		p.Cancel()
	case err != nil && parent.Err() == context.DeadlineExceeded:
		p.Timeout()
	default:
		p.DoneAfter(err, ttfc) // context.DeadlineExceeded: a timeout too
	}
}

// noVerdict reports whether an error status carries no verdict against the
// host: the request was malformed (SEMANTICS section 4).
func noVerdict(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge ||
		code == http.StatusUnprocessableEntity
}

// pass returns resp to the caller with p settled: at once for an error
// status or a body-less response, else when the body ends. cancel, if not
// nil, ends the probe's lease context and is called once the body is done.
// began is the request's start: a success's time to first content (SEMANTICS
// §8.2) runs from it to the first bytes of the body read (a body-less
// response: to its headers).
func pass(resp *http.Response, p health.Permit, parent context.Context, cancel context.CancelFunc, began time.Time) *http.Response {
	switch {
	case resp.StatusCode >= 400:
		if noVerdict(resp.StatusCode) {
			p.Cancel()
		} else {
			p.Failure()
		}
	case resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols:
		p.SuccessAfter(time.Since(began))
		if cancel != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			cancel()
		}
		return resp
	default:
		resp.Body = &body{rc: resp.Body, p: p, parent: parent, cancel: cancel, length: resp.ContentLength, began: began}
		return resp
	}
	if cancel != nil {
		// Settled already: the zero Permit's methods do nothing.
		resp.Body = &body{rc: resp.Body, parent: parent, cancel: cancel, length: resp.ContentLength}
	}
	return resp
}

// body passes a response body through unbuffered and settles the permit when
// it ends: io.EOF (or all of Content-Length read, then Close) is a success, a
// read error a failure (the caller's cancellation: no verdict), a Close
// before the end a cancel. The first read that returns bytes dates the
// answer's first content.
type body struct {
	rc      io.ReadCloser
	p       health.Permit
	parent  context.Context
	cancel  context.CancelFunc
	length  int64 // Content-Length; -1 if unknown
	n       atomic.Int64
	settled atomic.Bool
	began   time.Time    // the request's start
	first   atomic.Int64 // time to the first bytes read, +1 (0: none yet)
}

// Read reads from the upstream body.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		if b.n.Add(int64(n)) == int64(n) {
			b.first.CompareAndSwap(0, int64(time.Since(b.began))+1)
		}
	}
	if err != nil {
		if err == io.EOF {
			b.end(nil)
		} else {
			b.end(err)
		}
	}
	return n, err
}

// Close closes the upstream body; before the end it is a cancel.
func (b *body) Close() error {
	if b.length >= 0 && b.n.Load() >= b.length {
		b.end(nil)
	} else {
		b.end(context.Canceled)
	}
	return b.rc.Close()
}

// end settles the permit once and ends the lease context.
func (b *body) end(err error) {
	if !b.settled.CompareAndSwap(false, true) {
		return
	}
	ttfc := time.Duration(b.first.Load() - 1)
	if ttfc < 0 {
		ttfc = time.Since(b.began) // an empty body: the answer is its end
	}
	settle(b.p, b.parent, err, ttfc)
	if b.cancel != nil {
		b.cancel()
	}
}
