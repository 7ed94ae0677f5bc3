package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// sessions is the number of session keys the clients use.
const sessions = 50

// sessionKey is session s's key, sent as x-loopctl-session (and on the
// Messages wire as metadata.user_id, as Claude Code sends its session).
func sessionKey(s int) string { return fmt.Sprintf("bench-session-%02d", s) }

// target is one gateway under test, as a client reaches it.
type target struct {
	name   string // "loopctl" or "portkey"
	base   string // its base URL (http://host:port)
	header http.Header
}

// record is what the client saw of one request of the open-loop load.
type record struct {
	id      string        // "r<n>", in the request's text: the members log it
	at      time.Duration // when it was due, from the run's t0
	session int
	stream  bool
	sent    bool          // false: the in-flight cap was reached at its tick
	ok      bool          // 200 and a complete, well-formed answer
	why     string        // the failure, as the client saw it
	lat     time.Duration // until the whole answer (or the failure)
	ttfc    time.Duration // until the first content (a whole answer: lat)
	served  int           // the member whose answer it got (0-based), -1: none
	late    time.Duration // how late its tick fired (a stalled machine shows here)
}

// client is the load's HTTP client: keep-alive, one timeout per request.
type client struct {
	hc      *http.Client
	timeout time.Duration
	w       wire
}

func newClient(w wire, timeout time.Duration) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2048, 2048
	return &client{hc: &http.Client{Transport: tr, Timeout: timeout}, timeout: timeout, w: w}
}

// body is the request of record r on the client's wire.
func (c *client) body(r record) []byte {
	m := map[string]any{
		"model": "bench", "max_tokens": 16, "stream": r.stream,
		"messages": []any{map[string]any{"role": "user", "content": "ping " + r.id}},
	}
	if c.w == messages && r.session >= 0 {
		m["metadata"] = map[string]any{"user_id": sessionKey(r.session)}
	}
	b, _ := json.Marshal(m)
	return b
}

// do sends r's request to t and fills in what the client saw.
func (c *client) do(ctx context.Context, t target, r record) record {
	r.sent, r.served = true, -1
	path := "/v1/chat/completions"
	if c.w == messages {
		path = "/v1/messages"
	}
	req, err := http.NewRequestWithContext(ctx, "POST", t.base+path, bytes.NewReader(c.body(r)))
	if err != nil {
		r.why = err.Error()
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Stainless-Timeout", strconv.Itoa(int(c.timeout/time.Second)))
	if c.w == messages {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	if r.session >= 0 {
		req.Header.Set("X-Loopctl-Session", sessionKey(r.session))
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	start := time.Now()
	res, err := c.hc.Do(req)
	if err != nil {
		r.lat, r.why = time.Since(start), serve.ShortErr(err)
		r.ttfc = r.lat
		return r
	}
	defer res.Body.Close()
	all, ttfc, err := readAnswer(res.Body, start, r.stream)
	r.lat, r.ttfc = time.Since(start), ttfc
	if ttfc == 0 {
		r.ttfc = r.lat
	}
	r.served = servedBy(all)
	switch {
	case err != nil:
		r.why = fmt.Sprintf("HTTP %d, body cut: %s", res.StatusCode, serve.ShortErr(err))
	case res.StatusCode != 200:
		r.why = fmt.Sprintf("HTTP %d", res.StatusCode)
	case r.served < 0:
		r.why = "unexpected answer"
	case r.stream && (!strings.Contains(all, c.w.end()) || strings.Contains(all, `"error"`)):
		r.why = "broken stream"
	default:
		r.ok = true
	}
	return r
}

// end is the marker a complete stream on the wire ends with.
func (w wire) end() string {
	if w == messages {
		return "message_stop"
	}
	return "[DONE]"
}

// readAnswer reads a whole answer; for a stream it also times the first
// content ("pong ", the first text delta) from start.
func readAnswer(body io.Reader, start time.Time, stream bool) (string, time.Duration, error) {
	if !stream {
		b, err := io.ReadAll(io.LimitReader(body, 1<<20))
		return string(b), 0, err
	}
	var all strings.Builder
	var ttfc time.Duration
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadString('\n')
		all.WriteString(line)
		if ttfc == 0 && strings.Contains(line, "pong ") {
			ttfc = time.Since(start)
		}
		if err == io.EOF {
			return all.String(), ttfc, nil
		}
		if err != nil || all.Len() > 1<<20 {
			return all.String(), ttfc, err
		}
	}
}

// servedBy returns the member named in an answer ("@m2@": 1), or -1.
func servedBy(body string) int {
	for i, n := range memberNames {
		if strings.Contains(body, "@"+n+"@") {
			return i
		}
	}
	return -1
}

// plan is the load's requests before they are sent: request i is due at
// from + i/rate, streams when i%4 == 3, and belongs to a session drawn
// with a fixed seed, so that every run and gateway sends the same load.
func plan(from, until time.Duration, rate int) []record {
	interval := time.Second / time.Duration(rate)
	n := int((until - from) / interval)
	rnd := rand.New(rand.NewPCG(38, 1))
	recs := make([]record, n)
	for i := range recs {
		recs[i] = record{id: "r" + strconv.Itoa(i), at: from + time.Duration(i)*interval, session: rnd.IntN(sessions), stream: i%4 == 3, served: -1}
	}
	return recs
}

// openLoop sends the planned requests to t, each at its time on its own
// goroutine whatever the others do (open loop); a tick that finds
// maxInFlight requests in flight records its request as not sent. It
// returns when every request has ended (each is bounded by the client's
// timeout) or ctx ends.
func openLoop(ctx context.Context, c *client, t target, t0 time.Time, recs []record, maxInFlight int) []record {
	out := append([]record(nil), recs...)
	var wg sync.WaitGroup
	var inFlight atomic.Int64
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i, r := range recs {
		timer.Reset(time.Until(t0.Add(r.at)))
		select {
		case <-ctx.Done():
			wg.Wait()
			return out[:i]
		case <-timer.C:
		}
		out[i].late = time.Since(t0.Add(r.at))
		if inFlight.Load() >= int64(maxInFlight) {
			out[i].why = fmt.Sprintf("not sent (%d in flight)", maxInFlight)
			continue
		}
		inFlight.Add(1)
		wg.Go(func() {
			defer inFlight.Add(-1)
			late := out[i].late
			out[i] = c.do(ctx, t, r)
			out[i].late = late
		})
	}
	wg.Wait()
	return out
}
