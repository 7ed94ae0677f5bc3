package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A Claude-Code-sized request (GATEWAY.md §8.9): about 100 KB, a long
// system prompt (about 20 KB, in two text blocks with cache_control), 40
// tools with JSON schemas, and 31 messages of history: a first user turn,
// 14 assistant turns calling tools (one of them two calls at once) each
// answered by a user turn of tool results (one an error), a closing
// assistant text and a new question. It is built once, deterministically,
// on the Messages wire and, with the same content, on the chat completions
// wire (what a chat client would send for the same conversation). The text
// carries what real requests carry: quotes, backslashes, tabs, newlines,
// angle brackets and a little non-ASCII, so that escaping is measured too.

// ccTool is one tool: a name, a description and its input's JSON schema.
type ccTool struct {
	name, description string
	schema            map[string]any
}

// ccCall is one tool call of an assistant turn, and its result.
type ccCall struct {
	id, name string
	input    map[string]any
	result   string
	isError  bool
}

// ccTurn is one assistant turn calling tools, with the text before its calls.
type ccTurn struct {
	text  string
	calls []ccCall
}

// ccConversation is the request's content, wire-neutral.
type ccConversation struct {
	system       [2]string // the identity block and the long instructions
	tools        []ccTool
	first        string // the first user turn
	turns        []ccTurn
	closing, ask string // the closing assistant text and the new question
}

// prose is a deterministic source of text: words from a fixed list, in an
// order a linear congruential generator picks, with code-like lines.
type prose struct{ state uint32 }

var proseWords = strings.Fields(`the gateway request upstream model answer stream breaker config file test
function returns error value when each turn tool result call chain wire translate message system
should must never always before after first last retry timeout budget "quoted" path\to\file
<tag> a&b naïve café — ok build run check lint format import package struct field type`)

// next returns the generator's next number below n.
func (p *prose) next(n int) int {
	p.state = p.state*1664525 + 1013904223
	return int(p.state>>8) % n
}

