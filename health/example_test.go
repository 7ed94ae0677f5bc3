package health_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
)

func Example() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	reg, err := health.NewRegistry(breaker.Settings{
		FailureThreshold: 2,
		Now:              func() time.Time { return now },
		OnStateChange: func(tool string, from, to breaker.State) {
			fmt.Printf("%s: %v -> %v\n", tool, from, to)
		},
	})
	if err != nil {
		panic(err)
	}
	router := health.NewRouter(reg, map[string][]string{"search": {"web_search"}})

	// call makes one 200ms call to tool through the registry.
	call := func(tool string, fail bool) {
		p, err := reg.Allow(tool)
		if err != nil {
			fmt.Println(err)
			return
		}
		now = now.Add(200 * time.Millisecond)
		if fail {
			p.Failure()
		} else {
			p.Success()
		}
	}

	call("search", true)
	call("search", true) // trips search's breaker
	call("search", true) // refused

	// The router sends search's calls to its backup.
	name, _ := router.Resolve("search")
	fmt.Println("resolved:", name, "backups:", router.Backups("search"))
	call(name, false)
	call(name, true)
	call(name, true) // trips web_search's breaker

	_, err = router.Resolve("search")
	fmt.Println(err, errors.Is(err, breaker.ErrOpen))

	for _, h := range reg.Summary() {
		fmt.Printf("%s %v %v calls=%d score=%.2f\n", h.Tool, h.State, h.Status, h.Stats.Calls, h.Stats.Score())
	}

	// Output:
	// search: closed -> open
	// tool temporarily unavailable: circuit breaker open for "search"; retry in 30s
	// resolved: web_search backups: [web_search]
	// web_search: closed -> open
	// tool temporarily unavailable: circuit breaker open for "search" and its backup "web_search"; retry in 30s true
	// search open unhealthy calls=2 score=0.34
	// web_search open unhealthy calls=3 score=0.44
}

// The per-call pattern of an agent loop: resolve (pure), gate, call, settle.
func ExampleRouter_Resolve() {
	reg, err := health.NewRegistry(breaker.Settings{FailureThreshold: 3, RecoveryDuration: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	router := health.NewRouter(reg, map[string][]string{"search": {"web_search"}})
	callTool := func(ctx context.Context, name string) (string, error) { return name + ": ok", nil }

	ctx := context.Background()
	name, err := router.Resolve("search")
	if err != nil {
		fmt.Println(err) // soft error: the model reads it and adapts
		return
	}
	p, err := reg.Allow(name)
	if err != nil {
		fmt.Println(err) // soft error too; not recorded as a failure
		return
	}
	result, err := callTool(ctx, name)
	p.Done(err) // nil: success; context.Canceled: no verdict; else failure
	fmt.Println(result, reg.Status(name))
	// Output: search: ok healthy
}

// Do is the gate, the call and the verdict in one; a probe's call is bounded
// by its lease.
func ExampleDo() {
	reg, err := health.NewRegistry(breaker.Settings{})
	if err != nil {
		panic(err)
	}
	forecast, err := health.Do(context.Background(), reg, "weather", func(ctx context.Context) (string, error) {
		return "sunny", nil // call the tool with ctx here
	})
	fmt.Println(forecast, err, reg.Stats("weather").Calls)
	// Output: sunny <nil> 1
}

// The tool call of the library guide (docs/library.md): resolve through the
// router, then gate, call and settle in one, answering the model softly when
// every candidate is refused.
func ExampleRouter() {
	softError := func(err error) error { // what the model reads instead of a result
		fmt.Println("to the model:", err)
		return nil
	}
	callTool := func(ctx context.Context, name string) (string, error) { return name + ": 3 results", nil }
	run := func(ctx context.Context) error {
		reg, err := health.NewRegistry(breaker.Settings{FailureThreshold: 3, RecoveryDuration: 30 * time.Second})
		if err != nil {
			return err
		}
		router := health.NewRouter(reg, map[string][]string{"search": {"web_search"}})

		name, err := router.Resolve("search") // pure: the first candidate whose breaker allows a call
		if err != nil {
			return softError(err) // errors.Is(err, breaker.ErrOpen)
		}
		// The gate (it may grant the probe), the call, the verdict: nil is a success,
		// context.Canceled no verdict, anything else a failure. A probe's ctx ends at its lease end.
		result, err := health.Do(ctx, reg, name, func(ctx context.Context) (string, error) {
			return callTool(ctx, name)
		})
		if errors.Is(err, breaker.ErrOpen) {
			return softError(err)
		}
		fmt.Println(result, err, reg.Status(name))
		return nil
	}
	if err := run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: search: 3 results <nil> healthy
}
