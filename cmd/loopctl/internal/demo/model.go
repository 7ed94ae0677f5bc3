package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/loopctl/loopctl-go/llmtest"
)

// The models of the in-process server.
const (
	modelPrimary = "gpt-primary"
	modelBackup1 = "gpt-backup-1"
	modelBackup2 = "gpt-backup-2"
)

// toolRetries is how many more times the scripted model calls a tool that
// failed (not one that was refused) before giving up on it.
const toolRetries = 3

// step is one tool call the scripted model makes for a prompt.
type step struct {
	tool string
	args string // JSON
}

// refusalPrefix starts every refusal text (docs/SEMANTICS.md, section 5).
const refusalPrefix = "tool temporarily unavailable"

// modelScript is the in-process server: every model answers by plans (prompt
// -> tool calls), unless f says the model is failing.
func modelScript(f *faults, plans map[string][]step) llmtest.Script {
	return func(req llmtest.Request) llmtest.Reply {
		switch status := f.model(req.Model); status {
		case 0:
		case http.StatusTooManyRequests:
			return llmtest.Reply{Fault: &llmtest.Fault{
				Status:  status,
				Header:  http.Header{"Retry-After": {"1"}},
				Message: req.Model + ": rate limit reached (scripted burst); retry after 1s",
			}}
		default:
			return llmtest.Reply{Fault: &llmtest.Fault{
				Status:  status,
				Message: req.Model + ": " + strings.ToLower(http.StatusText(status)) + " (scripted outage)",
			}}
		}
		return answer(req.Messages, plans)
	}
}

// answer is what every scripted model says next in a conversation: replaying
// the tool results since the last user message, it calls the next tool of the
// prompt's plan (or the same one again after a failure) or, at the end, answers.
func answer(msgs []llmtest.Message, plans map[string][]step) llmtest.Reply {
	user := -1
	for i, m := range msgs {
		if m.Role == "user" {
			user = i
		}
	}
	if user < 0 {
		return llmtest.Text("Ask me something.")
	}
	plan := plans[msgs[user].Content]
	var (
		next  int // the plan step to run
		tries int // calls of plan[next] so far
		notes []string
	)
	for _, m := range msgs[user+1:] {
		if m.Role != "tool" || next >= len(plan) {
			continue
		}
		tries++
		switch text := m.Content; {
		case strings.HasPrefix(text, refusalPrefix):
			notes = append(notes, describe(plan[next])+": unavailable (circuit breaker open), skipped")
		case !isObject(text):
			if tries <= toolRetries {
				continue // call it again
			}
			notes = append(notes, describe(plan[next])+": failed "+strconv.Itoa(tries)+" times, skipped")
		default:
			sum, sep := summarize(text), ": "
			if strings.HasPrefix(sum, "= ") {
				sep = " "
			}
			notes = append(notes, describe(plan[next])+sep+sum)
		}
		next, tries = next+1, 0
	}
	if next < len(plan) {
		return llmtest.Calls(llmtest.Call(plan[next].tool, plan[next].args))
	}
	if len(notes) == 0 {
		return llmtest.Text("Done.")
	}
	return llmtest.Text(strings.Join(notes, "; ") + ".")
}

func isObject(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

// describe names a step for the answer: `search "x"` or `17 * 23`.
func describe(s step) string {
	var a map[string]string
	_ = json.Unmarshal([]byte(s.args), &a)
	if e, ok := a["expression"]; ok {
		return e
	}
	return s.tool + " " + strconv.Quote(a["query"])
}

// summarize turns a tool's JSON result into a few words.
func summarize(text string) string {
	var r struct {
		Source  string          `json:"source"`
		Results []doc           `json:"results"`
		Result  json.RawMessage `json:"result"`
	}
	if json.Unmarshal([]byte(text), &r) != nil {
		return text
	}
	if len(r.Result) > 0 {
		return "= " + string(r.Result)
	}
	if len(r.Results) == 0 {
		return "nothing found"
	}
	return fmt.Sprintf("%q (from %s)", r.Results[0].Title, r.Source)
}
