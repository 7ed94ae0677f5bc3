package wire

// Stop reasons and usage arithmetic shared by whole answers and streams
// (GATEWAY §8.4).

// stopFromMessages maps an Anthropic stop_reason to the neutral form.
func stopFromMessages(reason string) Stop {
	switch reason {
	case "stop_sequence":
		return StopSequence
	case "max_tokens":
		return MaxTokens
	case "model_context_window_exceeded":
		return ContextWindow
	case "tool_use":
		return ToolUse
	case "refusal":
		return Refusal
	}
	return EndTurn // end_turn, pause_turn, and anything unknown
}

// stopFromChat maps a chat finish_reason to the neutral form: stop and
// tool_calls follow the tool calls the answer actually has.
func stopFromChat(reason string, hasToolCall bool) Stop {
	switch reason {
	case "length":
		return MaxTokens
	case "content_filter":
		return Refusal
	}
	if hasToolCall {
		return ToolUse
	}
	return EndTurn
}

// stopFromResponses maps a Responses status and incomplete_details.reason
// to the neutral form.
func stopFromResponses(status, incompleteReason string, hasToolCall bool) Stop {
	if status == "incomplete" {
		if incompleteReason == "content_filter" {
			return Refusal
		}
		return MaxTokens
	}
	if hasToolCall {
		return ToolUse
	}
	return EndTurn
}

// messages returns the Anthropic stop_reason.
func (s Stop) messages() string {
	switch s {
	case StopSequence:
		return "stop_sequence"
	case MaxTokens:
		return "max_tokens"
	case ContextWindow:
		return "model_context_window_exceeded"
	case ToolUse:
		return "tool_use"
	case Refusal:
		return "refusal"
	}
	return "end_turn"
}

// chat returns the chat finish_reason.
func (s Stop) chat() string {
	switch s {
	case MaxTokens, ContextWindow:
		return "length"
	case ToolUse:
		return "tool_calls"
	case Refusal:
		return "content_filter"
	}
	return "stop"
}

// responses returns the Responses status and, when incomplete, the
// incomplete_details.reason.
func (s Stop) responses() (status, reason string) {
	switch s {
	case MaxTokens, ContextWindow:
		return "incomplete", "max_output_tokens"
	case Refusal:
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// usageFromOpenAI converts OpenAI usage (prompt tokens include cached
// ones) to the neutral form.
func usageFromOpenAI(prompt, cached, completion, reasoning int) Usage {
	cached = min(max(cached, 0), max(prompt, 0))
	return Usage{
		Input:     max(prompt-cached, 0),
		CacheRead: cached,
		Output:    max(completion, 0),
		Reasoning: max(reasoning, 0),
	}
}

// usageFromMessages converts Anthropic usage (input tokens exclude cached
// ones) to the neutral form.
func usageFromMessages(input, cacheRead, cacheWrite, output int) Usage {
	return Usage{
		Input:      max(input, 0),
		CacheRead:  max(cacheRead, 0),
		CacheWrite: max(cacheWrite, 0),
		Output:     max(output, 0),
	}
}

// openAIPrompt is OpenAI's prompt (input) tokens: every input token,
// cached or not.
func (u Usage) openAIPrompt() int { return u.Input + u.CacheRead + u.CacheWrite }

// openAITotal is OpenAI's total_tokens: prompt plus completion.
func (u Usage) openAITotal() int { return u.openAIPrompt() + u.Output }

// chatUsage is a chat completion's usage object.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// responsesUsage is a Responses response's usage object.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// messagesUsage is a Messages message's usage object.
type messagesUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// neutral converts a chat usage object.
func (c chatUsage) neutral() Usage {
	return usageFromOpenAI(c.PromptTokens, c.PromptTokensDetails.CachedTokens,
		c.CompletionTokens, c.CompletionTokensDetails.ReasoningTokens)
}

// neutral converts a Responses usage object.
func (r responsesUsage) neutral() Usage {
	return usageFromOpenAI(r.InputTokens, r.InputTokensDetails.CachedTokens,
		r.OutputTokens, r.OutputTokensDetails.ReasoningTokens)
}

// neutral converts a Messages usage object.
func (m messagesUsage) neutral() Usage {
	return usageFromMessages(m.InputTokens, m.CacheReadInputTokens,
		m.CacheCreationInputTokens, m.OutputTokens)
}

// chatUsage returns the chat usage object.
func (u Usage) chatUsage() chatUsage {
	c := chatUsage{
		PromptTokens:     u.openAIPrompt(),
		CompletionTokens: u.Output,
		TotalTokens:      u.openAITotal(),
	}
	c.PromptTokensDetails.CachedTokens = u.CacheRead
	c.CompletionTokensDetails.ReasoningTokens = u.Reasoning
	return c
}

// responsesUsage returns the Responses usage object.
func (u Usage) responsesUsage() responsesUsage {
	r := responsesUsage{
		InputTokens:  u.openAIPrompt(),
		OutputTokens: u.Output,
		TotalTokens:  u.openAITotal(),
	}
	r.InputTokensDetails.CachedTokens = u.CacheRead
	r.OutputTokensDetails.ReasoningTokens = u.Reasoning
	return r
}

// messagesUsage returns the Messages usage object.
func (u Usage) messagesUsage() messagesUsage {
	return messagesUsage{
		InputTokens:              u.Input,
		OutputTokens:             u.Output,
		CacheReadInputTokens:     u.CacheRead,
		CacheCreationInputTokens: u.CacheWrite,
	}
}
