package mcptool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loopctl/loopctl-go/internal/ctxsleep"
)

// run is the supervisor: connect, serve until the connection ends, wait,
// reconnect; until ctx is done.
func (u *Upstream) run(ctx context.Context) {
	defer close(u.done)
	first := true
	failures := 0 // consecutive failed or short-lived connections
	for {
		if !first {
			u.mu.Lock()
			u.restarts++
			u.mu.Unlock()
		}
		cs, err := u.connect(ctx)
		if err != nil {
			// Recorded before the first attempt is announced done, so that
			// Start's caller reads why it failed.
			u.mu.Lock()
			u.downErr, u.since = err, time.Now()
			u.mu.Unlock()
		}
		if first {
			first = false
			close(u.firstDone)
		}
		if ctx.Err() != nil {
			if cs != nil {
				cs.Close()
			}
			return
		}
		if err == nil {
			upAt := time.Now()
			err = u.serve(ctx, cs)
			if ctx.Err() != nil {
				return
			}
			if time.Since(upAt) >= stableAfter {
				failures = 0
			}
		}
		failures++
		delay := u.backoff(failures)
		u.mu.Lock()
		u.session, u.downErr, u.since, u.retryAt = nil, err, time.Now(), time.Now().Add(delay)
		u.mu.Unlock()
		u.cfg.Logger.Warn("mcp server down", "server", u.cfg.Name, "err", err, "retry_in", delay)
		if ctxsleep.Sleep(ctx, delay) != nil {
			return
		}
	}
}

// backoff returns the wait after the n-th consecutive failure (n ≥ 1).
func (u *Upstream) backoff(n int) time.Duration {
	d := u.cfg.RestartBase
	for i := 1; i < n && d < u.cfg.RestartMax; i++ {
		d *= 2
	}
	d = min(d, u.cfg.RestartMax)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// connect makes one connection attempt: transport, handshake, tool list.
func (u *Upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	actx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
	defer cancel()
	t, err := u.cfg.Connect(actx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	cs, err := u.client.Connect(actx, u.withProgress(t), nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	tools, err := listTools(actx, cs)
	if err != nil {
		cs.Close()
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	f := u.listFeatures(actx, cs)
	u.mu.Lock()
	u.session, u.tools, u.features, u.downErr, u.since, u.retryAt = cs, tools, f, nil, time.Now(), time.Time{}
	u.mu.Unlock()
	u.cfg.Logger.Info("mcp server up", "server", u.cfg.Name, "tools", len(tools),
		"prompts", len(f.Prompts), "resources", len(f.Resources), "templates", len(f.Templates))
	u.toolsChanged(tools)
	u.featuresChanged(f, true)
	return cs, nil
}

// serve waits until cs ends or ctx is done, re-listing the tools whenever the
// server says they changed. It closes cs (which reaps a command's process)
// and returns why the connection ended.
func (u *Upstream) serve(ctx context.Context, cs *mcp.ClientSession) error {
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	defer func() {
		cs.Close()
		<-ended
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-ended:
			ended <- err // for the deferred receive
			if err == nil {
				err = errors.New("connection closed")
			}
			u.mu.Lock()
			u.session, u.downErr, u.since = nil, err, time.Now() // calls fail fast from now on
			u.mu.Unlock()
			return err
		case <-u.relist:
			lctx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
			u.relistFeatures(lctx, cs)
			cancel()
		case <-u.refresh:
			lctx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
			tools, err := listTools(lctx, cs)
			cancel()
			if err != nil && ctx.Err() == nil {
				u.cfg.Logger.Warn("mcp tools/list failed", "server", u.cfg.Name, "err", err)
				continue // the connection's end, if that is the cause, arrives next
			}
			if err != nil {
				continue
			}
			u.mu.Lock()
			u.tools = tools
			u.mu.Unlock()
			u.toolsChanged(tools)
		}
	}
}

// toolsChanged hands a new list to OnToolsChanged.
func (u *Upstream) toolsChanged(tools []*mcp.Tool) {
	if u.cfg.OnToolsChanged == nil {
		return
	}
	u.notifyMu.Lock()
	defer u.notifyMu.Unlock()
	u.cfg.OnToolsChanged(tools)
}

// listTools lists every page of cs's tools.
func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}
