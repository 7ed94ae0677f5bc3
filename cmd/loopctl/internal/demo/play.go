package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// player plays the story on one Agent.
type player struct {
	ag       *agent.Agent
	f        *faults
	v        *view
	t        Timing
	now      func() time.Time
	wait     func(context.Context, time.Duration) error
	scripted bool
	primary  string

	runs, answered int
	failures       []string // "run 3: <error>"
}

// intro returns the lines that open the output.
func (p *player) intro(base string, primary string, chain []string) []string {
	models := primary
	if len(chain) > 0 {
		models += ", fallback chain " + strings.Join(chain, " -> ")
	}
	where := "a scripted model server in this process (loopback; no network, no API key)"
	if !p.scripted {
		where = base + " (no scripted faults)"
	}
	return []string{
		"loopctl demo: an agent (package agent, provider/openai) on " + where,
		fmt.Sprintf("  models   %s; trip after %d failed turns, %d strikes per backup, cooldown %v, %d probes to recover",
			models, tripThreshold, strikes, p.t.ModelCooldown, probesNeeded),
		fmt.Sprintf("  tools    %s (backup %s), %s; trip after %d failures, cooldown %v",
			toolSearch, toolSearchBack, toolCalculator, toolTrip, p.t.ToolCooldown),
		fmt.Sprintf("  retries  %d retries per request, backoff %v..%v; a 429 waits Retry-After (at most %v), the %s escalates",
			requestRetries, p.t.RetryBase, p.t.RetryMax, p.t.RateLimitWait, ordinal(rateLimitRetries+1)),
	}
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

// play runs every act; it stops early only when ctx ends.
func (p *player) play(ctx context.Context) error {
	first := true
	for i, a := range story {
		if p.scripted {
			if !first {
				if err := p.pause(ctx, p.t.Beat, ""); err != nil {
					return err
				}
			}
			p.v.act(i+1, len(story), a.title)
			if a.faults != nil {
				a.faults(p.f)
			}
			if a.cooldown {
				if err := p.pause(ctx, p.cooldownLeft(), p.cooldownNote()); err != nil {
					return err
				}
			}
		}
		for j, pr := range a.runs {
			if p.scripted && j > 0 {
				if err := p.pause(ctx, p.t.Beat, ""); err != nil {
					return err
				}
			}
			first = false
			if err := p.run(ctx, pr.text); err != nil {
				return err
			}
		}
	}
	return nil
}

// run runs one prompt; it returns an error only when ctx ended.
func (p *player) run(ctx context.Context, text string) error {
	p.runs++
	p.v.runStart(p.runs, text)
	res, err := p.ag.Run(ctx, []agent.Message{
		{Role: agent.RoleSystem, Content: system},
		{Role: agent.RoleUser, Content: text},
	})
	p.v.runEnd(res.Answer, err)
	if err == nil {
		p.answered++
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	p.failures = append(p.failures, fmt.Sprintf("run %d: %v", p.runs, err))
	return nil
}

// pause waits d with a countdown on the spinner; a note prints a line too.
func (p *player) pause(ctx context.Context, d time.Duration, note string) error {
	label := "next run in"
	if note != "" {
		p.v.waitLine(d, note)
		label = "cooldowns end in"
	}
	p.v.waiting(d, label)
	defer p.v.waiting(0, "")
	return p.wait(ctx, d)
}

// cooldownNote says which cooldowns the story waits for: the model breaker's
// while it is tripped, and those of the open tool breakers.
func (p *player) cooldownNote() string {
	var parts []string
	if s := p.ag.Models().Snapshot(); s.State == fallback.Fallback {
		parts = append(parts, fmt.Sprintf("model breaker: %v after its trip", p.t.ModelCooldown))
	}
	var open []string
	for _, th := range p.ag.Tools().Summary() {
		if th.State == breaker.Open {
			open = append(open, th.Tool)
		}
	}
	if len(open) > 0 {
		parts = append(parts, fmt.Sprintf("%s: %v after the last failure", strings.Join(open, ", "), p.t.ToolCooldown))
	}
	return "for the cooldowns (" + strings.Join(parts, "; ") + ")"
}

// cooldownLeft is how long until the model breaker would probe the primary and
// every open tool breaker would grant a probe, rounded up to 100ms.
func (p *player) cooldownLeft() time.Duration {
	var d time.Duration
	if s := p.ag.Models().Snapshot(); s.State == fallback.Fallback && !s.TrippedAt.IsZero() {
		d = s.TrippedAt.Add(p.t.ModelCooldown).Sub(p.now())
	}
	for _, th := range p.ag.Tools().Summary() {
		if th.State == breaker.Open {
			d = max(d, p.ag.Tools().Breaker(th.Tool).RetryIn())
		}
	}
	const step = 100 * time.Millisecond
	if rem := d % step; rem > 0 {
		d += step - rem
	}
	return max(d, 0)
}
