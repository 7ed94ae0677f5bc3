package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// bedrockRows are GATEWAY §10.2's error rows: the Bedrock model that
// answers it (clouds_fakes_test.go's scripted names), whether the request
// streams, and what the client sees: served by the backup, or the
// client's 400 with no verdict, or the stream's error event after content.
var bedrockRows = []struct {
	name, model string
	stream      bool
	want        string // "backup", "client400", "brokenAfterContent"
	kind        fallback.Kind
	timeout     bool
}{
	{"throttling", "err-ThrottlingException-429", false, "backup", fallback.RateLimit, false},
	{"quota", "err-ServiceQuotaExceededException-429", false, "backup", fallback.Quota, false},
	{"service unavailable", "err-ServiceUnavailableException-503", false, "backup", fallback.Transient, false},
	{"model not ready (Bedrock's 429, transient)", "err-ModelNotReadyException-429", false, "backup", fallback.Transient, false},
	{"internal server", "err-InternalServerException-500", true, "backup", fallback.Transient, false},
	{"model timeout", "err-ModelTimeoutException-408", false, "backup", fallback.Transient, true},
	{"access denied", "err-AccessDeniedException-403", false, "backup", fallback.Transient, false},
	{"resource not found", "err-ResourceNotFoundException-404", true, "backup", fallback.Transient, false},
	{"validation", "err-ValidationException-400", false, "client400", 0, false},
	{"validation, streamed", "err-ValidationException-400", true, "client400", 0, false},
	{"in-stream throttling before content", "instream-early-throttlingException", true, "backup", fallback.RateLimit, false},
	{"in-stream internal error before content", "instream-early-internalServerException", true, "backup", fallback.Transient, false},
	{"in-stream exception after content", "instream-late-modelStreamErrorException", true, "brokenAfterContent", fallback.Transient, false},
	{"in-stream throttling after content", "instream-late-throttlingException", true, "brokenAfterContent", fallback.RateLimit, false},
}

func TestBedrockErrorRows(t *testing.T) {
	useFakeAWS(t)
	for _, tc := range bedrockRows {
		t.Run(tc.name, func(t *testing.T) {
			br := newBedrockFake(t, "us-east-1", weather)
			an := llmtest.NewAnthropic(weather)
			t.Cleanup(an.Close)
			// A transient failure trips the primary after three (the breaker's
			// default), a rate limit at once: either way the backup serves.
			srv := cloudGateway(t, bedrockConfig(br.URL, an.BaseURL(), "us-east-1", tc.model, true), Options{})
			a := postTo(t, srv, "/v1/messages", messagesBody("m", tc.stream))
			backup := len(an.Requests())
			switch tc.want {
			case "backup":
				if a.status != 200 || a.header.Get("X-Loopctl-Model") != "an/backup" || backup != 1 {
					t.Fatalf("%d from %q (backup requests %d): %s", a.status, a.header.Get("X-Loopctl-Model"), backup, a.body)
				}
			case "client400":
				if a.status != 400 || a.anType() != "invalid_request_error" || !strings.Contains(a.body, "ValidationException") || backup != 0 {
					t.Fatalf("%d %s (backup requests %d): want the client's 400 in Anthropic's shape", a.status, a.body, backup)
				}
				if !strings.HasPrefix(a.body, `{"type":"error"`) {
					t.Errorf("body %s: not Anthropic's shape", a.body)
				}
			case "brokenAfterContent":
				if a.status != 200 || !strings.Contains(a.body, "partial ") || !strings.Contains(a.body, "event: error") || strings.Contains(a.body, "message_stop") || backup != 0 {
					t.Fatalf("%d %s (backup requests %d): want the content, then the error event", a.status, a.body, backup)
				}
			}
		})
	}
}

