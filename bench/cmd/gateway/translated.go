package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// Translated requests (GATEWAY.md §8.9): a Messages request for model
// "bench", whose only entry is an openai upstream, is translated to chat
// completions and the chat answer back to Messages; the same request for
// "bench-messages", an anthropic upstream on the same scripted process,
// passes through on its own wire. The client's bytes are the same in both,
// so the difference is the translation alone: that same-wire Messages
// pass-through is what the goals compare with. Each loopctl probe's added
// time is taken over the upstream answering directly on the wire loopctl
// sends it on (a translated request reaches the upstream as chat, so over
// the same conversation sent directly as chat); the chat pass-through of
// that conversation is printed for context.

// probe is one kind of request the translated-requests measurement times.
type probe struct {
	name       string // as printed
	url        string
	body       []byte
	wire       string // the answer's wire: "chat" or "messages"
	stream     bool   // timed to the first content; else to the whole answer
	translated bool   // the answer must say x-loopctl-translated: messages->chat
	base       string // the direct probe its added time is taken over ("" for a direct one)
}

// probeGroup is probes timed together, in interleaved rounds.
type probeGroup struct {
	title  string
	probes []probe
}

// Probe names, as printed and as bases.
const (
	directMessages = "direct messages"
	directChat     = "direct chat"
	sameWire       = "loopctl messages (same wire)"
	sameWireChat   = "loopctl chat (same wire)"
	translatedName = "loopctl messages->chat"
)

// translatedGroups are the measurement's three groups against the upstream
// at upBase and loopctl at gwBase (both "http://host:port"): the
// Claude-Code-sized request non-streaming, and streams (a short request
// and the Claude-Code-sized one) to the first content.
func translatedGroups(upBase, gwBase string) []probeGroup {
	c := claudeCodeConversation()
	big := func(stream bool) []probe {
		ps := []probe{
			{name: directMessages, url: upBase + "/v1/messages", body: c.messagesBody("bench", stream), wire: "messages", stream: stream},
			{name: directChat, url: upBase + "/v1/chat/completions", body: c.chatBody("bench", stream), wire: "chat", stream: stream},
			{name: sameWire, url: gwBase + "/v1/messages", body: c.messagesBody("bench-messages", stream), wire: "messages", stream: stream, base: directMessages},
			{name: translatedName, url: gwBase + "/v1/messages", body: c.messagesBody("bench", stream), wire: "messages", stream: stream, translated: true, base: directChat},
		}
		if !stream {
			ps = append(ps, probe{name: sameWireChat, url: gwBase + "/v1/chat/completions", body: c.chatBody("bench", false), wire: "chat", base: directChat})
		}
		return ps
	}
	short := func(model string) []byte {
		return []byte(`{"model":"` + model + `","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"ping"}]}`)
	}
	shortStream := []probe{
		{name: directMessages, url: upBase + "/v1/messages", body: short("bench"), wire: "messages", stream: true},
		{name: directChat, url: upBase + "/v1/chat/completions", body: streamBody, wire: "chat", stream: true},
		{name: sameWire, url: gwBase + "/v1/messages", body: short("bench-messages"), wire: "messages", stream: true, base: directMessages},
		{name: translatedName, url: gwBase + "/v1/messages", body: short("bench"), wire: "messages", stream: true, translated: true, base: directChat},
	}
	kb := func(b []byte) float64 { return float64(len(b)) / 1000 }
	plain := big(false)
	return []probeGroup{
		{title: fmt.Sprintf("Claude-Code-sized request (Messages %.1f KB, as chat %.1f KB), non-streaming (whole answer)", kb(plain[0].body), kb(plain[1].body)), probes: plain},
		{title: "Messages stream, short request (ping), time to first content", probes: shortStream},
		{title: "Messages stream, Claude-Code-sized request, time to first content", probes: big(true)},
	}
}

