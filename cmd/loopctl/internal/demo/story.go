package demo

import (
	"net/http"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// prompt is one run: what the user asks and the tool calls the scripted
// models make for it.
type prompt struct {
	text string
	plan []step
}

// act is one part of the story.
type act struct {
	title    string        // what happens (scripted mode only)
	faults   func(*faults) // what breaks or is fixed, before the runs; nil: nothing changes
	cooldown bool          // wait out the breakers' cooldowns before the runs
	runs     []prompt
}

func searchStep(q string) step { return step{toolSearch, `{"query":"` + q + `"}`} }
func calcStep(e string) step   { return step{toolCalculator, `{"expression":"` + e + `"}`} }

const (
	errSearch     = "search: the index is not answering (upstream HTTP 503)"
	errSearchBack = "search_backup: the mirror is overloaded (upstream HTTP 503)"
)

// story is the scripted story (see the package doc).
var story = []act{
	{
		title: "Everything is healthy: gpt-primary serves every turn, the tools answer",
		runs: []prompt{
			{`Use the search tool to look up "circuit breaker", then "exponential backoff", then use the calculator for 17 * 23. Answer in one sentence.`,
				[]step{searchStep("circuit breaker"), searchStep("exponential backoff"), calcStep("17 * 23")}},
			{`Search for "rate limits" and compute 1200 / 16 with the calculator. Answer in one sentence.`,
				[]step{searchStep("rate limits"), calcStep("1200 / 16")}},
		},
	},
	{
		title: "gpt-primary goes down (HTTP 500) and gpt-backup-1 is rate limited (HTTP 429, Retry-After: 1)",
		faults: func(f *faults) {
			f.setModel(modelPrimary, http.StatusInternalServerError)
			f.setModel(modelBackup1, http.StatusTooManyRequests)
		},
		runs: []prompt{
			{`Search for "fallback chain" and compute (3 + 4) * 6 with the calculator. Answer in one sentence.`,
				[]step{searchStep("fallback chain"), calcStep("(3 + 4) * 6")}},
		},
	},
	{
		title:  "The search index goes down: search fails; its mirror search_backup still works",
		faults: func(f *faults) { f.setTool(toolSearch, errSearch) },
		runs: []prompt{
			{`Search for "health score" and compute 2 * (5 + 7) with the calculator. Answer in one sentence.`,
				[]step{searchStep("health score"), calcStep("2 * (5 + 7)")}},
		},
	},
	{
		title: "The models are fixed, the index is not: after the cooldowns gpt-primary is probed and recovers; " +
			"search is probed although search_backup is healthy, the probe fails, and the call falls through " +
			"to search_backup (the model reads only the backup's answer)",
		faults: func(f *faults) {
			f.setModel(modelPrimary, 0)
			f.setModel(modelBackup1, 0)
		},
		cooldown: true,
		runs: []prompt{
			{`Search for "fallback chain" and compute 365 * 24 with the calculator. Answer in one sentence.`,
				[]step{searchStep("fallback chain"), calcStep("365 * 24")}},
		},
	},
	{
		title:    "The index is fixed: after its cooldown search is probed and closes while search_backup is still healthy",
		faults:   func(f *faults) { f.setTool(toolSearch, "") },
		cooldown: true,
		runs: []prompt{
			{`Search for "exponential backoff" and compute 60 * 60 with the calculator. Answer in one sentence.`,
				[]step{searchStep("exponential backoff"), calcStep("60 * 60")}},
		},
	},
	{
		title: "The index and its mirror both fail: both breakers trip, the next call is refused softly, " +
			"and the model answers without search",
		faults: func(f *faults) {
			f.setTool(toolSearch, errSearch)
			f.setTool(toolSearchBack, errSearchBack)
		},
		runs: []prompt{
			{`Search for "circuit breaker cooldown", then "rate limits", and compute 7 * 6 with the calculator. Answer in one sentence.`,
				[]step{searchStep("circuit breaker cooldown"), searchStep("rate limits"), calcStep("7 * 6")}},
		},
	},
	{
		title: "Everything is fixed: after the cooldowns search is probed and closes " +
			"(search_backup stays open until a call needs it: the router prefers search)",
		faults: func(f *faults) {
			f.setTool(toolSearch, "")
			f.setTool(toolSearchBack, "")
		},
		cooldown: true,
		runs: []prompt{
			{`Search for "circuit breaker" and compute 1200 / 16 with the calculator. Answer in one sentence.`,
				[]step{searchStep("circuit breaker"), calcStep("1200 / 16")}},
		},
	},
}

// plans maps every prompt of the story to its plan, for the scripted models.
func plans() map[string][]step {
	m := map[string][]step{}
	for _, a := range story {
		for _, p := range a.runs {
			m[p.text] = p.plan
		}
	}
	return m
}

// expected lists the transitions the scripted story must produce.
var expected = []Transition{
	{Breaker: "model", From: fallback.Primary.String(), To: fallback.Fallback.String(), FromModel: modelPrimary, ToModel: modelBackup1},
	{Breaker: "model", From: fallback.Fallback.String(), To: fallback.Fallback.String(), FromModel: modelBackup1, ToModel: modelBackup2},
	{Breaker: toolSearch, From: breaker.Closed.String(), To: breaker.Open.String()},
	// The models are fixed, search is not: its probe fails.
	{Breaker: "model", From: fallback.Fallback.String(), To: fallback.Recovering.String(), FromModel: modelBackup2, ToModel: modelPrimary},
	{Breaker: toolSearch, From: breaker.Open.String(), To: breaker.HalfOpen.String()},
	{Breaker: toolSearch, From: breaker.HalfOpen.String(), To: breaker.Open.String()},
	{Breaker: "model", From: fallback.Recovering.String(), To: fallback.Primary.String(), FromModel: modelPrimary, ToModel: modelPrimary},
	// The index is fixed: search's probe closes it, search_backup still healthy.
	{Breaker: toolSearch, From: breaker.Open.String(), To: breaker.HalfOpen.String()},
	{Breaker: toolSearch, From: breaker.HalfOpen.String(), To: breaker.Closed.String()},
	// Both fail.
	{Breaker: toolSearch, From: breaker.Closed.String(), To: breaker.Open.String()},
	{Breaker: toolSearchBack, From: breaker.Closed.String(), To: breaker.Open.String()},
	// Everything is fixed.
	{Breaker: toolSearch, From: breaker.Open.String(), To: breaker.HalfOpen.String()},
	{Breaker: toolSearch, From: breaker.HalfOpen.String(), To: breaker.Closed.String()},
}
