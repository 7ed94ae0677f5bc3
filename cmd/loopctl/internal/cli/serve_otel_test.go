package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// collector is a local OTLP endpoint: over HTTP it decodes every protobuf
// export request it gets on /v1/traces; over gRPC it is a TraceService.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	url  string
	mu   sync.Mutex
	reqs []*coltracepb.ExportTraceServiceRequest
	bad  []string // what it could not take
}

// Export is the gRPC TraceService's method.
func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// newCollector starts a collector on protocol (http/protobuf or grpc).
func newCollector(t *testing.T, protocol string) *collector {
	c := &collector{}
	if protocol == "grpc" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(srv, c)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(srv.Stop)
		c.url = "http://" + ln.Addr().String()
		return c
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := &coltracepb.ExportTraceServiceRequest{}
		err := proto.Unmarshal(b, req)
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			c.bad = append(c.bad, fmt.Sprintf("%s %s (%s): %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c.reqs = append(c.reqs, req)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// span is a received span with its resource's service name and its
// attributes as Go values.
type span struct {
	*tracepb.Span
	service string
	attrs   map[string]any
}

func (c *collector) spans() []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []span
	for _, req := range c.reqs {
		for _, rs := range req.ResourceSpans {
			service := values(rs.Resource.GetAttributes())["service.name"]
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out = append(out, span{Span: s, service: fmt.Sprint(service), attrs: values(s.Attributes)})
				}
			}
		}
	}
	return out
}

func values(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = v.BoolValue
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}

// otelEnv points the OTLP exporter at c over protocol with nothing else
// set, and a batch delay no test waits out: what arrives was flushed at
// shutdown.
func otelEnv(t *testing.T, c *collector, protocol string) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_EXPORTER_OTLP_HEADERS"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)  // unset, not empty: the SDK warns of an empty OTEL_TRACES_SAMPLER
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.url)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
}

// TestServeExportsSpans: with OTEL_EXPORTER_OTLP_ENDPOINT set, serve
// exports a server span per client request and a client span per upstream
// attempt under it, with the GenAI semantic conventions' attributes and the
// breaker's decisions, over OTLP/HTTP protobuf, flushed when serve stops.
// Here a failover: the primary is rate-limited, the backup serves. Over
// both protocols: http/protobuf (the default) and grpc.
func TestServeExportsSpans(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) { exportSpans(t, protocol) })
	}
}

// exportSpans runs one failover through serve with OTLP on protocol and
// checks the spans the collector got.
func exportSpans(t *testing.T, protocol string) {
	c := newCollector(t, protocol)
	otelEnv(t, c, protocol)
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"gpt-a": llmtest.Always(llmtest.Reply{Fault: &llmtest.Fault{Status: 429}}),
		"gpt-b": llmtest.Always(llmtest.Reply{Text: "from b", Usage: llmtest.Usage{InputTokens: 12, OutputTokens: 5}}),
	}))
	defer up.Close()
	cfg := gateway.Config{Upstreams: []gateway.Upstream{{Name: "openai", BaseURL: up.BaseURL(), APIKey: "sk-up"}},
		Models: []gateway.Model{{Name: "smart", Primary: "openai/gpt-a", Chain: []string{"openai/gpt-b"}}}}
	addr, stop, code := startServe(t, serveSettings{cfg: cfg, logFormat: "text", grace: time.Second}, io.Discard, io.Discard)
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if got := len(c.spans()); got != 0 {
		t.Fatalf("%d spans exported before serve stopped; the batch delay is an hour", got)
	}
	stop()
	if got := <-code; got != ExitOK {
		t.Fatalf("serve exited %d", got)
	}
	if len(c.bad) > 0 {
		t.Fatalf("the collector refused: %v", c.bad)
	}
	spans := c.spans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3 (a request, two attempts): %v", len(spans), spans)
	}
	checkRequestSpan(t, spans)
}

