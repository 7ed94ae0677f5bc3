package gateway_test

import (
	"fmt"

	"github.com/loopctl/loopctl-go/gateway"
)

// A pool no model names is valid, and a warning: `loopctl serve --check`
// passes and prints it; a bad pool is a problem by key path.
func ExampleConfig_Warnings() {
	cfg, err := gateway.ParseConfig([]byte(`
upstreams:
  - {name: a, base_url: 'http://127.0.0.1:1/v1'}
  - {name: b, base_url: 'http://127.0.0.1:2/v1'}
pools:
  - {name: sonnet, members: [a/m, {target: b/m, weight: 2}]}
  - {name: spare, members: [a/n, b/n]}
models:
  - {name: claude, primary: pool/sonnet}
`))
	fmt.Println(err)
	for _, w := range cfg.Warnings() {
		fmt.Println("warning:", w)
	}
	_, err = gateway.ParseConfig([]byte(`
upstreams: [{name: a, base_url: 'http://127.0.0.1:1/v1'}]
pools: [{name: sonnet, members: [a/m], breaker: {max_fail_count: 2}}]
models: [{name: claude, primary: pool/snnet}]
`))
	fmt.Println(err)
	// Output:
	// <nil>
	// warning: pools[1]: pool "spare" is named by no model: its members take no traffic
	// pools[0].breaker.max_fail_count: not allowed under a pool's breaker: a member closes on one fast probe success and has no chain (max_fail_count is a model breaker's) (line 3)
	// pools[0].members: a pool needs at least 2 members (got 1): a single deployment is a chain entry (upstream/model)
	// models[0].primary: unknown pool "snnet" (pools: sonnet)
}
