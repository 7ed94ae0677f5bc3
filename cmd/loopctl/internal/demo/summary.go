package demo

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
)

// Summary is what a demo run did.
type Summary struct {
	Elapsed  time.Duration // on the demo's clock
	Runs     int           // agent runs started
	Answered int           // runs that ended with an answer

	// ModelState is the model breaker's final state; Trips counts its trips
	// (Primary -> Fallback and Recovering -> Fallback).
	ModelState fallback.State
	Trips      int
	Models     []ModelRow // the primary, then the chain, in order
	Tools      []ToolRow  // in the order the agent offers them

	Transitions []Transition // every breaker transition, in order
	// Failures lists the runs that ended with a hard error.
	Failures []string
	// Missing lists what the scripted story should have shown and did not:
	// scripted transitions (in order), the refusal, the backup routing and
	// runs that failed. Always empty with BaseURL.
	Missing []string
}

// ModelRow is one model's line of the summary.
type ModelRow struct {
	Model    string
	Role     string // "primary", "backup 1", ...
	Served   int    // attempts (turns) it answered
	Failed   int    // attempts that failed (after the retry ladder)
	Requests int    // HTTP requests sent to it
	Probes   int    // attempts that were the model breaker's probe
	Now      string // "active", "standby" or "spent" (its strikes are used up)
}

// ToolRow is one tool's line of the summary.
type ToolRow struct {
	Tool     string
	Calls    uint64 // calls that ran (refusals not included)
	OK       uint64
	Failures uint64
	Refusals int // calls asking for this tool that were refused softly
	Backup   int // calls asking for this tool that the router sent to a backup
	State    breaker.State
	Status   health.Status
}

// Transition is one breaker transition.
type Transition struct {
	Elapsed            time.Duration // when it was reported, on the demo's clock
	Breaker            string        // "model", or the tool's name
	From, To           string        // state names
	FromModel, ToModel string        // the model breaker's routed models ("" for tools)
}

// String returns "model breaker  primary -> fallback  (gpt-primary -> gpt-backup-1)"
// or "tool breaker  search  closed -> open".
func (t Transition) String() string {
	if t.Breaker == "model" {
		to := t.ToModel
		if to == "" {
			to = "none"
		}
		return fmt.Sprintf("model breaker  %s -> %s  (%s -> %s)", t.From, t.To, t.FromModel, to)
	}
	return fmt.Sprintf("tool breaker  %s  %s -> %s", t.Breaker, t.From, t.To)
}

// same reports whether t and u describe the same transition (at any time).
func (t Transition) same(u Transition) bool {
	t.Elapsed, u.Elapsed = 0, 0
	return t == u
}

// recorder counts what the summary needs from the agent's events.
type recorder struct {
	models      map[string]*ModelRow
	refusals    map[string]int
	backup      map[string]int // requested tool -> calls routed to a backup
	backupOK    map[string]int // ... that succeeded
	fellOK      map[string]int // requested tool -> calls that fell through from its failed probe and succeeded
	transitions []Transition
}

func (r *recorder) init() {
	r.models, r.refusals = map[string]*ModelRow{}, map[string]int{}
	r.backup, r.backupOK, r.fellOK = map[string]int{}, map[string]int{}, map[string]int{}
}

func (r *recorder) model(name string) *ModelRow {
	m := r.models[name]
	if m == nil {
		m = &ModelRow{Model: name}
		r.models[name] = m
	}
	return m
}

func (r *recorder) event(ev agent.Event, at time.Duration) {
	switch ev.Kind {
	case agent.EventTurnFinished:
		m := r.model(ev.Model)
		m.Requests += ev.Requests
		if ev.Err == nil {
			m.Served++
		} else {
			m.Failed++
		}
		if ev.Probe {
			m.Probes++
		}
	case agent.EventToolCall:
		if ev.Outcome == agent.OutcomeRefused {
			r.refusals[ev.Tool]++
		}
		if ev.ResolvedTool != "" && ev.ResolvedTool != ev.Tool {
			r.backup[ev.Tool]++
			if ev.Outcome == agent.OutcomeOK {
				r.backupOK[ev.Tool]++
				if ev.FallThrough == ev.Tool {
					r.fellOK[ev.Tool]++
				}
			}
		}
	case agent.EventModelTransition:
		t := ev.Transition
		r.transitions = append(r.transitions, Transition{Elapsed: at, Breaker: "model",
			From: t.From.String(), To: t.To.String(), FromModel: t.FromModel, ToModel: t.ToModel})
	case agent.EventToolTransition:
		r.transitions = append(r.transitions, Transition{Elapsed: at, Breaker: ev.Tool,
			From: ev.From.String(), To: ev.To.String()})
	}
}