// send sends p once with c and returns its latency: to the whole answer,
// or for a stream to the first content (the rest is read and checked too).
func (p probe) send(c *http.Client) (time.Duration, error) {
	start := time.Now()
	res, err := postJSON(c, p.url, p.body, p.wire == "messages")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if got := res.Header.Get("X-Loopctl-Translated"); (got == "messages->chat") != p.translated {
		return 0, fmt.Errorf("x-loopctl-translated %q (translated %v)", got, p.translated)
	}
	var d time.Duration
	var all []byte
	if p.stream {
		d, all, err = untilContent(res.Body, start)
	} else {
		all, err = io.ReadAll(res.Body)
		d = time.Since(start)
	}
	if err != nil {
		return 0, err
	}
	return d, p.check(all)
}

// untilContent reads a stream to its first content ("po", the first delta)
// and returns the time to it from start, and the whole stream.
func untilContent(body io.Reader, start time.Time) (time.Duration, []byte, error) {
	var seen bytes.Buffer
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadSlice('\n')
		seen.Write(line)
		if bytes.Contains(line, []byte(`"po"`)) {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("no content in %.300q: %v", seen.String(), err)
		}
	}
	d := time.Since(start)
	_, err := io.Copy(&seen, br)
	return d, seen.Bytes(), err
}

// check reports whether an answer is the scripted one in p's wire.
func (p probe) check(all []byte) error {
	want := map[[2]bool][]string{ // [messages, stream]
		{false, false}: {`"pong"`, `"stop"`},
		{true, false}:  {`"pong"`, `"type":"message"`, `"end_turn"`},
		{false, true}:  {"[DONE]"},
		{true, true}:   {"end_turn", "message_stop"},
	}[[2]bool{p.wire == "messages", p.stream}]
	for _, w := range want {
		if !bytes.Contains(all, []byte(w)) {
			return fmt.Errorf("%s: no %s in %.300q", p.name, w, all)
		}
	}
	return nil
}

