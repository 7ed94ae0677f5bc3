package outage

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Chart geometry, in SVG user units.
const (
	svgWidth    = 960.0
	svgLeft     = 64.0 // left margin: y-axis labels
	svgRight    = 24.0
	svgTop      = 98.0 // title and legend
	panelHeight = 264.0
	bandTop     = 26.0 // offsets inside a panel
	bandHeight  = 14.0
	probeMid    = 50.0 // the probe lane's centre line
	plotTop     = 62.0
	plotHeight  = 160.0
)

// svgStyle styles the chart by CSS class: series, breaker states, probes and
// shading. Every bar, band segment, probe mark and shaded window carries one of
// them; tests look them up. Each meaning has its own colour (Paul Tol's vibrant
// scheme, which stays distinct for colour-blind readers) and no colour has two
// meanings: the outage is sand, the dead service red, the open breaker magenta.
const svgStyle = `
.healthy{fill:#0077bb}.dead{fill:#cc3311}.refused{fill:#bbbbbb}
.outage{fill:#eecc66;fill-opacity:.35}
.closed{fill:#009988}.open{fill:#ee3377}.half-open{fill:#ee7733}
.probe{stroke:#000000;stroke-width:1.5;fill:#000000}.probe-failed{fill:#ffffff}
.axis{stroke:#555;stroke-width:1}.grid{stroke:#ddd;stroke-width:1}
text{font-family:sans-serif;font-size:11px;fill:#333}.title{font-size:13px;font-weight:bold}
`

// WriteSVG writes a self-contained SVG chart of the result: per policy a panel with,
// per time bucket, stacked bars of attempts that reached the healthy service, attempts
// that reached the dead service and attempts the breaker refused, the outage windows
// shaded, and for the breaker policy a band of the breaker's state over time
// (closed, open, half-open) and a lane of its probes (each a line from the probe's
// grant to its end, ending in a filled dot if it succeeded and a hollow one if it
// failed). Panels share their scales. Elements carry ids ("plain-healthy",
// "breaker-band", "breaker-probes", ...) and classes ("healthy", "open", "probe", ...).
// r must come from [Simulate]; a Result with an invalid Scenario is an error.
func (r *Result) WriteSVG(w io.Writer) error {
	if err := r.Scenario.Validate(); err != nil {
		return err
	}
	end := max(r.Plain.End, r.Breaker.End)
	if rem := end % r.Scenario.Bucket; rem != 0 {
		end += r.Scenario.Bucket - rem
	}
	peak := 1
	for _, o := range []*Outcome{&r.Plain, &r.Breaker} {
		for _, b := range o.Buckets {
			peak = max(peak, b.Healthy+b.Dead+b.Refused)
		}
	}
	c := &chart{r: r, end: end, yStep: niceStep(float64(peak) / 4)}
	c.yMax = c.yStep * float64(int(float64(peak)/c.yStep+0.999999))
	height := svgTop + 2*panelHeight + 8

	c.f(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	c.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n",
		svgWidth, height, svgWidth, height)
	c.f("<title>%s</title>\n<style>%s</style>\n", esc(r.Header()), svgStyle)
	c.f(`<rect width="100%%" height="100%%" fill="#fff"/>` + "\n")
	c.f(`<text class="title" x="%.0f" y="18">Outage simulation: plain retries vs breaker</text>`+"\n", svgLeft)
	c.f(`<text x="%.0f" y="34">%s</text>`+"\n", svgLeft, esc(r.Scenario.load()))
	c.f(`<text x="%.0f" y="48">%s</text>`+"\n", svgLeft, esc(r.Scenario.settings()))
	c.legend(68, 86)
	c.panel(&r.Plain, "plain", "Plain retries (the retry ladder alone)", svgTop)
	c.panel(&r.Breaker, "breaker", "Breaker in front of the ladder", svgTop+panelHeight)
	c.f("</svg>\n")
	if c.err != nil {
		return c.err
	}
	_, err := w.Write(c.buf.Bytes())
	return err
}

// chart accumulates the SVG text.
type chart struct {
	r     *Result
	end   time.Duration
	yMax  float64
	yStep float64
	buf   bytes.Buffer
	err   error
}

