package main

import (
	"encoding/json"
	"net/http"
)

// portkeyTarget is Portkey with a fallback config primary -> backup, each
// target with its own retry (attempts = loopctl's max_retries, on the
// statuses loopctl's ladder retries, Portkey's own backoff) and
// request_timeout = loopctl's first_byte (Portkey has no breaker).
func portkeyTarget(url string, p pair) target {
	leg := func(u *upstream) map[string]any {
		return map[string]any{
			"provider":        "openai",
			"custom_host":     u.baseURL(),
			"api_key":         "sk-bench",
			"request_timeout": firstByte.Milliseconds(),
			"retry": map[string]any{
				"attempts":        maxRetries,
				"on_status_codes": []int{408, 429, 500, 502, 503, 504, 529},
			},
		}
	}
	cfg, _ := json.Marshal(map[string]any{
		"strategy": map[string]any{"mode": "fallback"},
		"targets":  []any{leg(p.primary), leg(p.backup)},
	})
	return target{name: "portkey", url: url, header: http.Header{"X-Portkey-Config": {string(cfg)}}}
}
