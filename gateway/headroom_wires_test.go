package gateway

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// headerTap is an upstream transport that keeps the headers of every
// answer the gateway receives, as it receives them.
type headerTap struct {
	rt  http.RoundTripper
	mu  sync.Mutex
	got []http.Header
}

func (t *headerTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		t.mu.Lock()
		t.got = append(t.got, resp.Header.Clone())
		t.mu.Unlock()
	}
	return resp, err
}

func (t *headerTap) headers() []http.Header {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]http.Header(nil), t.got...)
}

// GATEWAY §11.3: the rate-limit headers of every upstream kind's answers,
// successes and a 429, streamed and whole, survive that kind's transport
// (Bedrock's SigV4 and eventstream, Vertex's OAuth, Azure's api-key) and
// read as headroom: each kind's fake of the gateway tests behind
// llmtest.Limits, three requests per window.
func TestHeadroomOfEveryUpstreamKind(t *testing.T) {
	for _, tc := range []struct {
		kind      string
		anthropic bool // the Messages wire's figures, else OpenAI's
		serve     func(t *testing.T, s llmtest.Script) Upstream
	}{
		{"openai", false, func(t *testing.T, s llmtest.Script) Upstream {
			up := llmtest.NewOpenAI(s)
			t.Cleanup(up.Close)
			return Upstream{BaseURL: up.BaseURL(), APIKey: "sk-openai"}
		}},
		{"anthropic", true, func(t *testing.T, s llmtest.Script) Upstream {
			up := llmtest.NewAnthropic(s)
			t.Cleanup(up.Close)
			return Upstream{API: APIAnthropic, BaseURL: up.BaseURL(), APIKey: "sk-an"}
		}},
		{"bedrock", true, func(t *testing.T, s llmtest.Script) Upstream {
			useFakeAWS(t)
			return Upstream{API: APIBedrock, Region: "us-east-1", BaseURL: newBedrockFake(t, "us-east-1", s).URL}
		}},
		{"vertex", true, func(t *testing.T, s llmtest.Script) Upstream {
			tokens := newTokenServer(t)
			useServiceAccount(t, tokens)
			return Upstream{API: APIVertex, Region: "us-east5", Project: "loopctl-test", BaseURL: newVertexFake(t, tokens, "loopctl-test", "us-east5", s).URL}
		}},
		{"azure", false, func(t *testing.T, s llmtest.Script) Upstream {
			return Upstream{BaseURL: newAzureFake(t, "az-secret", s).base(), APIKey: "az-secret", Auth: Auth{Type: AuthAPIKey}}
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			limits := &llmtest.Limits{Requests: 3, InputTokens: 100000, OutputTokens: 100000, Window: time.Minute}
			up := tc.serve(t, limits.Script(weather))
			up.Name = tc.kind
			tap := &headerTap{rt: http.DefaultTransport.(*http.Transport).Clone()}
			srv := cloudGateway(t, Config{Upstreams: []Upstream{up}, Models: []Model{{Name: "m", Primary: tc.kind + "/claude-sonnet-4-5"}}}, Options{Transport: tap})
			path, body := "/v1/chat/completions", chatBody
			if tc.anthropic {
				path, body = "/v1/messages", messagesBody
			}
			start := time.Now()
			statuses := []int{200, 200, 200, 429}
			for i, want := range statuses {
				if a := postTo(t, srv, path, body("m", i%2 == 1)); a.status != want {
					t.Fatalf("request %d: %d %s, want %d", i+1, a.status, a.body, want)
				}
			}
			got := tap.headers()
			if len(got) < len(statuses) { // the 429 may be retried: each answer is read
				t.Fatalf("the gateway received %d answers, want at least %d", len(got), len(statuses))
			}
			for i, h := range got {
				hr := headroomOf(h, time.Now())
				tokens := hr.Tokens
				if tc.anthropic {
					tokens = hr.InputTokens
					if !inWindow(hr.OutputTokens.Reset, start) || hr.Tokens.Reset != (time.Time{}) {
						t.Errorf("answer %d: output tokens %+v, tokens %+v: want the output figure and no combined one (%v)", i+1, hr.OutputTokens, hr.Tokens, h)
					}
				} else if hr.InputTokens.Reset != (time.Time{}) || hr.OutputTokens.Reset != (time.Time{}) {
					t.Errorf("answer %d: %+v: an OpenAI answer has no input or output figure", i+1, hr)
				}
				if left := int64(max(2-i, 0)); hr.Requests.Remaining != left || !inWindow(hr.Requests.Reset, start) {
					t.Errorf("answer %d: requests %+v, want %d left, reset within the window (%v)", i+1, hr.Requests, left, h)
				}
				if tokens.Remaining <= 0 || tokens.Remaining > limits.InputTokens || !inWindow(tokens.Reset, start) {
					t.Errorf("answer %d: input tokens %+v (%v)", i+1, tokens, h)
				}
			}
		})
	}
}

// inWindow reports whether reset is within the minute's window opened at
// start (the Messages wire's reset is rounded up to the second).
func inWindow(reset, start time.Time) bool {
	return reset.After(start) && !reset.After(start.Add(time.Minute+time.Second))
}
