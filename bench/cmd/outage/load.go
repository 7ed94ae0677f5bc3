package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// target is one gateway under test, as a client reaches it.
type target struct {
	name   string // "loopctl" or "portkey"
	url    string // its chat completions endpoint
	header http.Header
}

// record is what the client saw of one request of the open-loop load.
type record struct {
	at     time.Duration // when it was due, from the run's t0
	lat    time.Duration // until the whole answer (or the failure)
	stream bool
	sent   bool          // false: the in-flight cap was reached at its tick
	ok     bool          // 200 and a complete, well-formed answer
	why    string        // the failure, as the client saw it
	served string        // "primary" or "backup" (from the completion id)
	late   time.Duration // how late its tick fired (a stalled machine shows here)
}

// Request bodies: streamed and not; the upstreams ignore "model".
var (
	plainBody  = []byte(`{"model":"bench","messages":[{"role":"user","content":"ping"}]}`)
	streamBody = []byte(`{"model":"bench","stream":true,"messages":[{"role":"user","content":"ping"}]}`)
)

// client is the load's HTTP client: keep-alive, one timeout per request
// (what an SDK user sets), stated to the gateway as X-Stainless-Timeout,
// as the official OpenAI SDKs do.
type client struct {
	hc      *http.Client
	timeout time.Duration
}

func newClient(timeout time.Duration) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2048, 2048
	return &client{hc: &http.Client{Transport: tr, Timeout: timeout}, timeout: timeout}
}

// do sends one request to t and checks the answer.
func (c *client) do(ctx context.Context, t target, stream bool) (rec record, status int, hdr http.Header, body string) {
	rec.stream, rec.sent = stream, true
	b := plainBody
	if stream {
		b = streamBody
	}
	req, err := http.NewRequestWithContext(ctx, "POST", t.url, bytes.NewReader(b))
	if err != nil {
		rec.why = err.Error()
		return rec, 0, nil, ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Stainless-Timeout", strconv.Itoa(int(c.timeout/time.Second)))
	for k, v := range t.header {
		req.Header[k] = v
	}
	start := time.Now()
	res, err := c.hc.Do(req)
	if err != nil {
		rec.lat, rec.why = time.Since(start), serve.ShortErr(err)
		return rec, 0, nil, ""
	}
	defer res.Body.Close()
	all, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	rec.lat = time.Since(start)
	body = string(all)
	switch {
	case err != nil:
		rec.why = fmt.Sprintf("HTTP %d, body cut: %s", res.StatusCode, serve.ShortErr(err))
	case res.StatusCode != 200:
		rec.why = fmt.Sprintf("HTTP %d", res.StatusCode)
	case stream && (!strings.Contains(body, `"po"`) || !strings.Contains(body, "[DONE]") || strings.Contains(body, `"error"`)):
		rec.why = "broken stream"
	case !stream && !strings.Contains(body, `"pong"`):
		rec.why = "unexpected answer"
	default:
		rec.ok = true
	}
	switch {
	case strings.Contains(body, "chatcmpl-primary"):
		rec.served = "primary"
	case strings.Contains(body, "chatcmpl-backup"):
		rec.served = "backup"
	}
	return rec, res.StatusCode, res.Header, body
}

// openLoop sends rate requests per second to t, from t0+from until
// t0+until, one in four streaming, each on its own goroutine whatever the
// others do (open loop); a tick that finds maxInFlight requests in flight
// records its request as not sent. It returns when every request has
// ended (each is bounded by the client's timeout) or ctx ends.
func openLoop(ctx context.Context, c *client, t target, t0 time.Time, from, until time.Duration, rate, maxInFlight int) []record {
	interval := time.Second / time.Duration(rate)
	n := int((until - from) / interval)
	recs := make([]record, n)
	var wg sync.WaitGroup
	var inFlight atomic.Int64
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := range n {
		at := from + time.Duration(i)*interval
		timer.Reset(time.Until(t0.Add(at)))
		select {
		case <-ctx.Done():
			wg.Wait()
			return recs[:i]
		case <-timer.C:
		}
		late := time.Since(t0.Add(at))
		recs[i] = record{at: at, stream: i%4 == 3, late: late}
		if inFlight.Load() >= int64(maxInFlight) {
			recs[i].why = fmt.Sprintf("not sent (%d in flight)", maxInFlight)
			continue
		}
		inFlight.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer inFlight.Add(-1)
			r, _, _, _ := c.do(ctx, t, recs[i].stream)
			r.at, r.late = at, late
			recs[i] = r
		}()
	}
	wg.Wait()
	return recs
}
