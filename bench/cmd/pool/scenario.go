package main

import (
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/faults"
	"github.com/loopctl/loopctl-go/llmtest"
)

// sickMember is the member that is sick in every run: member 3 (m3).
const sickMember = 2

// The scripted figures of the runs (issue 38, "Prove it").
const (
	slowFirst   = 2 * time.Second // slow: first content after this
	streamTime  = 4 * time.Second // hang-4s: every member's streams take this to deliver
	sickLimit   = 3               // rate limit: m3's requests per second while sick
	healthLimit = 100             // rate limit: every member's requests per second otherwise
)

// fault is how the sick member answers while it is sick.
type fault int

const (
	none      fault = iota
	down            // HTTP 500
	brownout        // 3 in 10 fail with 500, never two in a row
	slow            // first content after slowFirst
	rateLimit       // sickLimit requests per second, announced by headers
	hang            // never answers (until the caller gives up)
)

// scenario is one run: the wire, how m3 is sick, what loopctl's model adds,
// and the goals that apply to it.
type scenario struct {
	name, label string
	w           wire
	fault       fault
	hedge       bool // the model gets hedge_after
	slowStreams bool // every member's streams take streamTime to deliver
	limits      bool // every member announces its rate limit on every answer
	goals       []goal
}

var allScenarios = []scenario{
	{name: "down", label: "m3 down (500)", fault: down, goals: []goal{sickAtMost(8), homeStays, homeReturns}},
	{name: "brownout", label: "m3 brownout (3 in 10 fail, never 2 in a row)", fault: brownout, goals: []goal{sickShareAtMost(0.05)}},
	{name: "slow", label: "m3 slow (first content after 2 s), hedge_after 500ms", fault: slow, hedge: true,
		goals: []goal{sickShareAtMost(0.05), p99AtMost(700 * time.Millisecond)}},
	{name: "ratelimit", label: "m3 rate limit 3 req/s announced (x-ratelimit-*)", fault: rateLimit, limits: true, goals: []goal{m3Throttled(2)}},
	{name: "ratelimit-messages", label: "m3 rate limit 3 req/s announced (anthropic-ratelimit-*), Messages wire", w: messages,
		fault: rateLimit, limits: true, goals: []goal{m3Throttled(2)}},
	{name: "hang", label: "m3 hangs, hedge_after 500ms", fault: hang, hedge: true, goals: []goal{p99AtMost(700 * time.Millisecond), sickAtMost(8)}},
	{name: "hang-4s", label: "m3 hangs, no hedging, every member's streams take 4 s", fault: hang, slowStreams: true, goals: []goal{sickAtMost(8)}},
	{name: "healthy", label: "all healthy", fault: none, goals: []goal{sessionOnOne, topIsHome, shareOfHomes}},
}

// script is how member m answers in the scenario: the healthy answer
// names the member ("pong @m1@") and, while m is sick, the scenario's
// fault.
func (sc scenario) script(m *member) llmtest.Script {
	base := func(r llmtest.Request) llmtest.Reply {
		rep := llmtest.Chunked("pong ", "@"+m.name+"@")
		rep.Usage = llmtest.Usage{InputTokens: 5, OutputTokens: 2}
		if sc.slowStreams && r.Stream {
			rep.StreamFault = &llmtest.StreamFault{At: firstContentEvent(m.w) + 1, Kind: llmtest.StreamPause, Resume: after(streamTime)}
		}
		return rep
	}
	healthy, sick := llmtest.Script(base), llmtest.Script(base)
	if sc.limits {
		healthy = (&llmtest.Limits{Requests: healthLimit, Window: time.Second}).Script(base)
		sick = (&llmtest.Limits{Requests: sickLimit, Window: time.Second}).Script(base)
	}
	return func(r llmtest.Request) llmtest.Reply {
		ill, nth := m.sick()
		if !ill {
			return healthy(r)
		}
		switch sc.fault {
		case down:
			return llmtest.Error(500)
		case brownout:
			if faults.BrownoutFails(nth) {
				return llmtest.Error(500)
			}
		case slow:
			rep := sick(r)
			rep.Delay = slowFirst
			return rep
		case hang:
			return llmtest.Hang()
		}
		return sick(r)
	}
}

// firstContentEvent is the index of a stream's first content event (the
// "pong " chunk): chat after the role chunk; Messages after
// message_start, content_block_start and ping (llmtest.StreamFault).
func firstContentEvent(w wire) int {
	if w == messages {
		return 3
	}
	return 1
}

// after returns a channel closed d from now.
func after(d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	time.AfterFunc(d, func() { close(c) })
	return c
}

func scenarioNames() string {
	var n []string
	for _, s := range allScenarios {
		n = append(n, s.name)
	}
	return strings.Join(n, ", ")
}
