package outage

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
)

// svgElement is what the test keeps of each element.
type svgElement struct {
	name, id, class, parent string
}

// parseSVG decodes the whole document (failing if it is not well-formed) and returns
// its elements with the id of the nearest enclosing element that has one.
func parseSVG(t *testing.T, data []byte) []svgElement {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var elems []svgElement
	var stack []string // ids of open elements ("" if none)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElement{name: tok.Name.Local}
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i] != "" {
					e.parent = stack[i]
					break
				}
			}
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "id":
					e.id = a.Value
				case "class":
					e.class = a.Value
				}
			}
			if len(stack) == 0 && (e.name != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root is %v, want svg in the SVG namespace", tok.Name)
			}
			stack = append(stack, e.id)
			elems = append(elems, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return elems
}

func TestWriteSVG(t *testing.T) {
	res, err := Simulate(context.Background(), DefaultScenario())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	elems := parseSVG(t, buf.Bytes())
	ids := map[string]bool{}
	rects := map[string]int{}      // rect count per enclosing id
	stateRects := map[string]int{} // band rects per state class
	for _, e := range elems {
		if e.id != "" {
			if ids[e.id] {
				t.Errorf("duplicate id %q", e.id)
			}
			ids[e.id] = true
		}
		if e.name == "rect" {
			rects[e.parent]++
			if e.parent == "breaker-band" {
				stateRects[strings.TrimPrefix(e.class, "state ")]++
			}
		}
	}
	for _, id := range []string{"legend", "plain", "breaker", "plain-outage", "breaker-outage",
		"plain-healthy", "plain-dead", "plain-refused", "breaker-healthy", "breaker-dead", "breaker-refused", "breaker-band",
		"breaker-probes"} {
		if !ids[id] {
			t.Errorf("no element with id %q", id)
		}
	}
	if ids["plain-band"] || ids["plain-probes"] {
		t.Error("plain retries panel has a breaker band or probes")
	}
	count := func(o *Outcome, f func(Bucket) int) int {
		n := 0
		for _, b := range o.Buckets {
			if f(b) > 0 {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		id   string
		want int
	}{
		{"plain-healthy", count(&res.Plain, func(b Bucket) int { return b.Healthy })},
		{"plain-dead", count(&res.Plain, func(b Bucket) int { return b.Dead })},
		{"plain-refused", 0},
		{"breaker-healthy", count(&res.Breaker, func(b Bucket) int { return b.Healthy })},
		{"breaker-dead", count(&res.Breaker, func(b Bucket) int { return b.Dead })},
		{"breaker-refused", count(&res.Breaker, func(b Bucket) int { return b.Refused })},
		{"breaker-band", nonEmpty(res.Breaker.Band)},
	} {
		if rects[c.id] != c.want {
			t.Errorf("%s: %d bars, want %d", c.id, rects[c.id], c.want)
		}
	}
	if rects["breaker-refused"] == 0 || rects["plain-dead"] == 0 {
		t.Error("the default scenario draws no refusals or no dead attempts")
	}
	for _, st := range []string{"closed", "open", "half-open"} {
		if stateRects[st] == 0 {
			t.Errorf("breaker band has no %s segment (%v)", st, stateRects)
		}
	}
	// Probes are visible: one mark per probe, hollow when it failed.
	var marks, failedMarks int
	for _, e := range elems {
		if e.name == "circle" && e.parent == "breaker-probes" {
			marks++
			if strings.Contains(e.class, "probe-failed") {
				failedMarks++
			}
		}
	}
	failed := 0
	for _, p := range res.Breaker.Probes {
		if p.Failed {
			failed++
		}
	}
	if marks != res.Breaker.Metrics.Probes || len(res.Breaker.Probes) != marks || failedMarks != failed || marks == 0 || failed == 0 {
		t.Errorf("probe marks %d (%d failed), want %d (%d failed)", marks, failedMarks, res.Breaker.Metrics.Probes, failed)
	}
}

// TestSVGOneColourOneMeaning: every class that carries a meaning (a series, a
// breaker state, the outage, the probes) has its own colour, and the legend shows
// each of them.
func TestSVGOneColourOneMeaning(t *testing.T) {
	rule := regexp.MustCompile(`\.([a-z-]+)\{([^}]*)\}`)
	prop := regexp.MustCompile(`(fill|stroke):(#[0-9a-fA-F]+)`)
	colours := map[string][]string{} // class -> colours it paints with
	for _, m := range rule.FindAllStringSubmatch(svgStyle, -1) {
		for _, pm := range prop.FindAllStringSubmatch(m[2], -1) {
			colours[m[1]] = append(colours[m[1]], strings.ToLower(pm[2]))
		}
	}
	meanings := []string{"healthy", "dead", "refused", "outage", "closed", "open", "half-open", "probe"}
	owner := map[string]string{} // colour -> the meaning that uses it
	for _, class := range meanings {
		if len(colours[class]) == 0 {
			t.Errorf("class %q has no colour in the style", class)
		}
		for _, col := range colours[class] {
			if other, ok := owner[col]; ok && other != class {
				t.Errorf("colour %s means both %q and %q", col, other, class)
			}
			owner[col] = class
		}
	}
	for _, class := range []string{"axis", "grid", "probe-failed"} {
		for _, col := range colours[class] {
			if other, ok := owner[col]; ok {
				t.Errorf("%s uses %s, the colour of %q", class, col, other)
			}
		}
	}
	res, err := Simulate(context.Background(), DefaultScenario())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	legend := map[string]bool{}
	for _, e := range parseSVG(t, buf.Bytes()) {
		if e.parent == "legend" {
			for _, c := range strings.Fields(e.class) {
				legend[c] = true
			}
		}
	}
	for _, class := range append(meanings, "probe-failed") {
		if !legend[class] {
			t.Errorf("the legend does not show %q", class)
		}
	}
}

// TestSVGFlapping: both outages of a flapping service are shaded.
func TestSVGFlapping(t *testing.T) {
	res, err := Simulate(context.Background(), Flapping())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range parseSVG(t, buf.Bytes()) {
		if e.name == "rect" && e.parent == "breaker-outage" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d outage windows shaded, want 2", n)
	}
}

func TestSVGEscapes(t *testing.T) {
	if got := esc(`a<b & "c"`); got != "a&lt;b &amp; &#34;c&#34;" {
		t.Fatalf("esc = %q", got)
	}
}

func TestNiceStep(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{0, 0.001}, {0.7, 1}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {13, 20}, {26, 50}, {400, 500},
	} {
		if got := niceStep(tt.in); got != tt.want {
			t.Errorf("niceStep(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func nonEmpty(band []Segment) int {
	n := 0
	for _, seg := range band {
		if seg.To > seg.From {
			n++
		}
	}
	return n
}

func TestWriteSVGInvalid(t *testing.T) {
	var fe *FieldError
	if err := (&Result{}).WriteSVG(io.Discard); !errors.As(err, &fe) {
		t.Fatalf("WriteSVG on a zero Result: %v, want a FieldError", err)
	}
}
