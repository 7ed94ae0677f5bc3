package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/durtext"
	"github.com/loopctl/loopctl-go/retry"
)

// ANSI styles.
const (
	reset   = "\033[0m"
	bold    = "\033[1m"
	dim     = "\033[2m"
	red     = "\033[31m"
	green   = "\033[32m"
	yellow  = "\033[33m"
	magenta = "\033[35m"
	cyan    = "\033[36m"
)

func paint(on bool, style, s string) string {
	if !on || s == "" {
		return s
	}
	return style + s + reset
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// view writes the live lines and records what the summary needs. Agent events
// arrive one at a time; the spinner goroutine shares the writer, hence mu.
//
// A breaker transition is delivered while the attempt or call that caused it
// is still being settled, so the view holds it back and prints it right after
// that attempt's or call's own line.
type view struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
	spin  bool
	now   func() time.Time
	start time.Time
	rec   recorder

	inAttempt bool
	retries   []agent.Event // of the attempt in flight
	held      []agent.Event // transitions not printed yet, in order

	status    string    // spinner text
	waitUntil time.Time // spinner countdown
	frame     int
	drawn     bool // the spinner line is on screen
}

func newView(w io.Writer, color, spin bool, now func() time.Time) *view {
	v := &view{w: w, color: color, spin: spin, now: now, start: now()}
	v.rec.init()
	return v
}

func (v *view) elapsed() time.Duration { return v.now().Sub(v.start) }

// line prints one line with the elapsed time. v.mu must be held.
func (v *view) line(format string, args ...any) {
	v.clearSpinner()
	stamp := fmt.Sprintf("%7.2fs", v.elapsed().Seconds())
	fmt.Fprintf(v.w, "%s  %s\n", paint(v.color, dim, stamp), fmt.Sprintf(format, args...))
}

// text prints a line as is. v.mu must be held.
func (v *view) text(s string) {
	v.clearSpinner()
	fmt.Fprintln(v.w, s)
}

func (v *view) header(lines []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, l := range lines {
		if i == 0 {
			l = paint(v.color, bold, l)
		}
		v.text(l)
	}
}

func (v *view) act(n, of int, title string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.text("")
	v.text(paint(v.color, bold+cyan, fmt.Sprintf("[%d/%d] %s", n, of, title)))
}

func (v *view) runStart(n int, prompt string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line("%s  user: %s", paint(v.color, bold, fmt.Sprintf("run %-4d", n)), prompt)
	v.status = fmt.Sprintf("run %d", n)
}

func (v *view) runEnd(answer string, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.flushHeld()
	if err != nil {
		v.line("%s  %s", paint(v.color, red, "run failed"), oneLine(err.Error(), 160))
		return
	}
	v.line("%-8s  %s", "answer", answer)
}

func (v *view) waitLine(d time.Duration, note string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line("%-8s  %v %s", "wait", d, note)
}

// waiting sets the spinner's countdown; d == 0 clears it.
func (v *view) waiting(d time.Duration, label string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d <= 0 {
		v.waitUntil = time.Time{}
		return
	}
	v.waitUntil = v.now().Add(d)
	v.status = label
}

// event handles one agent event (Config.OnEvent).
func (v *view) event(ev agent.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rec.event(ev, v.elapsed())
	switch ev.Kind {
	case agent.EventTurnStarted:
		v.flushHeld()
		v.inAttempt, v.retries = true, nil
		v.status = fmt.Sprintf("turn %d: %s, attempt %d", ev.Turn, ev.Model, ev.Attempt)
	case agent.EventRetry:
		v.retries = append(v.retries, ev)
		v.status = fmt.Sprintf("turn %d: %s, %s, retrying %s", ev.Turn, ev.Model, errText(ev.Err), durtext.Wait(ev.Duration))
	case agent.EventTurnFinished:
		v.turnLine(ev)
		v.inAttempt, v.retries = false, nil
		v.flushHeld()
	case agent.EventToolCall:
		// The transitions the call caused come first, then its result.
		probe := v.probeOf(ev.ResolvedTool)
		v.flushHeld()
		v.toolLine(ev, probe)
	case agent.EventModelTransition:
		v.held = append(v.held, ev)
		if !v.inAttempt {
			v.flushHeld()
		}
	case agent.EventToolTransition:
		v.held = append(v.held, ev)
	}
}

// flushHeld prints the held transitions. v.mu must be held.
func (v *view) flushHeld() {
	for _, ev := range v.held {
		if ev.Kind == agent.EventToolTransition {
			v.line("%s  %s  %s", paint(v.color, bold+magenta, "tool breaker "), ev.Tool, v.toolState(ev.From, ev.To))
			continue
		}
		t := ev.Transition
		to := t.ToModel
		if to == "" {
			to = "none"
		}
		note := ""
		switch {
		case t.From == fallback.Fallback && t.To == fallback.Fallback && t.ToModel == "":
			note = "  chain spent"
		case t.From == fallback.Fallback && t.To == fallback.Fallback:
			note = "  chain advance"
		}
		v.line("%s  %s  (%s -> %s)%s", paint(v.color, bold+magenta, "model breaker"),
			v.modelState(t.From, t.To), t.FromModel, to, note)
	}
	v.held = v.held[:0]
}

func (v *view) modelState(from, to fallback.State) string {
	return v.transition(from.String(), to.String(), to == fallback.Fallback, to == fallback.Primary)
}

