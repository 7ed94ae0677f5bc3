package gateway

import (
	"bytes"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// Refusals that fall back: with on_refusal: fallback, a model's refusal
// before any content is not served; the next entry answers instead
// (docs/GATEWAY.md §8.7).

// refusal reports whether a served attempt is a refusal before any content
// that the model's on_refusal: fallback turns into the next entry's
// answer (§8.7): a whole answer, or a committed stream's held events, on
// the client's wire.
func (x *exchange) refusal(res *result) bool {
	if !x.in.rt.refusals || !x.in.endpoint.translated {
		return false
	}
	if res.stream != nil {
		return refusedStream(x.in.endpoint.wire, res.stream.held.Bytes())
	}
	return wire.Refused(x.in.endpoint.wire, res.body.Bytes())
}

// refusedStream reports whether a committed stream's held events (on wire
// api) end in a refusal before any content: the stream committed at its
// stop, not at a text or a call.
func refusedStream(api wire.API, held []byte) bool {
	switch api {
	case wire.Messages:
		return bytes.Contains(held, []byte(`"stop_reason":"refusal"`)) && !bytes.Contains(held, []byte(`"content_block_delta"`))
	case wire.Chat:
		return bytes.Contains(held, []byte(`"finish_reason":"content_filter"`)) &&
			!bytes.Contains(held, []byte(`"tool_calls"`)) && !hasChatText(held)
	}
	return bytes.Contains(held, []byte(`"content_filter"`)) && !bytes.Contains(held, []byte(`response.output_text.delta`)) &&
		!bytes.Contains(held, []byte(`function_call_arguments.delta`))
}

// hasChatText reports whether chat chunks carry non-empty content.
func hasChatText(held []byte) bool {
	for rest := held; ; {
		i := bytes.Index(rest, []byte(`"content":"`))
		if i < 0 {
			return false
		}
		rest = rest[i+len(`"content":"`):]
		if len(rest) > 0 && rest[0] != '"' {
			return true
		}
	}
}
