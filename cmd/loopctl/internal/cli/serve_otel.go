package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/loopctl/loopctl-go/gateway"
)

// ErrOTelSetting is the error of an OTEL_* variable whose value serve
// cannot honour; the error names the variable and its value.
var ErrOTelSetting = errors.New("unsupported OpenTelemetry setting")

// otelFlushTimeout bounds the flush of the spans still buffered when
// serve stops: a collector that is down must not hold the exit.
const otelFlushTimeout = 5 * time.Second

// preflight refuses what serve cannot start with: an unsafe config
// (safety) or an OTEL_* setting it cannot honour (otelProtocol).
func preflight(cfg gateway.Config) error {
	if err := safety(cfg); err != nil {
		return err
	}
	_, err := otelProtocol(os.Getenv)
	return err
}

// otelProtocol is the OTLP protocol the environment asks for traces
// ("": tracing is off). Tracing is on when an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), the
// SDK is not disabled (OTEL_SDK_DISABLED=true) and OTEL_TRACES_EXPORTER is
// unset or otlp (none: off). The protocol is the variables' (the traces
// one wins): http/protobuf (the default) or grpc, the official OTLP
// exporters'; any other (http/json) is an error naming its value, so that
// a collector is not silently sent nothing.
func otelProtocol(getenv func(string) string) (string, error) {
	if getenv("OTEL_SDK_DISABLED") == "true" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return "", nil
	}
	switch e := getenv("OTEL_TRACES_EXPORTER"); e {
	case "", "otlp":
	case "none":
		return "", nil
	default:
		return "", fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q: serve exports traces with otlp (or none)", ErrOTelSetting, e)
	}
	name, p := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p == "" {
		name, p = "OTEL_EXPORTER_OTLP_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return p, nil
	}
	return "", fmt.Errorf("%w: %s=%q: serve exports OTLP over http/protobuf (the default) or grpc", ErrOTelSetting, name, p)
}

// tracingFromEnv is startTracing with the process's environment; when the
// exporter cannot be built it warns on stderr and serve goes on without
// tracing (an OTEL_* value serve cannot honour was refused before, by
// preflight).
func tracingFromEnv(ctx context.Context, stderr io.Writer) (gateway.Observer, func()) {
	obs, stop, err := startTracing(ctx, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl serve: warning: tracing off: %v\n", err)
		return nil, func() {}
	}
	return obs, stop
}

// startTracing returns the gateway's Observer exporting a span per
// request and per upstream attempt through the OTLP exporter of the
// protocol (otlptracehttp, or otlptracegrpc), and
// the function that flushes and stops it; a nil Observer and a no-op when
// tracing is off (no exporter, no cost per request). The exporter, the
// batch span processor and the sampler read the rest of the standard
// OTEL_* variables themselves (endpoint, headers, timeout, compression,
// certificates, OTEL_BSP_*, OTEL_TRACES_SAMPLER); the resource is
// service.name loopctl and its version, which OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override.
func startTracing(ctx context.Context, getenv func(string) string) (gateway.Observer, func(), error) {
	proto, err := otelProtocol(getenv)
	if err != nil || proto == "" {
		return nil, func() {}, err
	}
	var exp sdktrace.SpanExporter
	if proto == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{semconv.ServiceName("loopctl")}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(bi.Main.Version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, nil, fmt.Errorf("the OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), otelFlushTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx) // flushes the spans still buffered
	}
	return newSpanObserver(tp), stop, nil
}
