package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/loopctl/loopctl-go/llmtest"
)

// The local fakes of GATEWAY §10.3 (no network): Bedrock checking the
// SigV4 signature of every request and streaming real eventstream frames,
// Vertex AI behind a local OAuth2 token endpoint, Azure OpenAI checking
// api-key. Each serves its scripted answers through an llmtest handler
// (the same scripts as every other fake upstream) after checking the
// cloud's own request rules.

// fakeAWS are the static test credentials of the Bedrock fake and of the
// gateway's SigV4 auth (through the AWS SDK's environment provider).
var fakeAWS = aws.Credentials{AccessKeyID: "AKIDLOOPCTLTEST", SecretAccessKey: "loopctl-test-secret-key", Source: "test"}

// useFakeAWS points the AWS SDK's default chain at fakeAWS, and at nothing
// else on this machine (no shared files, no instance metadata).
func useFakeAWS(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": fakeAWS.AccessKeyID, "AWS_SECRET_ACCESS_KEY": fakeAWS.SecretAccessKey,
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
		"AWS_CONFIG_FILE": dir + "/config", "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
}

// verifySigV4 recomputes the SigV4 signature of r (its body, its signed
// headers, its X-Amz-Date) with the AWS SDK's signer from creds, region
// and service, and reports whether it differs from the one r carries.
func verifySigV4(r *http.Request, body []byte, creds aws.Credentials, region, service string) error {
	got := r.Header.Get("Authorization")
	_, signed, ok := strings.Cut(got, "SignedHeaders=")
	if !ok {
		return errors.New("no SigV4 Authorization header")
	}
	signed, _, _ = strings.Cut(signed, ",")
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %w", err)
	}
	if time.Since(at).Abs() > 5*time.Minute {
		return errors.New("X-Amz-Date is not now")
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	c := &http.Request{Method: r.Method, URL: &u, Host: r.Host, Header: http.Header{}, ContentLength: r.ContentLength}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			c.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, c, hex.EncodeToString(sum[:]), service, region, at); err != nil {
		return err
	}
	if want := c.Header.Get("Authorization"); want != got {
		return fmt.Errorf("signature mismatch:\n got %s\nwant %s", got, want)
	}
	return nil
}

// cloudLog records what a cloud fake got.
type cloudLog struct {
	mu   sync.Mutex
	reqs []cloudRequest
}

// cloudRequest is one request a cloud fake got.
type cloudRequest struct {
	path   string
	header http.Header
	body   map[string]any
}

// add logs r (its body) and returns the body decoded, for the caller to
// change.
func (l *cloudLog) add(r *http.Request, body []byte) map[string]any {
	var m, logged map[string]any
	_ = json.Unmarshal(body, &m)
	_ = json.Unmarshal(body, &logged)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, cloudRequest{path: r.URL.EscapedPath(), header: r.Header.Clone(), body: logged})
	return m
}

func (l *cloudLog) all() []cloudRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]cloudRequest(nil), l.reqs...)
}

// bedrockFake is Amazon Bedrock's runtime: InvokeModel and
// InvokeModelWithResponseStream, SigV4-checked, for the models the
// script answers. A model named err-<Type>-<status> answers that error;
// instream-early-<type> and instream-late-<type> stream an exception
// frame before and after content.
type bedrockFake struct {
	*httptest.Server
	log    cloudLog
	an     *llmtest.Handler
	region string
	bad    int // requests whose signature did not verify
}

func newBedrockFake(t *testing.T, region string, script llmtest.Script) *bedrockFake {
	f := &bedrockFake{an: llmtest.NewAnthropicHandler(script), region: region}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *bedrockFake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := verifySigV4(r, body, fakeAWS, f.region, "bedrock"); err != nil {
		f.log.mu.Lock()
		f.bad++
		f.log.mu.Unlock()
		bedrockAnswer(w, 403, "InvalidSignatureException", err.Error())
		return
	}
	m := f.log.add(r, body)
	rest, ok := strings.CutPrefix(r.URL.Path, "/model/")
	model, action, _ := strings.Cut(rest, "/")
	if !ok || (action != "invoke" && action != "invoke-with-response-stream") {
		bedrockAnswer(w, 404, "UnknownOperationException", "no such operation")
		return
	}
	if m["anthropic_version"] != bedrockVersion || m["model"] != nil || m["stream"] != nil {
		bedrockAnswer(w, 400, "ValidationException", "the body must have anthropic_version "+bedrockVersion+" and no model or stream")
		return
	}
	if bedrockScripted(w, model, action) {
		return
	}
	delete(m, "anthropic_version")
	delete(m, "anthropic_beta")
	m["model"], m["stream"] = model, action != "invoke"
	b, _ := json.Marshal(m)
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, "/v1/messages", bytes.NewReader(b))
	if action == "invoke" {
		f.an.ServeHTTP(w, req)
		return
	}
	f.an.ServeHTTP(&eventstreamWriter{w: w}, req)
}

