package main

import (
	"encoding/json"
	"net/http"
)

// portkeyRetries is the retry attempts of each of Portkey's targets, on the
// statuses loopctl's ladder retries (Portkey's own backoff).
const portkeyRetries = 3

// portkeyTarget is Portkey in its loadbalance mode over trio t: equal
// weights, each target with its key, its retries on and request_timeout =
// loopctl's first_byte (Portkey has no breaker and no affinity).
func portkeyTarget(base string, t trio) target {
	var targets []any
	for _, m := range t {
		provider, host := "openai", m.baseURL()
		if m.w == messages {
			provider, host = "anthropic", m.baseURL()+"/v1"
		}
		targets = append(targets, map[string]any{
			"provider":        provider,
			"custom_host":     host,
			"api_key":         m.key,
			"weight":          1,
			"request_timeout": firstByte.Milliseconds(),
			"override_params": map[string]any{"model": model},
			"retry": map[string]any{
				"attempts":        portkeyRetries,
				"on_status_codes": []int{408, 429, 500, 502, 503, 504, 529},
			},
		})
	}
	cfg, _ := json.Marshal(map[string]any{"strategy": map[string]any{"mode": "loadbalance"}, "targets": targets})
	return target{name: "portkey", base: base, header: http.Header{"X-Portkey-Config": {string(cfg)}}}
}
