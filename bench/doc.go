// Package bench is loopctl-go's side-by-side performance suite.
//
// It is a separate module (its own go.mod, with a replace directive pointing
// at the root module) so that the peer libraries it measures against never
// enter the core module's dependencies. The package holds no code of its own:
// everything is in the _test.go files, which benchmark loopctl-go's breaker,
// health registry, fallback manager and retry ladder next to
// github.com/sony/gobreaker/v2, github.com/failsafe-go/failsafe-go,
// github.com/eapache/go-resiliency, github.com/cenkalti/backoff/v5 and
// github.com/avast/retry-go/v4 in the same run, so that the ratios between
// them hold on a noisy machine.
//
// Three commands measure the gateway, `loopctl serve`: cmd/gateway
// (./gateway.sh: the latency and throughput it adds, next to a
// ReverseProxy and the Portkey gateway, a three-member pool next to a
// one-entry model included), cmd/outage (./outage.sh: what an outage of
// the primary model costs its clients, next to Portkey) and cmd/pool
// (./pool.sh: a pool of three members, one of them sick, next to
// Portkey's loadbalance mode).
//
// Run the whole comparison with ./compare.sh (see ../docs/performance.md);
// the sanity tests (go test ./...) check that every benchmark setup is really
// in the state it claims.
package bench
