package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/retry"
)

// post sends an attempt's request to tg (wire w, body its final bytes) and
// returns the upstream's answer: authenticated by the upstream's auth type
// (a token helper's token renewed once after a 401), a Bedrock or Vertex
// error answer already read and mapped to its meaning (GATEWAY §10.2), a
// Bedrock stream read as Messages server-sent events. An error is the
// attempt's, classified for the retry ladder: an authentication that
// could not be made is a failure of this upstream, never retried.
func (g *Gateway) post(ctx context.Context, res *result, tg *target, in *http.Request, body []byte, stream bool, w *endpoint) (*http.Response, error) {
	for try := 0; ; try++ {
		req, err := upstreamRequest(ctx, res, tg, in, body, w, stream)
		if err != nil {
			return nil, retry.Unrecoverable(err)
		}
		if a := tg.up.auth; a != nil {
			err := a.authorize(ctx, req, body)
			tg.up.authFailing.Store(err != nil)
			if err != nil {
				err = fmt.Errorf("upstream %s: %w", tg.up.name, err)
				g.logAuthFailure(tg.up, err)
				return nil, retry.Unrecoverable(err)
			}
		}
		resp, err := g.roundTrip(req)
		if err != nil {
			return nil, redactURLError(err)
		}
		if r, ok := tg.up.auth.(renewer); ok && try == 0 && resp.StatusCode == http.StatusUnauthorized && r.rejected() {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			continue // once more, with a fresh token
		}
		c := tg.up.cloud
		if c == nil {
			return resp, nil
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
			return nil, g.cloudAnswerError(c, resp, b)
		}
		adaptStream(resp)
		return resp, nil
	}
}

// authLogEvery is how often an upstream's failing authentication is
// logged: every request fails the same way until it is fixed, and one line
// a minute says so without flooding the log.
const authLogEvery = time.Minute

// logAuthFailure logs an upstream authentication that could not be made,
// at most once per authLogEvery for u, with the credential source tried
// (the error names the upstream and the step, never a credential or a
// token helper's output).
func (g *Gateway) logAuthFailure(u *upstream, err error) {
	if g.log == nil {
		return
	}
	now := g.now().UnixNano()
	last := u.authLogged.Load()
	if last != 0 && now-last < int64(authLogEvery) || !u.authLogged.CompareAndSwap(last, now) {
		return
	}
	g.log.Warn("upstream auth failed", "upstream", u.name, "source", authSource(u.auth), "error", err.Error())
}
