package gateway

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/pool"
)

// What a pool member's answer says it has left, and what a request will
// take of it: a member at its rate limit is passed over before it answers
// 429, rather than after (docs/GATEWAY.md §11.3; SEMANTICS §9.3 rule 5).

// limitHeader names the two headers of one rate-limit figure: what is left
// and when it resets, as a duration from the answer (OpenAI, Azure) or an
// RFC 3339 time (Anthropic).
type limitHeader struct {
	remaining, reset string // canonical names: the transport canonicalizes what it reads
	absolute         bool   // reset is an RFC 3339 time, else a Go-like duration from now
}

// The figures headroomOf reads. Every upstream kind's answers are read for
// every name (openai, anthropic, and Bedrock, Vertex and Azure, which
// relay their model's headers under the same names), so an upstream's kind
// never hides a figure it sends.
var (
	openaiRequests    = limitHeader{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests", false}
	openaiTokens      = limitHeader{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens", false}
	anthropicRequests = limitHeader{"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset", true}
	anthropicTokens   = limitHeader{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset", true}
	anthropicInput    = limitHeader{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset", true}
	anthropicOutput   = limitHeader{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset", true}
)

// maxReset is the furthest reset a figure may name: a provider's limits
// reset within a day (per minute, per day), and a member kept out until a
// later reset would send no request whose answer could correct it.
const maxReset = 24 * time.Hour

// headroomOf returns what an answer with headers h, arriving at now, says
// its member has left: requests from x-ratelimit-*-requests (a duration
// reset, relative to now) or anthropic-ratelimit-requests-* (an RFC 3339
// reset); tokens from x-ratelimit-*-tokens or anthropic-ratelimit-tokens-*;
// input and output tokens from anthropic-ratelimit-{input,output}-tokens-*.
// Where both wires' figures of one kind are present, OpenAI's is read. A
// figure is the zero Limit (ignored) when its remaining count is missing,
// negative or does not parse, when its reset is missing (Azure sends some
// remaining counts alone: they say nothing of when the limit ends), does
// not parse or is more than maxReset away. A reset in the past is passed
// on: the pool restores that figure. It allocates nothing when h carries
// none of these headers.
func headroomOf(h http.Header, now time.Time) pool.Headroom {
	return pool.Headroom{
		Requests:     figureOf(h, now, openaiRequests, anthropicRequests),
		Tokens:       figureOf(h, now, openaiTokens, anthropicTokens),
		InputTokens:  figureOf(h, now, anthropicInput, limitHeader{}),
		OutputTokens: figureOf(h, now, anthropicOutput, limitHeader{}),
	}
}

// figureOf reads the figure named by a, or by b when a's remaining header
// is absent (b's remaining "" names none).
func figureOf(h http.Header, now time.Time, a, b limitHeader) pool.Limit {
	n, ok := headerValue(h, a.remaining)
	if !ok {
		if b.remaining == "" {
			return pool.Limit{}
		}
		if n, ok = headerValue(h, b.remaining); !ok {
			return pool.Limit{}
		}
		a = b
	}
	left, err := strconv.ParseInt(n, 10, 64)
	if err != nil || left < 0 {
		return pool.Limit{}
	}
	r, ok := headerValue(h, a.reset)
	if !ok {
		return pool.Limit{}
	}
	var reset time.Time
	if a.absolute {
		reset, ok = absoluteReset(r)
	} else {
		reset, ok = relativeReset(r, now)
	}
	if !ok || reset.Sub(now) > maxReset {
		return pool.Limit{}
	}
	return pool.Limit{Remaining: left, Reset: reset}
}

// headerValue returns the first value of header k (canonical) of h, looked
// up without canonicalizing k again.
func headerValue(h http.Header, k string) (string, bool) {
	if v := h[k]; len(v) > 0 {
		return v[0], true
	}
	return "", false
}

// relativeReset parses an OpenAI reset, a duration from now as Go writes
// one ("1s", "6m0s", "20ms", "1h2m3.5s"): the time it names.
func relativeReset(v string, now time.Time) (time.Time, bool) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return time.Time{}, false
	}
	return now.Add(d), true
}

// absoluteReset parses an Anthropic reset, an RFC 3339 time (fractional
// seconds allowed).
func absoluteReset(v string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// inputEstimate returns a request body's estimated input tokens as §8.8's
// count_tokens estimate counts them (tokenEstimate): whole, the entire
// body's, compared with an OpenAI-style tokens limit; and uncached, the
// tokens after the body's last cache_control breakpoint (the whole
// estimate when it has none), compared with Anthropic's input-tokens
// limit, which does not count the cached prefix. An empty body estimates
// to nothing (zero: not estimated).
func inputEstimate(body []byte) (whole, uncached int64) {
	if len(bytes.TrimSpace(body)) == 0 {
		return 0, 0
	}
	whole = tokenEstimate(body)
	if end := lastBreakpoint(body); end >= 0 {
		return whole, tokenEstimate(body[end:])
	}
	return whole, whole
}

// cacheControlKey is the key of a cache breakpoint, as a JSON literal.
var cacheControlKey = []byte(`"cache_control"`)

// lastBreakpoint returns the index after the object of the body's last
// "cache_control" key (a breakpoint: the prompt is cached up to there), or
// -1 when it has none. A "cache_control" that is a string value, not a
// key, or whose value is not an object marks nothing. An unescaped quote in
// JSON is always a string's delimiter, so a match with an unescaped first
// quote is the string "cache_control" itself, never text inside another.
func lastBreakpoint(body []byte) int {
	for end := len(body); ; {
		i := bytes.LastIndex(body[:end], cacheControlKey)
		if i < 0 {
			return -1
		}
		end = i
		if escaped(body, i) {
			continue
		}
		j := wire.SkipSpace(body, i+len(cacheControlKey))
		if j == len(body) || body[j] != ':' {
			continue
		}
		if j = wire.SkipSpace(body, j+1); j < len(body) && body[j] == '{' {
			if e := wire.SkipValue(body, j); e <= len(body) && body[e-1] == '}' {
				return e
			}
		}
	}
}

// escaped reports whether the quote at body[i] follows an odd run of
// backslashes.
func escaped(body []byte, i int) bool {
	n := 0
	for p := i - 1; p >= 0 && body[p] == '\\'; p-- {
		n++
	}
	return n%2 == 1
}