// bedrockAnswer writes a Bedrock error answer.
func bedrockAnswer(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"message": msg})
	_, _ = w.Write(b)
}

// bedrockScripted answers the models whose names script a Bedrock failure;
// false for any other.
func bedrockScripted(w http.ResponseWriter, model, action string) bool {
	if rest, ok := strings.CutPrefix(model, "err-"); ok {
		typ, status, _ := strings.Cut(rest, "-")
		var code int
		_, _ = fmt.Sscan(status, &code)
		bedrockAnswer(w, code, typ, "scripted "+typ)
		return true
	}
	early, late := strings.HasPrefix(model, "instream-early-"), strings.HasPrefix(model, "instream-late-")
	if !early && !late || action == "invoke" {
		return false
	}
	exc := model[strings.LastIndexByte(model, '-')+1:]
	ew := &eventstreamWriter{w: w}
	ew.Header().Set("Content-Type", "text/event-stream")
	ew.WriteHeader(200)
	_, _ = io.WriteString(ew, `event: message_start
data: {"type":"message_start","message":{"id":"msg_bdrk","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}

`)
	if late {
		_, _ = io.WriteString(ew, `event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial "}}

`)
	}
	ew.exception(exc, "scripted in-stream "+exc)
	return true
}

// eventstreamWriter is a ResponseWriter that turns the Messages SSE an
// llmtest handler writes into Bedrock's eventstream frames, encoded with
// the AWS SDK's encoder: each event a chunk whose payload is {"bytes":
// base64 of its data}; an error event an exception frame.
type eventstreamWriter struct {
	w       http.ResponseWriter
	pending bytes.Buffer
	started bool
}

func (e *eventstreamWriter) Header() http.Header { return e.w.Header() }

func (e *eventstreamWriter) WriteHeader(status int) {
	if e.started {
		return
	}
	e.started = true
	if status == http.StatusOK {
		e.w.Header().Set("Content-Type", eventstreamType)
	}
	e.w.WriteHeader(status)
}

func (e *eventstreamWriter) Write(b []byte) (int, error) {
	if !e.started {
		e.WriteHeader(http.StatusOK)
	}
	if e.w.Header().Get("Content-Type") != eventstreamType {
		return e.w.Write(b) // an error answer
	}
	e.pending.Write(b)
	for {
		ev, rest, ok := bytes.Cut(e.pending.Bytes(), []byte("\n\n"))
		if !ok {
			break
		}
		e.event(ev)
		rest = bytes.Clone(rest)
		e.pending.Reset()
		e.pending.Write(rest)
	}
	return len(b), nil
}

func (e *eventstreamWriter) Flush() { _ = http.NewResponseController(e.w).Flush() }

// event encodes one SSE event as a frame.
func (e *eventstreamWriter) event(ev []byte) {
	var name, data string
	for _, line := range strings.Split(string(ev), "\n") {
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
	if name == "error" {
		e.exception("internalServerException", data)
		return
	}
	payload, _ := json.Marshal(map[string]any{"bytes": []byte(data), "p": "abcdefgh"})
	e.frame("event", ":event-type", "chunk", payload)
}

// exception writes an exception frame of Bedrock's type typ.
func (e *eventstreamWriter) exception(typ, msg string) {
	payload, _ := json.Marshal(map[string]string{"message": msg})
	e.frame("exception", ":exception-type", typ, payload)
}

func (e *eventstreamWriter) frame(kind, key, value string, payload []byte) {
	var hs eventstream.Headers
	hs.Set(":message-type", eventstream.StringValue(kind))
	hs.Set(key, eventstream.StringValue(value))
	hs.Set(":content-type", eventstream.StringValue("application/json"))
	_ = eventstream.NewEncoder().Encode(e.w, eventstream.Message{Headers: hs, Payload: payload})
	e.Flush()
}

// vertexPath parses a Vertex AI Anthropic path: project, region, model
// and method (rawPredict, streamRawPredict).
func vertexPath(p string) (project, region, model, method string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/v1/"), "/")
	if len(parts) != 8 || parts[0] != "projects" || parts[2] != "locations" || parts[4] != "publishers" || parts[5] != "anthropic" || parts[6] != "models" {
		return "", "", "", "", false
	}
	model, method, ok = strings.Cut(parts[7], ":")
	model, _ = url.PathUnescape(model)
	return parts[1], parts[3], model, method, ok
}