// summary builds the Summary from the recorder and the agent's breakers.
func (p *player) summary() *Summary {
	p.v.mu.Lock()
	defer p.v.mu.Unlock()
	r := &p.v.rec
	s := &Summary{Elapsed: p.v.elapsed(), Runs: p.runs, Answered: p.answered,
		Transitions: append([]Transition(nil), r.transitions...), Failures: p.failures}

	ms := p.ag.Models().Snapshot()
	s.ModelState = ms.State
	active := p.ag.Models().ActiveModel()
	primary := r.model(p.primary)
	primary.Role = "primary"
	rows := []*ModelRow{primary}
	for i, e := range ms.Chain {
		m := r.model(e.Model)
		m.Role = fmt.Sprintf("backup %d", i+1)
		if e.Failed {
			m.Now = "spent"
		}
		rows = append(rows, m)
	}
	for _, m := range rows {
		switch {
		case m.Model == active:
			m.Now = "active"
		case m.Now == "":
			m.Now = "standby"
		}
		s.Models = append(s.Models, *m)
	}
	for _, t := range s.Transitions {
		if t.Breaker == "model" && t.To == fallback.Fallback.String() && t.From != t.To {
			s.Trips++
		}
	}

	reg := p.ag.Tools()
	for _, spec := range p.ag.ToolSpecs() {
		st := reg.Stats(spec.Name)
		s.Tools = append(s.Tools, ToolRow{Tool: spec.Name, Calls: st.Calls, OK: st.Successes, Failures: st.Failures,
			Refusals: r.refusals[spec.Name], Backup: r.backup[spec.Name],
			State: reg.Breaker(spec.Name).State(), Status: reg.Status(spec.Name)})
	}

	if p.scripted {
		s.Missing = missing(s, expected, r.backupOK[toolSearch], r.fellOK[toolSearch])
	}
	return s
}

// missing lists what the scripted story should have shown and s lacks.
func missing(s *Summary, want []Transition, backupOK, fellOK int) []string {
	var out []string
	i := 0 // want[:i] were found in order
	for _, t := range s.Transitions {
		if i < len(want) && t.same(want[i]) {
			i++
		}
	}
	for _, w := range want[i:] {
		out = append(out, w.String())
	}
	for _, t := range s.Tools {
		if t.Tool == toolSearch && t.Refusals == 0 {
			out = append(out, "a refused call of search")
		}
		if t.Tool == toolSearch && backupOK == 0 {
			out = append(out, "a call of search served by search_backup")
		}
		if t.Tool == toolSearch && fellOK == 0 {
			out = append(out, "a failed probe of search that fell through to search_backup")
		}
	}
	if !probedWhileBackupHealthy(s.Transitions) {
		out = append(out, "search probed and closed while search_backup was closed")
	}
	for _, f := range s.Failures {
		out = append(out, "an answer to "+f)
	}
	return out
}

// probedWhileBackupHealthy reports whether search went from half-open to closed
// (its probe succeeded) at a time when search_backup was closed: the router sent
// search its probe although the backup could have served the call.
func probedWhileBackupHealthy(ts []Transition) bool {
	backup := breaker.Closed.String()
	for _, t := range ts {
		switch {
		case t.Breaker == toolSearchBack:
			backup = t.To
		case t.Breaker == toolSearch && t.From == breaker.HalfOpen.String() && t.To == breaker.Closed.String() &&
			backup == breaker.Closed.String():
			return true
		}
	}
	return false
}

// Write prints the summary: a table of models, a table of tools and the list
// of transitions, then the failed runs and what is missing, if any; with color,
// headers are bold (ANSI).
func (s *Summary) Write(w io.Writer, color bool) {
	h := func(t string) string { return paint(color, bold, t) }
	fmt.Fprintf(w, "\n%s (%d runs, %d answered, %.1fs)\n", h("Summary"), s.Runs, s.Answered, s.Elapsed.Seconds())

	fmt.Fprintf(w, "\n%s  model breaker: %s, tripped %d time%s\n", h("Models"), s.ModelState, s.Trips, plural(s.Trips))
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  MODEL\tROLE\tTURNS SERVED\tTURNS FAILED\tREQUESTS\tPROBES\tNOW")
	for _, m := range s.Models {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%s\n", m.Model, m.Role, m.Served, m.Failed, m.Requests, m.Probes, m.Now)
	}
	tw.Flush()

	fmt.Fprintf(w, "\n%s\n", h("Tools"))
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  TOOL\tCALLS\tOK\tFAILURES\tREFUSALS\tSENT TO BACKUP\tBREAKER\tHEALTH")
	for _, t := range s.Tools {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", t.Tool, t.Calls, t.OK, t.Failures, t.Refusals, t.Backup, t.State, t.Status)
	}
	tw.Flush()

	fmt.Fprintf(w, "\n%s\n", h("Transitions"))
	if len(s.Transitions) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, t := range s.Transitions {
		fmt.Fprintf(w, "  %7.2fs  %s\n", t.Elapsed.Seconds(), t)
	}
	for _, f := range s.Failures {
		fmt.Fprintf(w, "\n%s %s\n", paint(color, red, "failed:"), f)
	}
	if len(s.Missing) > 0 {
		fmt.Fprintf(w, "\n%s\n", paint(color, bold+red, "The story did not play out as scripted; missing:"))
		for _, m := range s.Missing {
			fmt.Fprintf(w, "  - %s\n", m)
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
