package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/loopctl/loopctl-go/agent"
)

// The tools of the demo agent.
const (
	toolSearch     = "search"
	toolSearchBack = "search_backup"
	toolCalculator = "calculator"
)

// faults holds what is broken right now: the scripted story changes it
// between runs; the model server and the tools read it. It is safe for
// concurrent use.
type faults struct {
	mu     sync.Mutex
	models map[string]int    // model -> HTTP status it answers with (500, 429)
	tools  map[string]string // tool -> the error it returns
}

func newFaults() *faults {
	return &faults{models: map[string]int{}, tools: map[string]string{}}
}

func (f *faults) setModel(model string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if status == 0 {
		delete(f.models, model)
	} else {
		f.models[model] = status
	}
}

func (f *faults) model(model string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.models[model]
}

func (f *faults) setTool(tool, errText string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if errText == "" {
		delete(f.tools, tool)
	} else {
		f.tools[tool] = errText
	}
}

func (f *faults) tool(tool string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.tools[tool]; t != "" {
		return errors.New(t)
	}
	return nil
}

// doc is one entry of the search index.
type doc struct {
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

var index = []doc{
	{"Circuit breaker", "Stop calling a failing dependency after repeated failures; probe it again after a cooldown."},
	{"Exponential backoff", "Wait longer after each failure (base times 2^n, with jitter, capped) before retrying."},
	{"Rate limits", "A 429 carries Retry-After; after a few of them, escalate instead of waiting again."},
	{"Fallback chain", "When the primary model keeps failing, route turns to the next model of an ordered chain."},
	{"Health score", "Rank tools by a moving average of their successes; prefer healthy ones, route around sick ones."},
}

// lookup returns the entries matching most words of query (at least one
// entry: the best, even with no match).
func lookup(query string) []doc {
	words := strings.Fields(strings.ToLower(query))
	type hit struct {
		d     doc
		score int
		pos   int
	}
	hits := make([]hit, 0, len(index))
	for i, d := range index {
		text := strings.ToLower(d.Title + " " + d.Snippet)
		n := 0
		for _, w := range words {
			if strings.Contains(text, strings.Trim(w, `"'.,?`)) {
				n++
			}
		}
		hits = append(hits, hit{d, n, i})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := []doc{hits[0].d}
	if len(hits) > 1 && hits[1].score > 0 && hits[1].score == hits[0].score {
		out = append(out, hits[1].d)
	}
	return out
}

type searchArgs struct {
	Query string `json:"query" desc:"what to look up"`
}

type calcArgs struct {
	Expression string `json:"expression" desc:"an arithmetic expression with + - * / and parentheses, e.g. (2+3)*4"`
}

// searchResult is what search and search_backup return.
type searchResult struct {
	Source  string `json:"source"`
	Results []doc  `json:"results"`
}

// newTools returns the demo's tools; f decides when search and search_backup fail.
func newTools(f *faults) ([]agent.Tool, error) {
	search := func(name, source string) (agent.Tool, error) {
		return agent.NewTool(name, "Search the reliability handbook ("+source+"). Returns JSON results.",
			func(ctx context.Context, a searchArgs) (string, error) {
				if err := ctx.Err(); err != nil {
					return "", err
				}
				if err := f.tool(name); err != nil {
					return "", err
				}
				b, err := json.Marshal(searchResult{Source: source, Results: lookup(a.Query)})
				return string(b), err
			})
	}
	s, err := search(toolSearch, "the index")
	if err != nil {
		return nil, err
	}
	sb, err := search(toolSearchBack, "a mirror of the index")
	if err != nil {
		return nil, err
	}
	calc, err := agent.NewTool(toolCalculator, "Evaluate an arithmetic expression. Returns JSON with the result.",
		func(ctx context.Context, a calcArgs) (string, error) {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			v, err := Calc(a.Expression)
			if err != nil {
				// A bad expression is the model's mistake, not the tool's: no verdict.
				return "", &agent.ArgumentError{Tool: toolCalculator, Err: err}
			}
			b, err := json.Marshal(map[string]any{"expression": a.Expression, "result": v})
			return string(b), err
		})
	if err != nil {
		return nil, err
	}
	return []agent.Tool{s, sb, calc}, nil
}

// Calc evaluates an arithmetic expression of numbers, + - * /, unary minus
// and parentheses, with the usual precedence, in float64. Division by zero,
// a result that is not finite and malformed input are errors.
func Calc(expr string) (float64, error) {
	p := calcParser{s: expr}
	v, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	p.space()
	if p.i < len(p.s) {
		return 0, fmt.Errorf("unexpected %q at offset %d", p.s[p.i], p.i)
	}
	return v, nil
}

// maxCalcDepth bounds the nesting of parentheses and unary minus.
const maxCalcDepth = 100

type calcParser struct {
	s string
	i int
}

func (p *calcParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *calcParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *calcParser) expr(depth int) (float64, error) {
	v, err := p.term(depth)
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			break
		}
		p.i++
		var r float64
		if r, err = p.term(depth); err == nil {
			if op == '+' {
				v += r
			} else {
				v -= r
			}
		}
	}
	return v, err
}

func (p *calcParser) term(depth int) (float64, error) {
	v, err := p.factor(depth)
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' && op != 'x' {
			break
		}
		p.i++
		var r float64
		if r, err = p.factor(depth); err == nil {
			switch {
			case op != '/':
				v *= r
			case r == 0:
				err = errors.New("division by zero")
			default:
				v /= r
			}
		}
	}
	if err == nil && (v-v != 0) { // Inf or NaN
		err = errors.New("result out of range")
	}
	return v, err
}

func (p *calcParser) factor(depth int) (float64, error) {
	if depth > maxCalcDepth {
		return 0, errors.New("expression nested too deeply")
	}
	switch c := p.peek(); {
	case c == '-':
		p.i++
		v, err := p.factor(depth + 1)
		return -v, err
	case c == '(':
		p.i++
		v, err := p.expr(depth + 1)
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("missing ')' at offset %d", p.i)
		}
		p.i++
		return v, nil
	case c >= '0' && c <= '9' || c == '.':
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
			p.i++
		}
		v, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			return 0, fmt.Errorf("bad number %q", p.s[start:p.i])
		}
		return v, nil
	case c == 0:
		return 0, errors.New("unexpected end of expression")
	default:
		return 0, fmt.Errorf("unexpected %q at offset %d", c, p.i)
	}
}
