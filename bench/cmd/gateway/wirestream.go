package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The other wires the gateway serves, measured streaming: the time to the
// first content byte (the Responses API's first output_text.delta, the
// Messages API's first content_block_delta), since the gateway holds back
// every event before the first content (GATEWAY.md §4, §6) while a proxy
// relays the first event at once.

// otherWire is one wire: its path under /v1, loopctl's model for it, the
// request body, and the end marker the whole stream must carry.
type otherWire struct {
	name, path, model, body, end string
}

var otherWires = []otherWire{
	{name: "responses", path: "/responses", model: "bench", end: "response.completed",
		body: `{"model":"bench","input":"ping","stream":true}`},
	{name: "messages", path: "/messages", model: "bench-messages", end: "message_stop",
		body: `{"model":"bench-messages","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"ping"}]}`},
}

// wireTargets are the targets of a wire: direct, the proxy and loopctl
// (Portkey is measured on chat completions only).
func wireTargets(w otherWire, ts []target) []target {
	var out []target
	for _, t := range ts {
		if t.name == "portkey" {
			continue
		}
		base := strings.TrimSuffix(t.url, "/chat/completions")
		out = append(out, target{name: t.name, url: base + w.path, header: t.header})
	}
	return out
}

// firstContent streams w's request to url and returns the time until the
// first content ("po", the first delta) has been read; the rest of the
// stream is read and must carry w's end marker.
func firstContent(c *http.Client, t target, w otherWire) (time.Duration, error) {
	start := time.Now()
	res, err := postJSON(c, t.url, []byte(w.body), true)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var seen bytes.Buffer
	br := bufio.NewReader(res.Body)
	var ttfc time.Duration
	for ttfc == 0 {
		line, err := br.ReadSlice('\n')
		seen.Write(line)
		if bytes.Contains(line, []byte(`"po"`)) {
			ttfc = time.Since(start)
		} else if err != nil {
			return 0, fmt.Errorf("no content in %.300q: %v", seen.String(), err)
		}
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return 0, err
	}
	if !bytes.Contains(rest, []byte(w.end)) {
		return 0, fmt.Errorf("the stream ends without %s: %.300q", w.end, rest)
	}
	return ttfc, nil
}

// measureWires prints, per other wire, each target's median time to first
// content and what it adds over direct, from interleaved rounds as for chat;
// it returns loopctl's added median per wire.
func measureWires(ts []target, rounds, n int) map[string]time.Duration {
	added := map[string]time.Duration{}
	fmt.Printf("\nOther wires, streaming (time to first content): %d interleaved rounds x %d requests per target\n", rounds, n)
	for _, w := range otherWires {
		wt := wireTargets(w, ts)
		lat, errs := map[string][]time.Duration{}, map[string][]string{}
		clients := make([]*http.Client, len(wt))
		for i := range wt {
			clients[i] = newClient()
			for range 20 { // warm up
				firstContent(clients[i], wt[i], w)
			}
		}
		for r := range rounds {
			for j := range wt {
				i := (r + j) % len(wt)
				for range n {
					d, err := firstContent(clients[i], wt[i], w)
					if err != nil {
						errs[wt[i].name] = append(errs[wt[i].name], err.Error())
						continue
					}
					lat[wt[i].name] = append(lat[wt[i].name], d)
				}
			}
		}
		for _, c := range clients {
			c.CloseIdleConnections()
		}
		added[w.name] = printWire(w, wt, lat, errs)
	}
	return added
}

// printWire prints one wire's figures and returns loopctl's added median.
func printWire(w otherWire, wt []target, lat map[string][]time.Duration, errs map[string][]string) time.Duration {
	fmt.Printf("  POST /v1%s\n", w.path)
	added := printTargets(wt, lat, errs)
	if p := added["proxy"]; p > 0 && len(lat["loopctl"]) > 0 {
		fmt.Printf("    loopctl added / proxy added = %.2fx (goal <= 1.2x)\n", float64(added["loopctl"])/float64(p))
	}
	return added["loopctl"]
}

// first returns the first of errs, or "none".
func first(errs []string) string {
	if len(errs) == 0 {
		return "none"
	}
	return errs[0]
}
