// Package wire translates model requests, answers and streams between the
// three wires the gateway serves: OpenAI chat completions, the OpenAI
// Responses API and Anthropic Messages (docs/GATEWAY.md §8).
//
// Every wire has one request decoder into the neutral form ([Request]) and
// one encoder out of it, so every pair works; answers go through
// [Response] the same way, and streams through a [Transcoder] that turns
// one upstream event into zero or more client events as they arrive.
// [Translate] is the entry point: it decodes a client's request, encodes
// it for one chain entry ([Target]) and returns a [Translation] that
// translates that entry's answer or stream back.
//
// It also holds what the gateway knows of each wire's streams, for
// same-wire traffic too: [Classify] and [After] tell a stream event held
// back before the commit point from content, the end marker and an error
// event; [Broken] gives the events that end a stream broken after its
// first content; [ErrorBody] the wire's error shape. Translation never
// touches same-wire traffic.
//
// The package is pure: functions over bytes, no I/O, no goroutines.
package wire
