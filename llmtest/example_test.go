package llmtest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

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

// An Anthropic upstream whose stream says overloaded_error before any
// content (as Anthropic does under load, after a 200), and a Responses API
// stream that breaks after its first content.
func Example_faults() {
	an := llmtest.NewAnthropic(llmtest.Always(llmtest.Streamed(llmtest.StreamOverloaded, 2, "hi")))
	defer an.Close()
	oa := llmtest.NewOpenAI(llmtest.Always(llmtest.Streamed(llmtest.StreamCut, 5, "Hel", "lo")))
	defer oa.Close()
	for _, c := range []struct{ url, body string }{
		{an.URL + "/v1/messages", `{"model":"claude","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{oa.URL + "/v1/responses", `{"model":"gpt","stream":true,"input":"hi"}`},
	} {
		res, err := http.Post(c.url, "application/json", strings.NewReader(c.body))
		if err != nil {
			panic(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		var names []string
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				names = append(names, name)
			}
		}
		fmt.Println(res.StatusCode, names, err != nil)
	}
	// Output:
	// 200 [message_start content_block_start error] false
	// 200 [response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta] true
}

// Deployments of one model for a pool are each their own server: here one
// whose rate limit its headers announce (2 requests per minute) before it
// answers 429, and one whose first content takes 2 s (llmtest.Delayed).
func ExampleLimits() {
	answer := llmtest.Always(llmtest.Text("hello"))
	limited := llmtest.NewOpenAI((&llmtest.Limits{Requests: 2}).Script(answer))
	defer limited.Close()
	slow := llmtest.NewAnthropic(llmtest.Delayed(2*time.Second, answer))
	defer slow.Close()

	body := `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`
	for range 3 {
		res, err := http.Post(limited.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Println(res.StatusCode, "remaining", res.Header.Get("x-ratelimit-remaining-requests"))
	}
	// Output:
	// 200 remaining 1
	// 200 remaining 0
	// 429 remaining 0
}
