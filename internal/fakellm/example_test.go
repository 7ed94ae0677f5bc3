package fakellm_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/loopctl/loopctl-go/internal/fakellm"
)

func Example() {
	srv := fakellm.NewOpenAI(fakellm.ByModel(map[string]fakellm.Script{
		"primary": fakellm.Always(fakellm.RateLimit("30")),
		"backup": func(r fakellm.Request) fakellm.Reply {
			return fakellm.Text("echo: " + r.Last().Content)
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
