package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

const healthcheckUsage = `usage: loopctl healthcheck [--url URL]

Asks a running gateway whether it is ready: exit 0 when its /readyz answers
200, 1 otherwise (not ready, draining, down, or no answer within 2 s). URL
is the readiness URL, or the gateway's base URL (with no path, /readyz is
asked, as loopctl admin --url takes it). It needs no shell, for an
exec-form HEALTHCHECK in a container image:
  HEALTHCHECK CMD ["/loopctl", "healthcheck"]`

// healthcheckTimeout bounds the whole check.
const healthcheckTimeout = 2 * time.Second

// runHealthcheck is `loopctl healthcheck`.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("healthcheck")
	url := fs.String("url", "http://127.0.0.1:4000/readyz", "the gateway's readiness `URL`")
	if code, done := ParseFlags(fs, healthcheckUsage, args, stdout, stderr); done {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return UsageError(stderr, fs.Name(), fmt.Sprintf("--url: %v", err))
	}
	if req.URL.Path == "" || req.URL.Path == "/" { // a base URL
		req.URL.Path = "/readyz"
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl healthcheck: %v\n", err)
		return ExitFailure
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "loopctl healthcheck: %s: %s %s\n", req.URL, res.Status, body)
		return ExitFailure
	}
	fmt.Fprintf(stdout, "%s", body)
	return ExitOK
}