func (v *view) toolState(from, to breaker.State) string {
	return v.transition(from.String(), to.String(), to == breaker.Open, to == breaker.Closed)
}

// transition paints a breaker's "from -> to" in bold: red into its failing
// state (bad), green back into its healthy one (good), yellow between.
func (v *view) transition(from, to string, bad, good bool) string {
	style := yellow
	switch {
	case bad:
		style = red
	case good:
		style = green
	}
	return paint(v.color, bold+style, from+" -> "+to)
}

func (v *view) turnLine(ev agent.Event) {
	head := fmt.Sprintf("%-8s  %-13s attempt %d", fmt.Sprintf("turn %d", ev.Turn), ev.Model, ev.Attempt)
	probe := ""
	if ev.Probe {
		probe = "  " + paint(v.color, yellow, "(probe)")
	}
	var waits []string
	for _, r := range v.retries {
		waits = append(waits, r.Duration.Round(time.Millisecond).String())
	}
	requests := ""
	if ev.Requests > 1 {
		requests = fmt.Sprintf(" after %d requests", ev.Requests)
		if len(waits) > 0 {
			requests += " (waited " + strings.Join(waits, ", ") + ")"
		}
	}
	if ev.Err == nil {
		v.line("%s  %s%s%s", head, paint(v.color, green, "ok"), requests, probe)
		return
	}
	escalated := ""
	if esc, ok := errors.AsType[*retry.EscalationError](ev.Err); ok {
		escalated = ", " + paint(v.color, red, "escalated")
		if esc.RetryAfter > 0 {
			escalated += fmt.Sprintf(" (the server asked to wait %v)", esc.RetryAfter)
		}
	}
	v.line("%s  %s%s%s%s", head, paint(v.color, red, "failed: "+errText(ev.Err)), requests, escalated, probe)
}

// toolLine prints one settled tool call; probe says whether the call was its
// breaker's probe (read from the transitions before they were printed).
func (v *view) toolLine(ev agent.Event, probe bool) {
	to := ev.ResolvedTool
	if to == "" {
		to = "(none)"
	}
	route := ev.Tool + " " + argsText(ev.Arguments, 48) + " -> " + to
	note := ""
	switch {
	case ev.FallThrough != "":
		// The model reads only the second call's result.
		note = " " + paint(v.color, yellow, "(backup: "+ev.FallThrough+"'s probe failed, the call fell through)")
	case probe:
		note = " " + paint(v.color, yellow, "(probe)")
	case ev.ResolvedTool != "" && ev.ResolvedTool != ev.Tool:
		note = " " + paint(v.color, yellow, "(backup)")
	}
	head := fmt.Sprintf("%-8s  %-58s", "tool", route)
	switch ev.Outcome {
	case agent.OutcomeOK:
		v.line("%s  %s%s", head, paint(v.color, green, "ok"), note)
	case agent.OutcomeRefused:
		v.line("%s  %s%s: %s", head, paint(v.color, yellow, "refused"), note, ev.Text)
	default:
		v.line("%s  %s%s: %s", head, paint(v.color, red, ev.Outcome.String()), note, oneLine(ev.Text, 160))
	}
}

// probeOf reports whether the held transitions show that the call on tool
// was its breaker's probe.
func (v *view) probeOf(tool string) bool {
	for _, ev := range v.held {
		if ev.Kind == agent.EventToolTransition && ev.Tool == tool && ev.To == breaker.HalfOpen {
			return true
		}
	}
	return false
}

// argsText returns a call's arguments as compact JSON cut to n bytes ("{}"
// when there are none), so that each call can be told from the others.
func argsText(args json.RawMessage, n int) string {
	var b bytes.Buffer
	if len(args) == 0 || json.Compact(&b, args) != nil {
		if len(args) == 0 {
			return "{}"
		}
		b.Reset()
		b.Write(args)
	}
	return oneLine(b.String(), n)
}

// errText describes a model error in a few words.
func errText(err error) string {
	if se, ok := errors.AsType[*retry.StatusError](err); ok {
		return fmt.Sprintf("HTTP %d", se.Code)
	}
	return oneLine(err.Error(), 100)
}

// oneLine returns the first line of s, cut to n bytes.
func oneLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// startSpinner starts the spinner goroutine (if enabled) and returns the
// function that stops it and waits for it.
func (v *view) startSpinner() (stop func()) {
	if !v.spin {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				v.mu.Lock()
				v.frame++
				v.drawSpinner()
				v.mu.Unlock()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		v.mu.Lock()
		v.clearSpinner()
		v.mu.Unlock()
	}
}

// drawSpinner redraws the spinner line. v.mu must be held.
func (v *view) drawSpinner() {
	s := v.status
	if !v.waitUntil.IsZero() {
		left := max(v.waitUntil.Sub(v.now()), 0)
		s = fmt.Sprintf("%s: %.1fs", v.status, left.Seconds())
	}
	fmt.Fprintf(v.w, "\r\033[K%s %s", paint(v.color, cyan, spinFrames[v.frame%len(spinFrames)]), paint(v.color, dim, s))
	v.drawn = true
}

// clearSpinner removes the spinner line, if drawn. v.mu must be held.
func (v *view) clearSpinner() {
	if v.drawn {
		fmt.Fprint(v.w, "\r\033[K")
		v.drawn = false
	}
}
