package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
)

// Tool is a function the model may call.
type Tool struct {
	// Name is what the model calls the tool; unique within a Config, not blank.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is a JSON Schema of type "object" describing the arguments.
	// nil: an object with no properties.
	Parameters json.RawMessage
	// Func runs the tool with the model's arguments (a JSON object; "{}" when the
	// model sent none). Its error text is what the model reads. It must honour
	// ctx: Run waits for every tool call to return.
	Func func(ctx context.Context, args json.RawMessage) (string, error)

	// Timeout bounds each call of this tool (a call that runs longer is a
	// failure: "tool 'x' timed out after <Timeout>"). 0: Config.ToolTimeout.
	// Negative: a configuration error.
	Timeout time.Duration

	// NotIdempotent marks a tool whose call must not be sent twice (it
	// books, pays, sends, deletes...). false (the default): the tool is
	// idempotent, and when a call was resolved to it as its breaker's
	// recovery probe and the probe fails, the same call falls through once to
	// a usable backup (see [NewTool]). true: its failed probe is the result.
	NotIdempotent bool

	// bind, set by NewTool, decodes the arguments once, before the tool breaker's
	// gate, so that bad arguments never touch the breaker.
	bind func(args json.RawMessage) (func(context.Context) (string, error), error)
}

// bound returns a call of t with args, decoding them first if t is typed.
func (t *Tool) bound(args json.RawMessage) (func(context.Context) (string, error), error) {
	if t.bind != nil {
		return t.bind(args)
	}
	f := t.Func
	return func(ctx context.Context) (string, error) { return f(ctx, args) }, nil
}

// NewTool builds a Tool whose arguments are the Go type A, a struct (or a
// pointer to one). Parameters is derived from A by [Schema]; the arguments are
// decoded into A (unknown fields and missing required fields are rejected, as
// an [*ArgumentError]) before fn is called.
//
// The returned Tool is idempotent and uses Config.ToolTimeout; set its fields
// to change that:
//
//	book, err := agent.NewTool("book_flight", "books a flight", bookFlight)
//	book.NotIdempotent = true        // never sent twice for one call
//	book.Timeout = 2 * time.Minute   // its own timeout
//
// Idempotency matters for the probe fall-through (docs/SEMANTICS.md section 6):
// when the router resolves a call to a tool whose breaker is due for its
// recovery probe, the call is that probe even while a backup is healthy. If
// the probe fails (an error, a panic or a timeout; not a cancellation), an
// idempotent tool's call is resolved once more and, if a backup is usable,
// sent to it: the model reads only the backup's result, and the call's
// [EventToolCall] names both tools (FallThrough, then ResolvedTool). At most
// one fall-through per call. A NotIdempotent tool never falls through: its
// failed probe is the result the model reads, since the call may have taken
// effect.
func NewTool[A any](name, description string, fn func(ctx context.Context, args A) (string, error)) (Tool, error) {
	if strings.TrimSpace(name) == "" {
		return Tool{}, errors.New("agent: NewTool: blank tool name")
	}
	if fn == nil {
		return Tool{}, fmt.Errorf("agent: NewTool %q: nil function", name)
	}
	typ := reflect.TypeFor[A]()
	st := typ
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return Tool{}, fmt.Errorf("agent: NewTool %q: arguments must be a struct, not %v", name, typ)
	}
	params, required, err := schemaOf(typ)
	if err != nil {
		return Tool{}, fmt.Errorf("agent: NewTool %q: %w", name, err)
	}
	bind := func(raw json.RawMessage) (func(context.Context) (string, error), error) {
		args, err := decodeArgs[A](raw, required)
		if err != nil {
			return nil, &ArgumentError{Tool: name, Err: err}
		}
		return func(ctx context.Context) (string, error) { return fn(ctx, args) }, nil
	}
	return Tool{
		Name:        name,
		Description: description,
		Parameters:  params,
		Func: func(ctx context.Context, raw json.RawMessage) (string, error) {
			call, err := bind(raw)
			if err != nil {
				return "", err
			}
			return call(ctx)
		},
		bind: bind,
	}, nil
}

// objectArgs checks that raw is one JSON object; empty arguments become "{}".
func objectArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(trimmed) {
		return nil, errors.New("arguments are not valid JSON; send one JSON object")
	}
	if trimmed[0] != '{' {
		return nil, errors.New("arguments must be a JSON object")
	}
	return raw, nil
}

// decodeArgs decodes raw into an A, rejecting unknown fields, trailing data and
// missing required (top-level) fields.
func decodeArgs[A any](raw json.RawMessage, required []string) (A, error) {
	var args A
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return args, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return args, errors.New("unexpected data after the arguments object")
	}
	if len(required) > 0 {
		var present map[string]json.RawMessage
		if err := json.Unmarshal(raw, &present); err != nil {
			return args, err
		}
		var missing []string
		for _, r := range required {
			if _, ok := present[r]; !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return args, fmt.Errorf("missing required field(s): %s", strings.Join(missing, ", "))
		}
	}
	return args, nil
}
