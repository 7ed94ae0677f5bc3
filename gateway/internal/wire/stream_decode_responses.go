package wire

import (
	"encoding/json"
	"maps"
	"slices"
)

// responsesStreamDecoder decodes Responses stream events. A call's
// arguments come in deltas or, from servers that send none, whole in its
// .done events (function_call_arguments.done, custom_tool_call_input.done,
// output_item.done): each is used only when no delta came, so the
// arguments arrive whole and once (GATEWAY §8.5). A custom tool call's raw
// input is sent on as the arguments {"input": ...}, as a whole answer's
// is (decodeResponsesAnswer).
type responsesStreamDecoder struct {
	started bool
	tools   map[int]bool // the output indexes of function and custom tool calls
	custom  map[int]bool // the custom tool calls among them
	gotArgs map[int]bool // the calls whose arguments have begun
	done    map[int]bool // the calls whose arguments are whole
}

// streamResponsesEvent is the part of a Responses stream event the decoder
// reads. Delta stays raw: only some events' deltas are strings.
type streamResponsesEvent struct {
	Type        string        `json:"type"`
	Response    responsesHead `json:"response"`
	OutputIndex int           `json:"output_index"`
	Item        struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Input     string `json:"input"`
	} `json:"item"`
	Delta     json.RawMessage `json:"delta"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
}

// decode reads one Responses event by its data's type.
func (d *responsesStreamDecoder) decode(e sseEvent, out []streamEvent) ([]streamEvent, error) {
	var r streamResponsesEvent
	if err := json.Unmarshal(e.data, &r); err != nil {
		return out, err
	}
	switch r.Type {
	case "response.created", "response.in_progress":
		if !d.started {
			d.started = true
			out = append(out, streamEvent{kind: streamStart, id: r.Response.ID, model: r.Response.Model})
		}
	case "response.output_item.added":
		return d.itemAdded(&r, out), nil
	case "response.output_text.delta", "response.refusal.delta":
		return appendStreamText(out, streamText, streamDeltaText(r.Delta)), nil
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		return d.args(out, r.OutputIndex, streamDeltaText(r.Delta)), nil
	case "response.function_call_arguments.done":
		return d.whole(out, r.OutputIndex, r.Arguments), nil
	case "response.custom_tool_call_input.done":
		return d.whole(out, r.OutputIndex, r.Input), nil
	case "response.output_item.done":
		if d.custom[r.OutputIndex] {
			return d.whole(out, r.OutputIndex, r.Item.Input), nil
		}
		return d.whole(out, r.OutputIndex, r.Item.Arguments), nil
	case "response.completed", "response.incomplete":
		return d.end(&r, out), nil
	}
	return out, nil // reasoning, other .done events, error, response.failed and unknown events
}

// itemAdded begins a function or custom tool call.
func (d *responsesStreamDecoder) itemAdded(r *streamResponsesEvent, out []streamEvent) []streamEvent {
	switch r.Item.Type {
	case "custom_tool_call":
		d.custom = addToIndexSet(d.custom, r.OutputIndex)
	case "function_call":
	default:
		return out
	}
	d.tools = addToIndexSet(d.tools, r.OutputIndex)
	return append(out, streamEvent{kind: streamToolStart, index: r.OutputIndex, id: r.Item.CallID, name: r.Item.Name})
}

// args appends a delta of a tool call's arguments (a custom call's input,
// escaped into its {"input": ...}, which the first delta opens).
func (d *responsesStreamDecoder) args(out []streamEvent, index int, text string) []streamEvent {
	if !d.tools[index] || d.done[index] || text == "" {
		return out
	}
	if d.custom[index] {
		quoted := appendJSONText(nil, text)
		text = string(quoted[1 : len(quoted)-1])
		if !d.gotArgs[index] {
			text = `{"input":"` + text
		}
	}
	d.gotArgs = addToIndexSet(d.gotArgs, index)
	return append(out, streamEvent{kind: streamToolArgs, index: index, text: text})
}

// whole takes a call's whole arguments (a custom call's input) from a
// .done event: used when no delta came, else the deltas are closed.
func (d *responsesStreamDecoder) whole(out []streamEvent, index int, text string) []streamEvent {
	if !d.tools[index] || d.done[index] {
		return out
	}
	d.done = addToIndexSet(d.done, index)
	switch {
	case d.custom[index] && d.gotArgs[index]:
		text = `"}`
	case d.custom[index]:
		text = string(append(appendJSONText([]byte(`{"input":`), text), '}'))
	case d.gotArgs[index]:
		return out
	}
	if text == "" {
		return out
	}
	d.gotArgs = addToIndexSet(d.gotArgs, index)
	return append(out, streamEvent{kind: streamToolArgs, index: index, text: text})
}

// end decodes response.completed or response.incomplete: a custom call's
// input left open closed, the stop reason, the usage and the end marker.
func (d *responsesStreamDecoder) end(r *streamResponsesEvent, out []streamEvent) []streamEvent {
	for _, index := range slices.Sorted(maps.Keys(d.custom)) {
		if d.gotArgs[index] && !d.done[index] {
			out = d.whole(out, index, "")
		}
	}
	reason := ""
	if r.Response.IncompleteDetails != nil {
		reason = r.Response.IncompleteDetails.Reason
	}
	status := r.Response.Status
	if status == "" && r.Type == "response.incomplete" {
		status = "incomplete"
	}
	out = append(out, streamEvent{kind: streamFinish, stop: stopFromResponses(status, reason, len(d.tools) > 0)})
	if r.Response.Usage != nil {
		out = append(out, streamEvent{kind: streamUsage, usage: r.Response.Usage.neutral()})
	}
	return append(out, streamEvent{kind: streamEnd})
}

// streamDeltaText is a delta that is a JSON string, "" otherwise.
func streamDeltaText(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