func (c *chart) f(format string, args ...any) {
	if c.err == nil {
		_, c.err = fmt.Fprintf(&c.buf, format, args...)
	}
}

// x maps a time offset to a horizontal coordinate.
func (c *chart) x(t time.Duration) float64 {
	return svgLeft + (svgWidth-svgLeft-svgRight)*float64(t)/float64(c.end)
}

// legend draws the swatches of every class: the traffic at height y1, the breaker
// at y2.
func (c *chart) legend(y1, y2 float64) {
	type item struct{ class, label string }
	rows := []struct {
		y     float64
		items []item
	}{
		{y1, []item{
			{"healthy", "reached the healthy service"},
			{"dead", "reached the dead service (hung)"},
			{"refused", "refused by the breaker"},
			{"outage", "outage"},
		}},
		{y2, []item{
			{"closed", "breaker closed"},
			{"open", "open"},
			{"half-open", "half-open"},
			{"probe", "probe succeeded"},
			{"probe probe-failed", "probe failed"},
		}},
	}
	c.f(`<g id="legend">`)
	for _, row := range rows {
		x := svgLeft
		for _, it := range row.items {
			if strings.HasPrefix(it.class, "probe") {
				c.f(`<line class="probe" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><circle class="%s" cx="%.1f" cy="%.1f" r="3.5"/>`,
					x-2, row.y-4, x+8, row.y-4, it.class, x+8, row.y-4)
			} else {
				c.f(`<rect class="%s" x="%.1f" y="%.1f" width="10" height="10"/>`, it.class, x, row.y-9)
			}
			c.f(`<text x="%.1f" y="%.1f">%s</text>`, x+16, row.y, esc(it.label))
			x += 16 + 6.2*float64(len(it.label)) + 16
		}
	}
	c.f("</g>\n")
}

// panel draws one policy's panel with its top at y0: the grid, the outage
// windows, the stacked bars, the breaker's state band and probe lane (for the
// breaker policy) and the axes.
func (c *chart) panel(o *Outcome, id, title string, y0 float64) {
	c.f(`<g id="%s" class="panel">`+"\n", id)
	c.f(`<text class="title" x="%.1f" y="%.1f">%s</text>`+"\n", svgLeft, y0+16, esc(title))
	c.grid(y0)
	c.outageWindows(id, y0)
	c.bars(o, id, y0)
	c.band(o, id, y0)
	if o.Policy == WithBreaker {
		c.probes(o, id, y0+probeMid)
	}
	c.axes(y0)
	c.f("</g>\n")
}

// yOf maps an attempt count v to a vertical coordinate in the panel whose top
// is at y0.
func (c *chart) yOf(y0, v float64) float64 {
	return y0 + plotTop + plotHeight - plotHeight*v/c.yMax
}

// grid draws the horizontal grid lines and the y axis labels of the panel
// whose top is at y0.
func (c *chart) grid(y0 float64) {
	left, right := svgLeft, svgWidth-svgRight
	for v := 0.0; v <= c.yMax+c.yStep/2; v += c.yStep {
		y := c.yOf(y0, v)
		c.f(`<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f" text-anchor="end">%g</text>`+"\n",
			left, y, right, y, left-6, y+4, v)
	}
}

// outageWindows shades the scenario's outage windows and labels each one.
func (c *chart) outageWindows(id string, y0 float64) {
	top := y0 + plotTop
	c.f(`<g id="%s-outage" class="outage">`, id)
	for _, w := range c.r.Scenario.outages() {
		c.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>outage from %v to %v</title></rect>`,
			c.x(w.from), top, c.x(w.to)-c.x(w.from), plotHeight, w.from, w.to)
	}
	c.f("</g>\n")
	for _, w := range c.r.Scenario.outages() {
		c.f(`<text x="%.1f" y="%.1f">outage</text>`+"\n", c.x(w.from)+4, top+12)
	}
}

// barSeries lists the stacked bars' series from the bottom up: dead, then
// healthy, then refused, each with its value and the sum of those below it.
var barSeries = []struct {
	class string
	value func(Bucket) int
	below func(Bucket) int
}{
	{"dead", func(b Bucket) int { return b.Dead }, func(Bucket) int { return 0 }},
	{"healthy", func(b Bucket) int { return b.Healthy }, func(b Bucket) int { return b.Dead }},
	{"refused", func(b Bucket) int { return b.Refused }, func(b Bucket) int { return b.Dead + b.Healthy }},
}

// bars draws o's stacked bars, one per bucket and series.
func (c *chart) bars(o *Outcome, id string, y0 float64) {
	bw := c.x(c.r.Scenario.Bucket) - c.x(0)
	gap := 0.0
	if bw > 3 {
		gap = 1
	}
	for _, se := range barSeries {
		c.f(`<g id="%s-%s" class="series %s">`, id, se.class, se.class)
		for _, b := range o.Buckets {
			v := se.value(b)
			if v == 0 {
				continue
			}
			lo, hi := c.yOf(y0, float64(se.below(b))), c.yOf(y0, float64(se.below(b)+v))
			c.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d</title></rect>`,
				c.x(b.Start), hi, bw-gap, lo-hi, b.Start, v)
		}
		c.f("</g>\n")
	}
}

