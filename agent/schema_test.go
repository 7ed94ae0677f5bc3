package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
)

type inner struct {
	X int `json:"x"`
}

type Embedded struct {
	E string `json:"e"`
}

type textKey string

func (k *textKey) UnmarshalText(b []byte) error { *k = textKey(b); return nil }

type custom struct{}

func (*custom) UnmarshalJSON([]byte) error { return nil }

type recursive struct {
	Next *recursive `json:"next"`
}

func TestSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"scalars", reflect.TypeFor[struct {
			S  string  `json:"s"`
			B  bool    `json:"b"`
			I  int64   `json:"i"`
			U  uint8   `json:"u"`
			F  float64 `json:"f"`
			F2 float32
		}](), `{"type":"object","properties":{"s":{"type":"string"},"b":{"type":"boolean"},"i":{"type":"integer"},"u":{"type":"integer","minimum":0},"f":{"type":"number"},"F2":{"type":"number"}},"required":["s","b","i","u","f","F2"],"additionalProperties":false}`},
		{"optional and skipped", reflect.TypeFor[struct {
			A string  `json:"a,omitempty"`
			B int     `json:"b,omitzero"`
			P *string `json:"p"`
			S string  `json:"-"`
			u int
		}](), `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"p":{"type":"string"}},"additionalProperties":false}`},
		{"descriptions", reflect.TypeFor[struct {
			Q string `json:"q" desc:"the \"query\""`
			N int    `json:"n" jsonschema:"minimum=1,description=how many\\, at most"`
		}](), `{"type":"object","properties":{"q":{"type":"string","description":"the \"query\""},"n":{"type":"integer","description":"how many, at most"}},"required":["q","n"],"additionalProperties":false}`},
		{"collections", reflect.TypeFor[struct {
			L  []string          `json:"l"`
			A  [2]float64        `json:"a"`
			M  map[string]int    `json:"m"`
			IM map[int]bool      `json:"im"`
			TM map[textKey]bool  `json:"tm"`
			B  []byte            `json:"b"`
			N  [][]inner         `json:"n"`
			MP map[string]*inner `json:"mp"`
		}](), `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}},"a":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2},"m":{"type":"object","additionalProperties":{"type":"integer"}},"im":{"type":"object","additionalProperties":{"type":"boolean"}},"tm":{"type":"object","additionalProperties":{"type":"boolean"}},"b":{"type":"string","contentEncoding":"base64"},"n":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}}},"mp":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}}},"required":["l","a","m","im","tm","b","n","mp"],"additionalProperties":false}`},
		{"nested, embedded, pointer", reflect.TypeFor[*struct {
			Embedded
			In  inner  `json:"in" desc:"nested"`
			Opt *inner `json:"opt"`
		}](), `{"type":"object","properties":{"e":{"type":"string"},"in":{"type":"object","description":"nested","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},"opt":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}},"required":["e","in"],"additionalProperties":false}`},
		{"special types", reflect.TypeFor[struct {
			T   time.Time       `json:"t"`
			R   json.RawMessage `json:"r"`
			Any any             `json:"any"`
			C   custom          `json:"c"`
			K   textKey         `json:"k"`
			Str int             `json:"str,string"`
		}](), `{"type":"object","properties":{"t":{"type":"string","format":"date-time"},"r":{},"any":{},"c":{},"k":{"type":"string"},"str":{"type":"string"}},"required":["t","r","any","c","k","str"],"additionalProperties":false}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := agent.Schema(tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
			if string(got) != tc.want {
				t.Fatalf("schema:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSchemaErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"chan", reflect.TypeFor[struct{ C chan int }](), "chan int"},
		{"func", reflect.TypeFor[struct{ F func() }](), "func()"},
		{"complex", reflect.TypeFor[struct{ Z complex128 }](), "complex128"},
		{"interface with methods", reflect.TypeFor[struct{ E error }](), "interfaces with methods"},
		{"bad map key", reflect.TypeFor[struct{ M map[[2]int]int }](), "map keys"},
		{"recursive", reflect.TypeFor[recursive](), "recursive"},
		{"duplicate names", reflect.TypeFor[struct {
			Embedded
			A string `json:"e"`
		}](), `duplicate field name "e"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agent.Schema(tc.typ)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Schema(%v) error = %v, want one containing %q", tc.typ, err, tc.want)
			}
		})
	}
}

func TestNewTool(t *testing.T) {
	type args struct {
		Query string   `json:"query" desc:"what to look for"`
		Limit int      `json:"limit,omitempty"`
		Tags  []string `json:"tags,omitempty"`
	}
	var got args
	tool, err := agent.NewTool("search", "search the web", func(_ context.Context, a args) (string, error) {
		got = a
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "parameters", string(tool.Parameters),
		`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["query"],"additionalProperties":false}`)
	for _, tc := range []struct {
		args string
		want string // error text, "" for success
	}{
		{`{"query":"go","limit":3,"tags":["a"]}`, ""},
		{``, "missing required field(s): query"},
		{`{"query":"go","extra":1}`, `json: unknown field "extra"`},
		{`{"query":1}`, "cannot unmarshal"},
		{`{"query":"go"} {}`, "unexpected data after the arguments object"},
	} {
		out, err := tool.Func(t.Context(), json.RawMessage(tc.args))
		if tc.want == "" {
			if err != nil || out != "ok" || got.Query != "go" || got.Limit != 3 {
				t.Fatalf("Func(%s) = %q, %v; args %+v", tc.args, out, err, got)
			}
			continue
		}
		var ae *agent.ArgumentError
		if !errors.As(err, &ae) || ae.Tool != "search" || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Func(%s) error = %v, want an ArgumentError containing %q", tc.args, err, tc.want)
		}
	}

	if _, err := agent.NewTool("x", "", func(context.Context, int) (string, error) { return "", nil }); err == nil {
		t.Fatal("NewTool with a non-struct argument type: no error")
	}
	if _, err := agent.NewTool("x", "", func(context.Context, struct{ C chan int }) (string, error) { return "", nil }); err == nil {
		t.Fatal("NewTool with a chan field: no error")
	}
	if _, err := agent.NewTool[args](" ", "", func(context.Context, args) (string, error) { return "", nil }); err == nil {
		t.Fatal("NewTool with a blank name: no error")
	}
	if _, err := agent.NewTool[args]("x", "", nil); err == nil {
		t.Fatal("NewTool with a nil function: no error")
	}
	// A pointer argument type works too.
	ptool, err := agent.NewTool("p", "", func(_ context.Context, a *args) (string, error) { return a.Query, nil })
	if err != nil {
		t.Fatal(err)
	}
	if out, err := ptool.Func(t.Context(), json.RawMessage(`{"query":"pq"}`)); err != nil || out != "pq" {
		t.Fatalf("pointer tool = %q, %v", out, err)
	}
}
