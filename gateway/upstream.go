package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/retry"
)

// Errors an attempt fails with that the retry ladder classifies as
// transient.
var (
	errFirstByte      = errors.New("upstream sent no first byte within timeouts.first_byte")
	errRequestTimeout = errors.New("upstream request exceeded timeouts.request")
	errMalformed      = errors.New("upstream sent malformed JSON")
	errCut            = errors.New("upstream stream ended early")
)

// upstreamError is a non-2xx answer of an upstream, kept to pass through
// (400, 413, 422) or to report.
type upstreamError struct {
	status int
	header http.Header
	body   []byte
}

// Error returns the gateway's own words: the status, and the error type and
// code the upstream gave (never its message, which may echo anything).
func (e *upstreamError) Error() string {
	return fmt.Sprintf("upstream answered %d%s", e.status, errorInfo(e.body))
}

// result is a served attempt.
type result struct {
	resp    *http.Response
	body    *bytes.Buffer   // non-streaming: the whole answer (pooled)
	stream  *stream         // streaming: committed, with its held-back events
	ctx     context.Context // the attempt's context
	cancel  context.CancelCauseFunc
	first   time.Duration     // time to first byte
	content time.Duration     // time to first content: the stream's first chunk, or the whole answer (§8.2)
	held    *held             // where body's capacity is charged
	charge  int64             // what body's capacity charged to held
	clock   attemptClock      // the attempt's time bounds
	out     http.Request      // the upstream request, before its context
	payload bytes.Reader      // its body
	tr      *wire.Translation // the request was translated (§8); nil: same wire
}

// release frees what the result holds; the upstream connection is reused
// when the body was read to its end.
func (res *result) release() {
	if res.body != nil {
		putBuf(res.body)
		res.body = nil
	}
	if res.charge > 0 {
		res.held.free(res.charge)
		res.charge = 0
	}
	if res.stream != nil {
		res.stream.release()
		res.stream = nil
	}
	if res.resp != nil {
		_ = res.resp.Body.Close()
	}
	res.clock.stop()
	res.cancel(nil)
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufPool.Get().(*bytes.Buffer) }

func putBuf(b *bytes.Buffer) {
	if b.Cap() > 1<<20 {
		return
	}
	b.Reset()
	bufPool.Put(b)
}

// send makes one attempt: it sends body (model already rewritten, or
// translated by tr) to tg on wire w and reads the answer up to the point
// where the gateway commits to it (a whole non-streaming body, or a
// stream's first content event, translated). A failure is returned as an
// error the retry ladder classifies.
func (g *Gateway) send(ctx context.Context, tg *target, in *http.Request, body []byte, stream bool, w *endpoint, tr *wire.Translation) (*result, error) {
	res := &result{held: &g.held, tr: tr}
	ctx = res.clock.start(ctx, &g.timers, g.limits.firstByte, g.limits.idle, g.limits.request)
	res.ctx, res.cancel = ctx, res.clock.cancel
	fail := func(err error) (*result, error) {
		if c := context.Cause(ctx); c == errFirstByte || c == errRequestTimeout || c == errIdle {
			err = &timeoutError{fmt.Errorf("%w (%s)", c, tg.ref)}
		}
		res.release()
		return nil, err
	}
	start := time.Now()
	resp, err := g.post(ctx, res, tg, in, body, stream, w)
	if err != nil {
		return fail(err)
	}
	resp.Header = responseHeaders(resp.Header)
	resp.Body = res.clock.wrap(resp.Body)
	res.resp = resp
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		ue := &upstreamError{status: resp.StatusCode, header: resp.Header, body: b}
		return fail(statusError(ue, g.now()))
	}
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if !stream && sse {
		return fail(retry.Unrecoverable(shapeMismatch))
	}
	if stream && sse {
		st := newStream(resp.Body, w)
		if tr != nil {
			st.tc = tr.Stream()
		}
		if err := st.commit(g.holdLimits()); err != nil {
			return fail(commitError(err, tr, tg.ref, g.now()))
		}
		res.clock.firstByte()
		res.first = time.Since(start)
		res.content = res.first
		res.stream = st
		return res, nil
	}
	res.clock.firstByte()
	res.first = time.Since(start)
	if err := g.readWhole(res, tg); err != nil {
		return fail(err)
	}
	res.content = time.Since(start)
	if tr != nil {
		if err := res.translate(); err != nil {
			return fail(fmt.Errorf("%w (%s): %w", errMalformed, tg.ref, err))
		}
	}
	return res, nil
}

// translate replaces a whole translated answer with its translation into
// the client's wire.
func (res *result) translate() error {
	out, err := res.tr.Response(res.body.Bytes())
	if err != nil {
		return err
	}
	res.body.Reset()
	res.body.Write(out)
	return nil
}