// band draws o's breaker state band, if it has one.
func (c *chart) band(o *Outcome, id string, y0 float64) {
	if len(o.Band) == 0 {
		return
	}
	c.f(`<text x="%.1f" y="%.1f" text-anchor="end">state</text>`, svgLeft-6, y0+bandTop+11)
	c.f(`<g id="%s-band" class="band">`, id)
	for _, seg := range o.Band {
		if seg.To <= seg.From {
			continue
		}
		c.f(`<rect class="state %s" x="%.2f" y="%.1f" width="%.2f" height="%.1f"><title>%s from %v to %v</title></rect>`,
			seg.State, c.x(seg.From), y0+bandTop, c.x(seg.To)-c.x(seg.From), bandHeight,
			seg.State, seg.From.Round(time.Millisecond), seg.To.Round(time.Millisecond))
	}
	c.f("</g>\n")
}

// axes draws the panel's axes, its time ticks and the axis titles.
func (c *chart) axes(y0 float64) {
	top, bottom := y0+plotTop, y0+plotTop+plotHeight
	left, right := svgLeft, svgWidth-svgRight
	c.f(`<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, left, bottom, right, bottom)
	c.f(`<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", left, top, left, bottom)
	step := time.Duration(niceStep(float64(c.end)/12/float64(time.Minute)) * float64(time.Minute))
	if step <= 0 {
		step = time.Minute
	}
	for t := time.Duration(0); t <= c.end; t += step {
		c.f(`<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`,
			c.x(t), bottom, c.x(t), bottom+4, c.x(t), bottom+16, t.Minutes())
	}
	c.f("\n"+`<text x="%.1f" y="%.1f" text-anchor="middle">time (minutes)</text>`+"\n", (left+right)/2, bottom+30)
	c.f(`<text x="14" y="%.1f" text-anchor="middle" transform="rotate(-90 14 %.1f)">attempts per %v</text>`+"\n",
		(top+bottom)/2, (top+bottom)/2, c.r.Scenario.Bucket)
}

// probes draws the probe lane of o, centred on y: per probe a line over the time
// it was in flight and a dot at its end, filled if it succeeded, hollow if it failed.
func (c *chart) probes(o *Outcome, id string, y float64) {
	c.f(`<text x="%.1f" y="%.1f" text-anchor="end">probes</text>`, svgLeft-6, y+4)
	c.f(`<g id="%s-probes" class="probes">`, id)
	for _, p := range o.Probes {
		class, what := "probe", "succeeded"
		switch {
		case p.Cut:
			class, what = "probe probe-failed", "cut at its lease end, failed"
		case p.Failed:
			class, what = "probe probe-failed", "failed"
		}
		c.f(`<g class="%s"><title>probe from %v to %v: %s</title>`, class,
			p.At.Round(time.Millisecond), p.End.Round(time.Millisecond), what)
		c.f(`<line class="probe" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f"/>`, c.x(p.At), y, c.x(p.End), y)
		c.f(`<line class="probe" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f"/>`, c.x(p.At), y-4, c.x(p.At), y+4)
		c.f(`<circle class="%s" cx="%.2f" cy="%.1f" r="3.5"/></g>`, class, c.x(p.End), y)
	}
	c.f("</g>\n")
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten (at least 1e-3).
func niceStep(v float64) float64 {
	p := 1e-3
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
