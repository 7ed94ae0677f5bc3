package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loopctl/loopctl-go/gateway"
)

// errDraining is /readyz's reason once the first SIGTERM/SIGINT came.
var errDraining = errors.New("draining: this process is stopping (docs/GATEWAY.md §9.4)")

// haltWait is how long the handlers get, once halted, to write their
// error events before every connection is closed.
const haltWait = 2 * time.Second

// notDraining is the gateway's readiness: not ready once draining is set.
func notDraining(draining *atomic.Bool) func(context.Context) error {
	return func(context.Context) error {
		if draining.Load() {
			return errDraining
		}
		return nil
	}
}

// stop drains srv after the first signal: /readyz answers 503 from now
// on, serving goes on for s.drainDelay, then drain.
func (s serveSettings) stop(srv *http.Server, errc <-chan error, draining *atomic.Bool, stdout io.Writer, halt context.CancelCauseFunc) int {
	draining.Store(true)
	if !s.keepServing(stdout) {
		_ = srv.Close()
		<-errc
		return ExitFailure
	}
	fmt.Fprintf(stdout, "loopctl serve: stopping; draining requests in flight (up to %v; a second signal stops at once)\n", s.grace)
	return drain(srv, errc, s, stdout, halt)
}

// keepServing waits out s.drainDelay (serving goes on, /readyz answers
// 503); false when a second signal came first (stop at once).
func (s serveSettings) keepServing(stdout io.Writer) bool {
	if s.drainDelay <= 0 {
		return true
	}
	fmt.Fprintf(stdout, "loopctl serve: draining: /readyz answers 503; serving for %v more before the grace starts\n", s.drainDelay)
	t := time.NewTimer(s.drainDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.force:
		fmt.Fprintf(stdout, "loopctl serve: second signal; closing every connection now\n")
		return false
	}
}

// haltAndClose ends what srv still serves: the requests' contexts end with
// gateway.ErrHalted (a stream gets its wire's error event, a request not
// yet answered a 503), the handlers get haltWait to write them, and then
// every connection is closed.
func haltAndClose(srv *http.Server, halt context.CancelCauseFunc) {
	halt(gateway.ErrHalted)
	ctx, cancel := context.WithTimeout(context.Background(), haltWait)
	defer cancel()
	_ = srv.Shutdown(ctx)
	_ = srv.Close()
}

// prepare applies the flags that override the config file to a reloaded
// configuration and runs serve's own checks on it: what a reload runs
// before it builds anything (with gateway.Gateway.Reload's).
func (s serveSettings) prepare(cfg gateway.Config) (gateway.Config, error) {
	if s.listenFlag != "" {
		cfg.Listen = s.listenFlag
	}
	if s.redisFlag != "" {
		cfg.Store.Redis = s.redisFlag
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	eff := cfg
	eff.Listen = s.cfg.Listen // a reload does not move the listener
	if err := safety(eff); err != nil {
		return cfg, &gateway.ConfigError{Problems: []gateway.Problem{{Path: "client_keys", Message: err.Error()}}}
	}
	return cfg, nil
}

// reloadOnHangup reloads live at every SIGHUP (its outcome is logged by
// live); the returned function stops it.
func reloadOnHangup(live *gateway.Live) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-hup:
				_, _ = live.Reload()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done); <-stopped }
}
