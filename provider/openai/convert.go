package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/loopctl/loopctl-go/agent"
)

// params maps an agent request onto the SDK's request parameters.
func (p *Provider) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	var params sdk.ChatCompletionNewParams
	if req.Model == "" {
		return params, errors.New("openai: Request.Model is empty")
	}
	if req.MaxTokens < 0 {
		return params, fmt.Errorf("openai: Request.MaxTokens must not be negative (got %d)", req.MaxTokens)
	}
	params.Model = shared.ChatModel(req.Model)
	params.Messages = make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for i, m := range req.Messages {
		msg, ok, err := message(m)
		if err != nil {
			return params, fmt.Errorf("openai: message %d: %w", i, err)
		}
		if ok {
			params.Messages = append(params.Messages, msg)
		}
	}
	for _, t := range req.Tools {
		tool, err := toolSpec(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.maxTokens
	}
	if maxTokens > 0 {
		if p.legacy {
			params.MaxTokens = sdk.Int(int64(maxTokens))
		} else {
			params.MaxCompletionTokens = sdk.Int(int64(maxTokens))
		}
	}
	return params, nil
}

// message maps one conversation entry; ok is false for an entry that is left
// out (an empty assistant message).
func message(m agent.Message) (msg sdk.ChatCompletionMessageParamUnion, ok bool, err error) {
	switch m.Role {
	case agent.RoleSystem:
		return sdk.SystemMessage(m.Content), true, nil
	case agent.RoleUser:
		return sdk.UserMessage(m.Content), true, nil
	case agent.RoleTool:
		return sdk.ToolMessage(m.Content, m.ToolCallID), true, nil
	case agent.RoleAssistant:
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return msg, false, nil
		}
		var a sdk.ChatCompletionAssistantMessageParam
		if m.Content != "" {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      c.Name,
						Arguments: args,
					},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, true, nil
	default:
		return msg, false, fmt.Errorf("unknown role %q", m.Role)
	}
}

// toolSpec maps a tool description onto a function tool.
func toolSpec(t agent.ToolSpec) (sdk.ChatCompletionToolUnionParam, error) {
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = sdk.String(t.Description)
	}
	if len(t.Parameters) > 0 {
		var schema shared.FunctionParameters
		if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
			return sdk.ChatCompletionToolUnionParam{}, fmt.Errorf("openai: tool %q: Parameters must be a JSON object", t.Name)
		}
		fn.Parameters = schema
	}
	return sdk.ChatCompletionFunctionTool(fn), nil
}

// response maps the first choice of a completion onto an agent response.
func response(res *sdk.ChatCompletion) agent.Response {
	m := res.Choices[0].Message
	out := agent.Message{Role: agent.RoleAssistant, Content: m.Content}
	if out.Content == "" {
		out.Content = m.Refusal
	}
	for i, c := range m.ToolCalls {
		call := agent.ToolCall{ID: c.ID}
		if c.Type == "custom" {
			call.Name = c.Custom.Name
			call.Arguments = rawArgs(c.Custom.Input)
		} else {
			call.Name = c.Function.Name
			call.Arguments = rawArgs(c.Function.Arguments)
		}
		if call.ID == "" {
			call.ID = "call_" + strconv.Itoa(i)
		}
		out.ToolCalls = append(out.ToolCalls, call)
	}
	return agent.Response{
		Message: out,
		Usage: agent.Usage{
			InputTokens:  res.Usage.PromptTokens,
			OutputTokens: res.Usage.CompletionTokens,
		},
		StopReason: stopReason(res.Choices[0].FinishReason),
		Model:      res.Model,
	}
}

// stopReason normalises a finish_reason: OpenAI's values are the normalised
// names already, except the deprecated "function_call"; others pass through.
func stopReason(finish string) agent.StopReason {
	if finish == "function_call" {
		return agent.StopToolCalls
	}
	return agent.StopReason(finish)
}

// rawArgs keeps the arguments byte for byte, valid JSON or not.
func rawArgs(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