// roundTrip sends req with the upstream transport, as http.Client.Do
// would with no redirects followed, no cookie jar and no client timeout
// (the attempt's context bounds it), without the client's per-request
// copies; an error is an *url.Error, as Do returns.
func (g *Gateway) roundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.transport.rt.RoundTrip(req)
	if err == nil && resp == nil {
		err = errors.New("the upstream transport returned no response and no error")
	}
	if err != nil {
		if resp != nil && resp.Body != nil {
			_ = resp.Body.Close()
		}
		return nil, &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
	}
	return resp, nil
}

// upstreamRequest composes the request of an attempt to tg on wire w: the
// client's query string and forwarded headers, the body as JSON, and the
// upstream's credentials. It is built in res, on the upstream's parsed URL,
// with shared header values: the transport only reads them.
func upstreamRequest(ctx context.Context, res *result, tg *target, in *http.Request, body []byte, w *endpoint, stream bool) (*http.Request, error) {
	u := tg.up.urls[w.idx]
	if c := tg.up.cloud; c != nil {
		u, _ = c.url(tg.model, w, stream) // its path names the model (§10.2)
	} else if v := tg.up.azureVersion; v != "" {
		u, _ = azureURL(tg.up.base, tg.model, v, w) // the deployment's path (azure.go)
	}
	if u == nil {
		return nil, errors.New("the upstream's base_url does not parse as a URL")
	}
	if in.URL.RawQuery != "" && tg.up.cloud == nil && tg.up.azureVersion == "" {
		q := *u
		q.RawQuery = in.URL.RawQuery // passed on, ignored for routing (§6)
		u = &q
	}
	// The body is an io.NopCloser around a *bytes.Reader: one the transport
	// knows is in memory, so it writes the headers and the body in one write.
	res.payload.Reset(body)
	res.out = http.Request{Method: http.MethodPost, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, len(in.Header)+3), Body: io.NopCloser(&res.payload), ContentLength: int64(len(body)), Host: u.Host,
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }}
	req := res.out.WithContext(ctx)
	forwardRequestHeaders(req.Header, in.Header)
	if res.tr != nil {
		dropOtherWireHeaders(req.Header, w)
	}
	req.Header["Content-Type"] = jsonContentType
	tg.up.authorize(req.Header)
	if c := tg.up.cloud; c != nil {
		c.headers(req.Header)
	}
	return req, nil
}

// dropOtherWireHeaders removes from a translated request's headers those
// of the client's wire that the upstream's wire w does not speak:
// anthropic-version and anthropic-beta never reach an openai upstream,
// openai-beta never an anthropic one (GATEWAY §8.2).
func dropOtherWireHeaders(h http.Header, w *endpoint) {
	if w.api == APIAnthropic {
		delete(h, "Openai-Beta")
		return
	}
	delete(h, "Anthropic-Version")
	delete(h, "Anthropic-Beta")
}

// jsonContentType is the Content-Type of every upstream request (shared:
// header values are only read).
var jsonContentType = []string{"application/json"}

// readWhole reads the non-streaming answer of res into res.body (pooled,
// its capacity charged to the held bytes); the error is the attempt's
// failure, classified for the retry ladder.
func (g *Gateway) readWhole(res *result, tg *target) error {
	buf := getBuf()
	res.body = buf
	var err error
	res.charge, err = g.readAnswer(buf, res.resp.Body, res.resp.ContentLength)
	if err != nil {
		if le := (*localError)(nil); errors.As(err, &le) {
			return retry.Unrecoverable(err)
		}
		return err
	}
	if !jsonValid(buf.Bytes()) {
		return fmt.Errorf("%w (%s)", errMalformed, tg.ref)
	}
	return nil
}

// authorize sets the upstream's static credentials on an upstream request
// (its auth type's header: by default OpenAI "Authorization: Bearer <key>",
// Anthropic "x-api-key: <key>"), and for Anthropic
// anthropic-version 2023-06-01 unless the client sent its own (the client's
// anthropic-beta is passed on with the other headers).
func (u *upstream) authorize(h http.Header) {
	if u.cred != nil {
		h[u.credHeader] = u.cred
	}
	if u.api != APIAnthropic {
		return
	}
	if len(h["Anthropic-Version"]) == 0 || h["Anthropic-Version"][0] == "" {
		h["Anthropic-Version"] = anthropicVersion
	}
}

// anthropicVersion is the anthropic-version sent when the client sent none.
var anthropicVersion = []string{"2023-06-01"}

// holdLimits are the bounds of what a stream holds back before its first
// content chunk.
func (g *Gateway) holdLimits() holdLimits {
	return holdLimits{events: 16, bytes: 64 << 10}
}

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}

// redactURLError drops the query and credentials of the URL in a
// connection error (the upstream's URL is the gateway's own business).
func redactURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
		ue.URL = u.String()
	} else {
		ue.URL = "(upstream URL)"
	}
	return err
}
