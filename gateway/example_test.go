package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// A gateway mounted in a Go program, in front of an upstream whose primary
// model is down: the request is served by the chain.
func Example() {
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"big":   llmtest.Always(llmtest.Error(401)),
		"small": llmtest.Always(llmtest.Text("hello from small")),
	}))
	defer up.Close()

	cfg, err := gateway.ParseConfig([]byte(`
upstreams:
  - name: up
    base_url: ` + up.BaseURL() + `
models:
  - name: smart
    primary: up/big
    chain: [up/small]
`))
	if err != nil {
		panic(err)
	}
	gw, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()

	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("X-Loopctl-Model"), res.Header.Get("X-Loopctl-Attempts"))
	fmt.Println(strings.Contains(string(body), "hello from small"), gw.LocalBreakers()[0].Manager.State()) // smart, the one model
	// Output:
	// 200 up/small 4
	// true fallback
}

func ExampleParseConfig() {
	_, err := gateway.ParseConfig([]byte(`
upstreams: [{name: anthropic, base_url: "https://api.anthropic.com/v1"}]
models:
  - {name: a, primary: anthropic/claude}
  - {name: b, primary: anthropic/claude, chain: [anthropc/haiku], colour: red}
`))
	fmt.Println(err)
	// Output:
	// models[1].colour: unknown key (line 5)
	// models[1].chain[0]: unknown upstream "anthropc"
}
