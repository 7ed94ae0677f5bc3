package wire

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// responsesObject is the part of a Responses response the translation
// reads.
type responsesObject struct {
	responsesHead
	Output []json.RawMessage `json:"output"`
}

// responsesHead is what a Responses response and a stream event's
// response both carry and the translation reads.
type responsesHead struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *responsesUsage `json:"usage"`
}

// responsesItemIn is one output item of a Responses answer.
type responsesItemIn struct {
	Type    string `json:"type"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"`
}

// errResponseFailed is a Responses answer whose status says it did not
// complete (failed, cancelled, queued, in_progress).
var errResponseFailed = errors.New("responses answer neither completed nor incomplete")

// decodeResponsesAnswer decodes a Responses response: message items' text
// (output_text and refusal parts), function_call and custom_tool_call
// items, reasoning items kept as they are (never sent across wires),
// other built-in tool items dropped; status and usage.
func decodeResponsesAnswer(body []byte) (Response, error) {
	var r responsesObject
	if err := json.Unmarshal(body, &r); err != nil {
		return Response{}, err
	}
	if r.Status != "" && r.Status != "completed" && r.Status != "incomplete" {
		return Response{}, errResponseFailed
	}
	resp := Response{ID: r.ID, Model: r.Model}
	calls := 0
	for _, raw := range r.Output {
		call, err := resp.appendResponsesItem(raw)
		if err != nil {
			return Response{}, err
		}
		if call {
			calls++
		}
	}
	reason := ""
	if r.IncompleteDetails != nil {
		reason = r.IncompleteDetails.Reason
	}
	resp.Stop = stopFromResponses(r.Status, reason, calls > 0)
	if r.Usage != nil {
		resp.Usage = r.Usage.neutral()
	}
	return resp, nil
}

// appendResponsesItem appends the parts of one Responses output item and
// reports whether it was a tool call.
func (resp *Response) appendResponsesItem(raw json.RawMessage) (call bool, err error) {
	var item responsesItemIn
	if err := json.Unmarshal(raw, &item); err != nil {
		return false, err
	}
	switch item.Type {
	case "message":
		for _, c := range item.Content {
			if text := c.Text + c.Refusal; text != "" {
				resp.Content = append(resp.Content, Part{Kind: Text, Text: text})
			}
		}
	case "function_call":
		resp.Content = append(resp.Content, Part{Kind: ToolCall, CallID: item.CallID,
			Name: item.Name, Input: toolInput([]byte(item.Arguments))})
		return true, nil
	case "custom_tool_call":
		input, _ := json.Marshal(map[string]string{"input": item.Input})
		resp.Content = append(resp.Content, Part{Kind: ToolCall, CallID: item.CallID,
			Name: item.Name, Input: input})
		return true, nil
	case "reasoning":
		resp.Content = append(resp.Content, Part{Kind: Reasoning, Raw: raw})
	}
	return false, nil
}

// responsesOutputText is an output_text content part.
type responsesOutputText struct {
	Type        string   `json:"type"`
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
}

// responsesItemOut is one output item the gateway writes: a message, a
// function_call or a custom_tool_call.
type responsesItemOut struct {
	Type      string                `json:"type"`
	ID        string                `json:"id"`
	Status    string                `json:"status,omitempty"`
	Role      string                `json:"role,omitempty"`
	Content   []responsesOutputText `json:"content,omitempty"`
	CallID    string                `json:"call_id,omitempty"`
	Name      string                `json:"name,omitempty"`
	Namespace string                `json:"namespace,omitempty"`
	Arguments *string               `json:"arguments,omitempty"`
	Input     *string               `json:"input,omitempty"`
}

// responsesAnswer is a Responses response as the gateway writes it.
type responsesAnswer struct {
	ID                string               `json:"id"`
	Object            string               `json:"object"`
	CreatedAt         int64                `json:"created_at"`
	Status            string               `json:"status"`
	Error             *struct{}            `json:"error"`
	IncompleteDetails *responsesIncomplete `json:"incomplete_details"`
	Instructions      *string              `json:"instructions"`
	Metadata          struct{}             `json:"metadata"`
	Model             string               `json:"model"`
	Output            []responsesItemOut   `json:"output"`
	ParallelToolCalls bool                 `json:"parallel_tool_calls"`
	Temperature       *float64             `json:"temperature"`
	ToolChoice        string               `json:"tool_choice"`
	Tools             []struct{}           `json:"tools"`
	TopP              *float64             `json:"top_p"`
	Usage             responsesUsage       `json:"usage"`
}

// responsesIncomplete is a Responses response's incomplete_details.
type responsesIncomplete struct {
	Reason string `json:"reason"`
}

// encodeResponsesAnswer writes the answer as a Responses response: one
// message item per run of text, function_call items (with their namespace)
// and custom_tool_call items (the raw input string) in order; thinking
// blocks and reasoning items from another wire are dropped. Its id begins
// with MintedResponsePrefix.
func encodeResponsesAnswer(resp Response) ([]byte, error) {
	out := responsesAnswer{
		ID:                mintID(MintedResponsePrefix, resp.ID),
		Object:            "response",
		CreatedAt:         time.Now().Unix(),
		Model:             resp.Model,
		Output:            []responsesItemOut{},
		ParallelToolCalls: true,
		ToolChoice:        "auto",
		Tools:             []struct{}{},
		Usage:             resp.Usage.responsesUsage(),
	}
	var message *responsesItemOut // the message item text goes to
	for _, p := range resp.Content {
		switch {
		case p.Kind == Text && p.Text != "":
			if message == nil {
				out.Output = append(out.Output, responsesItemOut{Type: "message",
					ID:   messageItemID(resp.ID, len(out.Output)),
					Role: "assistant", Status: "completed"})
				message = &out.Output[len(out.Output)-1]
			}
			message.Content = append(message.Content,
				responsesOutputText{Type: "output_text", Text: p.Text, Annotations: []string{}})
		case p.Kind == ToolCall:
			out.Output = append(out.Output, responsesCall(p))
			message = nil
		}
	}
	status, reason := resp.Stop.responses()
	out.Status = status
	if reason != "" {
		out.IncompleteDetails = &responsesIncomplete{Reason: reason}
	}
	return json.Marshal(out)
}

// responsesCall is the output item of one tool call.
func responsesCall(p Part) responsesItemOut {
	if p.Custom {
		input := p.Text
		return responsesItemOut{Type: "custom_tool_call", ID: mintID("ctc_", p.CallID),
			CallID: p.CallID, Name: p.Name, Namespace: p.Namespace, Input: &input}
	}
	args := string(toolInput(p.Input))
	return responsesItemOut{Type: "function_call", ID: mintID("fc_", p.CallID),
		Status: "completed", CallID: p.CallID, Name: p.Name, Namespace: p.Namespace,
		Arguments: &args}
}

// messageItemID is the id of the message item at index i of the output:
// derived from the upstream's id, or random when there is none.
func messageItemID(upstream string, i int) string {
	if upstream == "" {
		return mintID("msg_", "")
	}
	return mintID("msg_", upstream) + "_" + strconv.Itoa(i)
}
