package llmtest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/loopctl/loopctl-go/llmtest"
)

func Example() {
	srv := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"primary": llmtest.Always(llmtest.RateLimit("30")),
		"backup": func(r llmtest.Request) llmtest.Reply {
			return llmtest.Text("echo: " + r.Last().Content)
		},
	}))
	defer srv.Close()

	for _, model := range []string{"primary", "backup"} {
		res, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(
			`{"model":"`+model+`","messages":[{"role":"user","content":"ping"}]}`))
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fmt.Println(model, res.StatusCode, res.Header.Get("Retry-After"), strings.Contains(string(body), "echo: ping"))
	}
	fmt.Println(srv.Models(), srv.Count("backup"))
	// Output:
	// primary 429 30 false
	// backup 200  true
	// [primary backup] 1
}
