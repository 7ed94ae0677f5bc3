package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3/shared"
)

// TestErrorBody: each wire's error shape, and Anthropic's error type by
// status unless the type given is already one of Anthropic's.
func TestErrorBody(t *testing.T) {
	tests := []struct {
		name     string
		api      API
		status   int
		typ      string
		code     string
		wantType string
		wantCode string
	}{
		{name: "chat", api: Chat, status: 429, typ: "rate_limit_error", code: "insufficient_quota", wantType: "rate_limit_error", wantCode: "insufficient_quota"},
		{name: "responses without code", api: Responses, status: 502, typ: "upstream_error", wantType: "upstream_error"},
		{name: "messages 400", api: Messages, status: 400, typ: "whatever", wantType: "invalid_request_error"},
		{name: "messages 401", api: Messages, status: 401, wantType: "authentication_error"},
		{name: "messages 403", api: Messages, status: 403, typ: "upstream_auth_error", wantType: "permission_error"},
		{name: "messages 404", api: Messages, status: 404, typ: "upstream_model_not_found", wantType: "not_found_error"},
		{name: "messages 413", api: Messages, status: 413, wantType: "request_too_large"},
		{name: "messages 429", api: Messages, status: 429, typ: "rate_limit_error", wantType: "rate_limit_error"},
		{name: "messages 529", api: Messages, status: 529, typ: "fallback_exhausted", wantType: "overloaded_error"},
		{name: "messages 502", api: Messages, status: 502, typ: "upstream_error", wantType: "api_error"},
		{name: "messages own type kept", api: Messages, status: 503, typ: "overloaded_error", wantType: "overloaded_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := ErrorBody(tt.api, tt.status, tt.typ, tt.code, "it broke")
			typ, code, message := errorOracle(t, tt.api, body)
			if typ != tt.wantType || code != tt.wantCode || message != "it broke" {
				t.Errorf("got %q %q %q, want %q %q it broke\n%s", typ, code, message, tt.wantType, tt.wantCode, body)
			}
			if gotType, gotCode, gotMessage := ErrorMessage(body); gotType != typ || gotCode != code || gotMessage != message {
				t.Errorf("ErrorMessage = %q %q %q, want %q %q %q", gotType, gotCode, gotMessage, typ, code, message)
			}
		})
	}
}

// errorOracle decodes an error body with the wire's SDK type.
func errorOracle(t *testing.T, api API, body []byte) (typ, code, message string) {
	t.Helper()
	if api == Messages {
		var e anthropic.ErrorResponse
		if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" {
			t.Fatalf("anthropic.ErrorResponse: %v %s", err, body)
		}
		return e.Error.Type, "", e.Error.Message
	}
	var e struct{ Error shared.ErrorObject }
	if err := json.Unmarshal(body, &e); err != nil || e.Error.JSON.Param.Raw() != "null" {
		t.Fatalf("shared.ErrorObject: %v %s", err, body)
	}
	return e.Error.Type, e.Error.Code, e.Error.Message
}

// TestErrorMessage reads upstream error bodies of every shape.
func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name               string
		body               string
		typ, code, message string
	}{
		{name: "openai", body: `{"error":{"message":"m","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			typ: "invalid_request_error", code: "context_length_exceeded", message: "m"},
		{name: "anthropic", body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			typ: "overloaded_error", message: "Overloaded"},
		{name: "numeric code", body: `{"error":{"message":"m","code":400}}`, code: "400", message: "m"},
		{name: "flat", body: `{"object":"error","message":"m","type":"BadRequestError","code":400}`,
			typ: "BadRequestError", code: "400", message: "m"},
		{name: "responses response.failed event", body: `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_1","status":"failed","error":{"code":"context_length_exceeded","message":"m"}}}`,
			code: "context_length_exceeded", message: "m"},
		{name: "responses error event", body: `{"type":"error","code":"server_error","message":"m","param":null,"sequence_number":1}`,
			code: "server_error", message: "m"},
		{name: "string error", body: `{"error":"bad thing"}`, message: "bad thing"},
		{name: "null error", body: `{"error":null,"message":"m"}`, message: "m"},
		{name: "not JSON", body: " upstream connect error \n", message: "upstream connect error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, code, message := ErrorMessage([]byte(tt.body))
			if typ != tt.typ || code != tt.code || message != tt.message {
				t.Errorf("got %q %q %q, want %q %q %q", typ, code, message, tt.typ, tt.code, tt.message)
			}
		})
	}
}

// TestContextOverflow recognises context-window errors of both wires, and
// OverflowBody says it in the form the client's tools act on.
func TestContextOverflow(t *testing.T) {
	tests := []struct {
		name string
		api  API
		body string
		want bool
	}{
		{name: "openai code", api: Chat, body: `{"error":{"message":"x","code":"context_length_exceeded"}}`, want: true},
		{name: "openai message", api: Responses, body: `{"error":{"message":"This model's maximum context length is 128000 tokens."}}`, want: true},
		{name: "anthropic", api: Messages, body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, want: true},
		{name: "input too long", api: Messages, body: `{"type":"error","error":{"type":"invalid_request_error","message":"Input is too long for requested model."}}`, want: true},
		{name: "anthropic input and max_tokens over the window", api: Messages, body: `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 188240 + 21333 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`, want: true},
		{name: "llama.cpp", api: Chat, body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, want: true},
		{name: "vllm", api: Chat, body: `{"object":"error","message":"Too many tokens in the prompt","code":400}`, want: true},
		{name: "responses stream's response.failed", api: Responses, body: `{"type":"response.failed","response":{"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}`, want: true},
		{name: "responses stream's error event", api: Responses, body: `{"type":"error","code":"context_length_exceeded","message":"x","sequence_number":1}`, want: true},
		{name: "responses stream's other failure", api: Responses, body: `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`, want: false},
		{name: "other 400", api: Chat, body: `{"error":{"message":"Invalid value for temperature","code":"invalid_value"}}`, want: false},
		{name: "anthropic overload", api: Messages, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, want: false},
		{name: "empty", api: Chat, body: ``, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ContextOverflow([]byte(tt.body)); got != tt.want {
				t.Errorf("ContextOverflow = %v, want %v", got, tt.want)
			}
		})
	}
	for _, api := range []API{Chat, Responses, Messages} {
		body := OverflowBody(api)
		typ, code, message := errorOracle(t, api, body)
		overflowed := code == "context_length_exceeded" || api == Messages && strings.Contains(message, "prompt is too long")
		if typ != "invalid_request_error" || !overflowed || !ContextOverflow(body) {
			t.Errorf("OverflowBody(%s) = %s", api, body)
		}
	}
}

func ExampleErrorBody() {
	fmt.Println(string(ErrorBody(Messages, 529, "fallback_exhausted", "fallback_exhausted", "every model of the chain is unavailable")))
	fmt.Println(string(ErrorBody(Chat, 400, "invalid_request_error", "", "bad request")))
	// Output:
	// {"type":"error","error":{"type":"overloaded_error","message":"every model of the chain is unavailable"}}
	// {"error":{"message":"bad request","type":"invalid_request_error","param":null,"code":null}}
}
