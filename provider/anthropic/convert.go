package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/loopctl/loopctl-go/agent"
)

// params maps an agent request onto the SDK's request parameters.
func (p *Provider) params(req agent.Request) (sdk.MessageNewParams, error) {
	var params sdk.MessageNewParams
	if req.Model == "" {
		return params, errors.New("anthropic: Request.Model is empty")
	}
	if req.MaxTokens < 0 {
		return params, fmt.Errorf("anthropic: Request.MaxTokens must not be negative (got %d)", req.MaxTokens)
	}
	params.Model = sdk.Model(req.Model)
	params.MaxTokens = int64(req.MaxTokens)
	if params.MaxTokens == 0 {
		params.MaxTokens = int64(p.maxTokens)
	}
	msgs, system, err := messages(req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages, params.System = msgs, system
	for _, t := range req.Tools {
		tool, err := toolSpec(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

// messages maps the conversation: system messages into the system
// parameter, the rest into user and assistant messages, merging consecutive
// messages of the same role (so consecutive tool results share one user
// message).
func messages(in []agent.Message) ([]sdk.MessageParam, []sdk.TextBlockParam, error) {
	var (
		out    []sdk.MessageParam
		system []sdk.TextBlockParam
		role   agent.Role // role of out's last message: RoleUser or RoleAssistant
	)
	add := func(r agent.Role, blocks []sdk.ContentBlockParamUnion) {
		if len(out) > 0 && r == role {
			last := out[len(out)-1]
			if r == agent.RoleUser {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
			} else {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
			}
			return
		}
		role = r
		if r == agent.RoleUser {
			out = append(out, sdk.NewUserMessage(blocks...))
		} else {
			out = append(out, sdk.NewAssistantMessage(blocks...))
		}
	}
	for i, m := range in {
		switch m.Role {
		case agent.RoleSystem:
			system = append(system, sdk.TextBlockParam{Text: m.Content})
		case agent.RoleUser:
			add(agent.RoleUser, []sdk.ContentBlockParamUnion{sdk.NewTextBlock(m.Content)})
		case agent.RoleTool:
			block := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID, IsError: sdk.Bool(m.IsError)}
			if m.Content != "" {
				block.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
			}
			add(agent.RoleUser, []sdk.ContentBlockParamUnion{{OfToolResult: &block}})
		case agent.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, toolInput(c.Arguments), c.Name))
			}
			if len(blocks) > 0 {
				add(agent.RoleAssistant, blocks)
			}
		default:
			return nil, nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	return out, system, nil
}

// toolInput returns args when they are a JSON object, else {}.
func toolInput(args json.RawMessage) json.RawMessage {
	if isObject(args) {
		return args
	}
	return json.RawMessage(`{}`)
}

// isObject reports whether b is a valid JSON object.
func isObject(b []byte) bool {
	s := strings.TrimSpace(string(b))
	return strings.HasPrefix(s, "{") && json.Valid(b)
}

// toolSpec maps a tool description onto a custom tool.
func toolSpec(t agent.ToolSpec) (sdk.ToolUnionParam, error) {
	schema := sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	if len(t.Parameters) > 0 {
		var m map[string]any
		if err := json.Unmarshal(t.Parameters, &m); err != nil || m == nil {
			return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: tool %q: Parameters must be a JSON object", t.Name)
		}
		if v, ok := m["properties"]; ok {
			schema.Properties = v
		}
		if v, ok := m["required"]; ok {
			req, ok := v.([]any)
			if !ok {
				return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: tool %q: \"required\" must be an array of strings", t.Name)
			}
			for _, r := range req {
				s, ok := r.(string)
				if !ok {
					return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: tool %q: \"required\" must be an array of strings", t.Name)
				}
				schema.Required = append(schema.Required, s)
			}
		}
		delete(m, "properties")
		delete(m, "required")
		delete(m, "type")
		if len(m) > 0 {
			schema.ExtraFields = m
		}
	}
	tool := sdk.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = sdk.String(t.Description)
	}
	return sdk.ToolUnionParam{OfTool: &tool}, nil
}

// response maps a message onto an agent response.
func response(res *sdk.Message) agent.Response {
	out := agent.Message{Role: agent.RoleAssistant}
	var text strings.Builder
	for _, b := range res.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			var args json.RawMessage
			if len(b.Input) > 0 {
				args = append(json.RawMessage(nil), b.Input...)
			}
			out.ToolCalls = append(out.ToolCalls, agent.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Content = text.String()
	return agent.Response{
		Message:    out,
		Usage:      agent.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens},
		StopReason: stopReason(res.StopReason),
		Model:      string(res.Model),
	}
}

// stopReason normalises a stop_reason (see [agent.StopReason]); values with
// no normalised form, such as "pause_turn", pass through.
func stopReason(r sdk.StopReason) agent.StopReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return agent.StopEnd
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return agent.StopLength
	case sdk.StopReasonToolUse:
		return agent.StopToolCalls
	case sdk.StopReasonRefusal:
		return agent.StopContentFilter
	}
	return agent.StopReason(r)
}