// text returns about size bytes of sentences.
func (p *prose) text(size int) string {
	var b strings.Builder
	for b.Len() < size {
		n := 6 + p.next(10)
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(proseWords[p.next(len(proseWords))])
		}
		b.WriteString(". ")
		if p.next(5) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// code returns about size bytes of numbered source lines, as a file read
// shows them.
func (p *prose) code(size int) string {
	var b strings.Builder
	for line := 1; b.Len() < size; line++ {
		fmt.Fprintf(&b, "%6d\t", line)
		b.WriteString(strings.Repeat("\t", p.next(3)))
		switch p.next(4) {
		case 0:
			fmt.Fprintf(&b, "if err := %s(ctx, %q); err != nil {\n", proseWords[p.next(20)], proseWords[p.next(len(proseWords))])
		case 1:
			fmt.Fprintf(&b, "return fmt.Errorf(\"%s: %%w\", err) // %s\n", proseWords[p.next(20)], p.text(20))
		case 2:
			b.WriteString("}\n")
		default:
			fmt.Fprintf(&b, "x.%s = strings.TrimSpace(`%s`)\n", proseWords[p.next(20)], proseWords[p.next(len(proseWords))])
		}
	}
	return b.String()
}

// schema returns the JSON schema of tool i: 2 to 7 properties of
// several kinds, some required.
func (p *prose) schema(i int) map[string]any {
	props := map[string]any{}
	var required []string
	for j := range 2 + i%6 {
		name := fmt.Sprintf("%s_%d", proseWords[p.next(20)], j)
		var prop map[string]any
		switch j % 4 {
		case 0:
			prop = map[string]any{"type": "string", "description": p.text(30)}
			required = append(required, name)
		case 1:
			prop = map[string]any{"type": "number", "description": p.text(20), "minimum": 0, "maximum": 600000}
		case 2:
			prop = map[string]any{"type": "string", "enum": []string{"low", "medium", "high"}, "description": p.text(20)}
		default:
			item := map[string]any{"type": "object", "required": []string{"path"}, "additionalProperties": false,
				"properties": map[string]any{"path": map[string]any{"type": "string"}, "line": map[string]any{"type": "integer"}}}
			prop = map[string]any{"type": "array", "items": item, "description": p.text(20)}
		}
		props[name] = prop
	}
	return map[string]any{"type": "object", "properties": props, "required": required,
		"additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"}
}

// claudeCodeConversation builds the conversation, the same on every call.
func claudeCodeConversation() ccConversation {
	p := &prose{state: 20260101}
	c := ccConversation{
		system: [2]string{"You are Claude Code, Anthropic's official CLI for Claude.", p.text(20000)},
		first:  "<system-reminder>\n" + p.text(2000) + "\n</system-reminder>\n" + p.text(300),
	}
	names := strings.Fields("Task Bash Glob Grep LS ExitPlanMode Read Edit MultiEdit Write NotebookEdit WebFetch TodoWrite WebSearch BashOutput KillShell")
	for i := range 40 {
		name := fmt.Sprintf("mcp__ide__tool_%d", i)
		if i < len(names) {
			name = names[i]
		}
		c.tools = append(c.tools, ccTool{name: name, description: p.text(120 + 30*(i%8)), schema: p.schema(i)})
	}
	for i := range 14 {
		t := ccTurn{text: p.text(120)}
		for k := range 1 + i%7/6 { // turn 6 and 13 call two tools at once
			tool := c.tools[p.next(len(c.tools))]
			t.calls = append(t.calls, ccCall{
				id:      fmt.Sprintf("toolu_01%022d", 1000*i+k),
				name:    tool.name,
				input:   map[string]any{"command": "go test ./... -run 'Test" + proseWords[p.next(20)] + "'", "timeout": 120000, "description": p.text(40)},
				result:  p.code(1200 + 200*(i%4)),
				isError: i == 9,
			})
		}
		c.turns = append(c.turns, t)
	}
	c.closing, c.ask = p.text(600), p.text(400)
	return c
}

// marshal encodes v as a JavaScript client does (no HTML escaping).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // the values are built here: a bug
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// messagesBody is the conversation as a Messages request for model.
func (c ccConversation) messagesBody(model string, stream bool) []byte {
	ephemeral := map[string]any{"type": "ephemeral"}
	tools := make([]any, len(c.tools))
	for i, t := range c.tools {
		tools[i] = map[string]any{"name": t.name, "description": t.description, "input_schema": t.schema}
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	msgs := []any{map[string]any{"role": "user", "content": []any{text(c.first)}}}
	for _, t := range c.turns {
		asst, results := []any{text(t.text)}, []any{}
		for _, call := range t.calls {
			asst = append(asst, map[string]any{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
			r := map[string]any{"type": "tool_result", "tool_use_id": call.id, "content": call.result}
			if call.isError {
				r["is_error"] = true
			}
			results = append(results, r)
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": asst}, map[string]any{"role": "user", "content": results})
	}
	last := text(c.ask)
	last["cache_control"] = ephemeral
	msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{text(c.closing)}},
		map[string]any{"role": "user", "content": []any{last}})
	sys := []any{text(c.system[0]), text(c.system[1])}
	sys[1].(map[string]any)["cache_control"] = ephemeral
	req := map[string]any{"model": model, "max_tokens": 32000, "system": sys, "tools": tools, "messages": msgs,
		"metadata": map[string]any{"user_id": "user_bench_account_session"}}
	if stream {
		req["stream"] = true
	}
	return marshal(req)
}

// chatBody is the conversation as a chat completions request for model.
func (c ccConversation) chatBody(model string, stream bool) []byte {
	tools := make([]any, len(c.tools))
	for i, t := range c.tools {
		tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": t.name, "description": t.description, "parameters": t.schema}}
	}
	msgs := []any{map[string]any{"role": "system", "content": c.system[0] + "\n\n" + c.system[1]},
		map[string]any{"role": "user", "content": c.first}}
	for _, t := range c.turns {
		var calls, results []any
		for _, call := range t.calls {
			calls = append(calls, map[string]any{"id": call.id, "type": "function",
				"function": map[string]any{"name": call.name, "arguments": string(marshal(call.input))}})
			content := call.result
			if call.isError {
				content = "Error: " + content
			}
			results = append(results, map[string]any{"role": "tool", "tool_call_id": call.id, "content": content})
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": t.text, "tool_calls": calls})
		msgs = append(msgs, results...)
	}
	msgs = append(msgs, map[string]any{"role": "assistant", "content": c.closing}, map[string]any{"role": "user", "content": c.ask})
	req := map[string]any{"model": model, "max_tokens": 32000, "tools": tools, "messages": msgs, "user": "user_bench_account_session"}
	if stream {
		req["stream"] = true
	}
	return marshal(req)
}