// checkRequestSpan checks the request span and its two attempt spans.
func checkRequestSpan(t *testing.T, spans []span) {
	t.Helper()
	byName := map[string]span{}
	for _, s := range spans {
		byName[s.Name] = s
		if s.service != "loopctl" {
			t.Errorf("span %s: service.name %q", s.Name, s.service)
		}
	}
	req, a, b := byName["chat smart"], byName["chat gpt-a"], byName["chat gpt-b"]
	if req.Span == nil || a.Span == nil || b.Span == nil {
		t.Fatalf("span names: %v; want chat smart, chat gpt-a, chat gpt-b", byName)
	}
	if req.Kind != tracepb.Span_SPAN_KIND_SERVER || a.Kind != tracepb.Span_SPAN_KIND_CLIENT || b.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kinds: request %v, attempts %v %v", req.Kind, a.Kind, b.Kind)
	}
	for _, s := range []span{a, b} {
		if string(s.ParentSpanId) != string(req.SpanId) || string(s.TraceId) != string(req.TraceId) {
			t.Errorf("%s is not a child of the request span", s.Name)
		}
	}
	if !(a.StartTimeUnixNano <= a.EndTimeUnixNano && a.EndTimeUnixNano <= b.StartTimeUnixNano && b.EndTimeUnixNano <= req.EndTimeUnixNano) {
		t.Errorf("times: attempt a %d-%d, b %d-%d, request ends %d", a.StartTimeUnixNano, a.EndTimeUnixNano, b.StartTimeUnixNano, b.EndTimeUnixNano, req.EndTimeUnixNano)
	}
	want := map[string]map[string]any{
		"chat smart": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "smart", "gen_ai.response.model": "gpt-b",
			"gen_ai.usage.input_tokens": int64(12), "gen_ai.usage.output_tokens": int64(5), "http.response.status_code": int64(200),
			"loopctl.api": "chat", "loopctl.outcome": "success", "loopctl.attempts": int64(2), "loopctl.served": "openai/gpt-b"},
		"chat gpt-a": {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system": "openai",
			"gen_ai.request.model": "gpt-a", "server.address": "127.0.0.1", "http.response.status_code": int64(429),
			"loopctl.attempt": int64(1), "loopctl.probe": false, "loopctl.hedge": false, "loopctl.model": "smart", "loopctl.target": "openai/gpt-a",
			"loopctl.breaker.state": "primary", "loopctl.breaker.routed_model": "openai/gpt-a",
			"loopctl.verdict": "failure", "loopctl.failure.kind": "rate-limit", "error.type": "rate-limit"},
		"chat gpt-b": {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-b",
			"gen_ai.response.model": "gpt-b", "gen_ai.usage.input_tokens": int64(12), "gen_ai.usage.output_tokens": int64(5),
			"loopctl.attempt": int64(2), "loopctl.probe": false, "loopctl.breaker.state": "primary", "loopctl.verdict": "success",
			"http.response.status_code": int64(200)},
	}
	for name, attrs := range want {
		for k, v := range attrs {
			if got := byName[name].attrs[k]; got != v {
				t.Errorf("%s: %s = %v (%T), want %v (%T)", name, k, got, got, v, v)
			}
		}
	}
	if a.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || b.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR || req.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("statuses: request %v, a %v, b %v; want only the failed attempt's an error", req.Status, a.Status, b.Status)
	}
	if _, ok := b.attrs["loopctl.failure.kind"]; ok {
		t.Errorf("the served attempt has a failure kind")
	}
}

// TestOTelProtocol: tracing is on only with an OTLP endpoint; the
// protocol is http/protobuf by default, the traces variables win, and a
// value serve cannot honour is an error naming the variable and the value.
func TestOTelProtocol(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string // the protocol; "": off
		err  string // the error contains
	}{
		{env: nil},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, want: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, want: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: "grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, want: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json"`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin"`},
	} {
		got, err := otelProtocol(func(k string) string { return tc.env[k] })
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && (!strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrOTelSetting)) {
			t.Errorf("%v: %q, %v; want %q, an error with %q", tc.env, got, err, tc.want, tc.err)
		}
	}
}

// TestServeTracingOff: without an endpoint there is no Observer; with one
// serve cannot honour, serve --check exits 2 naming it.
func TestServeTracingOff(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	obs, stop, err := startTracing(t.Context(), func(string) string { return "" })
	if obs != nil || err != nil {
		t.Fatalf("tracing with no endpoint: %v, %v", obs, err)
	}
	stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	cfg := writeConfig(t, "upstreams:\n  - {name: openai, base_url: https://api.openai.com/v1, api_key_env: OPENAI_API_KEY}\nmodels:\n  - {name: m, primary: openai/gpt-5}\n")
	code, _, errs := run(t, "serve", "--check", "--config", cfg)
	if code != ExitUsage || !strings.Contains(errs, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
