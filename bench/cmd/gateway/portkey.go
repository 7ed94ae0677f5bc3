package main

import (
	"context"
	"net/http"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
)

// portkeyGateway is a running Portkey gateway, as a target.
type portkeyGateway struct {
	*proc.Child
	target target
}

// startPortkey starts the Portkey gateway installed (npm ci) in dir, routing
// to the OpenAI-compatible upstream at upURL.
func startPortkey(dir, upURL string) (*portkeyGateway, error) {
	c, base, err := proc.StartPortkey(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	return &portkeyGateway{Child: c, target: target{
		name: "portkey",
		url:  base + "/v1/chat/completions",
		header: http.Header{
			"X-Portkey-Provider":    {"openai"},
			"X-Portkey-Custom-Host": {upURL},
			"Authorization":         {"Bearer sk-bench"},
		},
	}}, nil
}