// TestBedrockErrorKinds checks the verdict of each row's error (the kind
// the model breaker records) from the attempt's own error.
func TestBedrockErrorKinds(t *testing.T) {
	useFakeAWS(t)
	gw, err := New(bedrockConfig("http://127.0.0.1:1", "http://127.0.0.1:1", "us-east-1", "x", false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := gw.upstreams["bedrock"].cloud
	for _, tc := range bedrockRows {
		if tc.want == "client400" {
			continue
		}
		var err error
		if name, ok := strings.CutPrefix(tc.model, "err-"); ok {
			typ, status, _ := strings.Cut(name, "-")
			h := http.Header{"X-Amzn-Errortype": {typ + ":http://internal.amazon.com/coral/"}}
			code := map[string]int{"429": 429, "503": 503, "500": 500, "408": 408, "403": 403, "404": 404}[status]
			err = gw.cloudAnswerError(c, &http.Response{StatusCode: code, Header: h}, []byte(`{"message":"m"}`))
		} else {
			err = streamErrorOf(t, tc.model)
		}
		f := failure(err, time.Now())
		if f.Kind != tc.kind || f.Timeout != tc.timeout {
			t.Errorf("%s: verdict %+v, want kind %v timeout %v (error %v)", tc.name, f, tc.kind, tc.timeout, err)
		}
	}
}

// streamErrorOf is the error an in-stream exception of the scripted model
// ends the stream with, read through the gateway's eventstream adapter.
func streamErrorOf(t *testing.T, model string) error {
	t.Helper()
	rec := &frameRecorder{h: http.Header{}}
	bedrockScripted(rec, model, "invoke-with-response-stream")
	resp := &http.Response{Header: http.Header{"Content-Type": {eventstreamType}}, Body: io.NopCloser(&rec.buf)}
	adaptStream(resp)
	st := newStream(resp.Body, messagesEndpoint)
	defer st.release()
	for {
		ev, err := st.next()
		if err != nil {
			t.Fatalf("%s: %v before the error event", model, err)
		}
		if bytes.HasPrefix(ev, []byte("event: error")) {
			return streamLimit(&streamError{payload: string(ev), typ: errorTypeOf(ev)})
		}
	}
}

// errorTypeOf is the error type of a Messages error event.
func errorTypeOf(ev []byte) string {
	_, d, _ := strings.Cut(string(ev), "data: ")
	return answer{body: d}.anType()
}

// frameRecorder is a ResponseWriter that keeps what is written.
type frameRecorder struct {
	h   http.Header
	buf bytes.Buffer
}

func (r *frameRecorder) Header() http.Header         { return r.h }
func (r *frameRecorder) WriteHeader(int)             {}
func (r *frameRecorder) Write(b []byte) (int, error) { return r.buf.Write(b) }

// TestBedrockErrorsInClientShape: Bedrock's errors reach a chat client in
// OpenAI's shape (translated), never as Bedrock sent them.
func TestBedrockErrorsInClientShape(t *testing.T) {
	useFakeAWS(t)
	br := newBedrockFake(t, "us-east-1", weather)
	cfg := bedrockConfig(br.URL, br.URL, "us-east-1", "err-ValidationException-400", false)
	cfg.Models = append(cfg.Models, Model{Name: "throttled", Primary: "bedrock/err-ThrottlingException-429"})
	srv := cloudGateway(t, cfg, Options{})
	for _, tc := range []struct {
		model, typ string
		status     int
	}{{"m", "invalid_request_error", 400}, {"throttled", "rate_limit_error", 429}} {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
			body := chatBody(tc.model, false)
			if path == "/v1/messages" {
				body = messagesBody(tc.model, false)
			}
			a := postTo(t, srv, path, body)
			openAIShape := a.errorField("message") != nil && !strings.HasPrefix(a.body, `{"type":"error"`)
			if a.status != tc.status || strings.HasPrefix(a.body, `{"message"`) || openAIShape != (path == "/v1/chat/completions") {
				t.Errorf("%s %s: %d %s: want %d in the client's wire's shape", path, tc.model, a.status, a.body, tc.status)
			}
			if tc.status == 400 && !strings.Contains(a.body, "ValidationException") {
				t.Errorf("%s: %s: the client's 400 should say what Bedrock refused", path, a.body)
			}
		}
	}
}
