// Package tracing records the runs of an agent.Agent as OpenTelemetry spans,
// with the attributes of the OpenTelemetry GenAI semantic conventions.
//
// The span tree of one run:
//
//	invoke_agent                       the run                         ([Tracer.Run])
//	├── turn 1                         one turn (one model answer)
//	│   ├── chat gpt-a                 a model attempt of the turn     (the agent's events)
//	│   │   └── request gpt-a          each request the retry ladder sends ([Tracer.Provider])
//	│   ├── chat gpt-b                 the next attempt, after a failover
//	│   │   └── request gpt-b
//	│   └── execute_tool search        each tool call                  (the agent's events)
//	└── turn 2 …
//
// Attempt and request spans carry gen_ai.operation.name "chat",
// gen_ai.request.model, gen_ai.response.model and (on success)
// gen_ai.usage.input_tokens, gen_ai.usage.output_tokens and
// gen_ai.response.finish_reasons; tool spans carry
// gen_ai.operation.name "execute_tool", gen_ai.tool.name and
// gen_ai.tool.call.id; the run span carries gen_ai.operation.name
// "invoke_agent" and the run's total usage. Failed attempts and tool calls
// have status Error. Retries are span events ("retry") on their attempt, and
// every breaker transition is a span event ("breaker.transition", with
// loopctl.breaker.kind, from and to states and models) on the run span.
//
// Wiring: the Tracer's [Tracer.OnEvent] goes into agent.Config.OnEvent, its
// [Tracer.Provider] wraps the Config's providers (optional: it adds the
// request spans; the attempt spans take the response model, falling back to
// the routed model, and the usage from agent.EventTurnFinished), and runs go
// through [Tracer.Run]:
//
//	tr := tracing.New(otel.GetTracerProvider())
//	cfg.OnEvent = tr.OnEvent
//	cfg.Provider = tr.Provider(p)
//	a, _ := agent.New(cfg)
//	res, err := tr.Run(ctx, a, msgs)
//
// Runs are told apart by their run id (agent.Event.RunID and the id
// agent.RunIDFromContext finds in the provider's context), so one Tracer
// serves concurrent runs; events of runs not started with [Tracer.Run] are
// ignored.
//
// A Tracer is safe for concurrent use.
package tracing
