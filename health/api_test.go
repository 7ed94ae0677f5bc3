package health_test

import (
	"context"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
)

// The exported API exactly as docs/API.md states it: this file stops compiling
// if a signature drifts.
var (
	_ health.Status              = health.Healthy
	_ health.Status              = health.Degraded
	_ health.Status              = health.Unhealthy
	_ func(health.Status) string = health.Status.String

	_ func(breaker.Settings) (*health.Registry, error)      = health.NewRegistry
	_ func(*health.Registry, string) (health.Permit, error) = (*health.Registry).Allow
	_ func(*health.Registry, string) bool                   = (*health.Registry).WouldAllow
	_ func(*health.Registry, string) *breaker.Breaker       = (*health.Registry).Breaker
	_ func(*health.Registry, string) health.Stats           = (*health.Registry).Stats
	_ func(*health.Registry, string) health.Status          = (*health.Registry).Status
	_ func(*health.Registry) []health.ToolHealth            = (*health.Registry).Summary

	_ func(health.Permit) bool   = health.Permit.IsProbe
	_ func(health.Permit)        = health.Permit.Success
	_ func(health.Permit)        = health.Permit.Failure
	_ func(health.Permit)        = health.Permit.Cancel
	_ func(health.Permit, error) = health.Permit.Done

	_ = health.Stats{
		Calls: uint64(0), Successes: uint64(0), Failures: uint64(0),
		TotalDuration: time.Duration(0), MaxDuration: time.Duration(0),
		EWMA: float64(0),
	}
	_ func(health.Stats) float64 = health.Stats.SuccessRate
	_ func(health.Stats) float64 = health.Stats.Score

	_ = health.ToolHealth{Tool: "", State: breaker.Closed, Status: health.Healthy, Stats: health.Stats{}}

	_ func(*health.Registry, map[string][]string) *health.Router = health.NewRouter
	_ func(*health.Router, string) (string, error)               = (*health.Router).Resolve

	// Revision 2 additions: the gate-call-verdict helper and the probe's lease.
	_ func(health.Permit) (time.Time, bool)                                                            = health.Permit.Deadline
	_ func(*health.Registry, string) bool                                                              = (*health.Registry).Reset
	_ func(context.Context, *health.Registry, string, func(context.Context) (int, error)) (int, error) = health.Do[int]

	// Revision 3 addition: a timeout, dated at the call's start.
	_ func(health.Permit) = health.Permit.Timeout

	// Revision 4 additions: the time to first content (SEMANTICS §8.2).
	_ func(health.Permit, time.Duration)        = health.Permit.SuccessAfter
	_ func(health.Permit, error, time.Duration) = health.Permit.DoneAfter
)