// timeProbes runs rounds of n sequential requests per probe, in a rotating
// order, after a warm-up, and returns every probe's latencies and failures.
func timeProbes(ps []probe, rounds, n int) (map[string][]time.Duration, map[string][]string) {
	out, errs := map[string][]time.Duration{}, map[string][]string{}
	clients := make([]*http.Client, len(ps))
	for i := range ps {
		clients[i] = newClient()
		for range 20 {
			if _, err := ps[i].send(clients[i]); err != nil {
				errs[ps[i].name] = append(errs[ps[i].name], "warm-up: "+err.Error())
			}
		}
	}
	for r := range rounds {
		for j := range ps {
			i := (r + j) % len(ps)
			for range n {
				d, err := ps[i].send(clients[i])
				if err != nil {
					errs[ps[i].name] = append(errs[ps[i].name], err.Error())
					continue
				}
				out[ps[i].name] = append(out[ps[i].name], d)
			}
		}
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	return out, errs
}

// groupResult is one group's figures: each probe's median and the median
// it adds over its base (loopctl probes only).
type groupResult struct {
	median, added map[string]time.Duration
}

// ratio is a/b, 0 when b is not positive.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// measureTranslated prints the translated-requests groups, timed in rounds
// of n requests per probe against the direct and loopctl targets of ts, and
// returns their figures (nil without loopctl; a group whose check failed is
// reported and left empty).
func measureTranslated(ts []target, rounds, n int) []groupResult {
	bases := map[string]string{}
	for _, t := range ts {
		bases[t.name] = strings.TrimSuffix(t.url, "/v1/chat/completions")
	}
	if bases["loopctl"] == "" {
		fmt.Printf("\nTranslated requests: skipped (no loopctl)\n")
		return nil
	}
	fmt.Printf("\nTranslated requests (Messages -> chat upstream) next to the same wire: %d interleaved rounds x %d requests per probe\n", rounds, n)
	var out []groupResult
	for _, g := range translatedGroups(bases["direct"], bases["loopctl"]) {
		fmt.Printf("  %s\n", g.title)
		if err := checkProbes(g.probes); err != nil {
			fmt.Printf("    skipped: %v\n", err)
			out = append(out, groupResult{})
			continue
		}
		lat, errs := timeProbes(g.probes, rounds, n)
		out = append(out, printGroup(g, lat, errs, len(out)))
	}
	return out
}

// checkProbes has every probe answer correctly (up to three tries each, as
// for the other targets) before it is timed.
func checkProbes(ps []probe) error {
	for _, p := range ps {
		var err error
		for range 3 {
			if _, err = p.send(newClient()); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

// printGroup prints each probe's median and p90, and over its base the
// median it adds, then the group's ratios against its goal: for the
// non-streaming group (index 0) translated added / same-wire added (goal
// ≤ 1.5×), for the streams the time to first content, translated /
// same-wire (goal ≤ 1.2×), and the same of what they add.
func printGroup(g probeGroup, lat map[string][]time.Duration, errs map[string][]string, index int) groupResult {
	r := groupResult{median: map[string]time.Duration{}, added: map[string]time.Duration{}}
	for _, p := range g.probes {
		if len(lat[p.name]) == 0 {
			fmt.Printf("    %-30s no answer (%d failed requests, first: %s)\n", p.name, len(errs[p.name]), first(errs[p.name]))
			continue
		}
		r.median[p.name] = serve.Quantile(lat[p.name], 0.5)
		fmt.Printf("    %-30s median %8v  p90 %8v", p.name, us(r.median[p.name]), us(serve.Quantile(lat[p.name], 0.9)))
		if b, ok := r.median[p.base]; ok {
			r.added[p.name] = r.median[p.name] - b
			fmt.Printf("  added median %8v (over %s)", us(r.added[p.name]), p.base)
		}
		if e := errs[p.name]; len(e) > 0 {
			fmt.Printf("  (%d failed requests, first: %s)", len(e), e[0])
		}
		fmt.Println()
	}
	tr, sw := r.added[translatedName], r.added[sameWire]
	if index == 0 {
		fmt.Printf("    translated added / same-wire added = %.2fx (goal <= 1.5x); chat pass-through added %v\n",
			ratio(tr, sw), us(r.added[sameWireChat]))
		return r
	}
	fmt.Printf("    translated / same-wire time to first content = %.2fx (goal <= 1.2x); added: %.2fx\n",
		ratio(r.median[translatedName], r.median[sameWire]), ratio(tr, sw))
	return r
}

// printTranslatedSummary prints the summary line of the translated
// requests, if they were measured.
func printTranslatedSummary(rs []groupResult) {
	if len(rs) != 3 {
		return
	}
	tr, sw := rs[0].added[translatedName], rs[0].added[sameWire]
	ttfc := func(r groupResult) (float64, float64) {
		return ratio(r.median[translatedName], r.median[sameWire]), ratio(r.added[translatedName], r.added[sameWire])
	}
	s1, s2 := ttfc(rs[1])
	b1, b2 := ttfc(rs[2])
	fmt.Printf("translated: Claude-Code-sized request added %d µs vs same-wire %d µs (%.2f×, goal ≤ 1.5×); "+
		"stream time to first content %.2f× short, %.2f× Claude-Code-sized (goal ≤ 1.2×; added %.2f×, %.2f×)\n",
		tr.Microseconds(), sw.Microseconds(), ratio(tr, sw), s1, b1, s2, b2)
}

// postJSON posts body to url with c (with anthropic-version when messages
// is set) and returns the response of a 200; any other status is an error
// quoting the start of its body.
func postJSON(c *http.Client, url string, body []byte, messages bool) (*http.Response, error) {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if messages {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 300))
		res.Body.Close()
		return nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, b)
	}
	return res, nil
}
