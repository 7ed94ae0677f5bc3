package gateway

import (
	"net/http"
	"strings"
)

// Request headers a client may pass to an upstream (docs/GATEWAY.md §7):
// content negotiation, the wires' version and beta headers, the SDKs'
// x-stainless-* telemetry and idempotency keys. Everything else (the
// client's credentials, organization and project headers, X-Forwarded-*,
// hop-by-hop headers) stays at the gateway: a tenant cannot pick the billing
// project of a shared key or make the upstream refuse the gateway's key.
var requestAllowed = map[string]bool{
	"Accept": true, "Accept-Language": true,
	"Anthropic-Version": true, "Anthropic-Beta": true, "Openai-Beta": true,
	"Idempotency-Key": true, "X-Idempotency-Key": true,
}

var requestAllowedPrefixes = []string{"X-Stainless-"}

// Response headers an upstream may pass to the client (docs/GATEWAY.md §7).
// Never Set-Cookie, Server, or an upstream's organization or project
// headers.
var responseAllowed = map[string]bool{
	"Content-Type": true, "X-Request-Id": true, "Request-Id": true,
	"Openai-Processing-Ms": true, "Openai-Version": true,
	"Retry-After": true, "Retry-After-Ms": true,
}

var responseAllowedPrefixes = []string{"X-Ratelimit-", "Anthropic-Ratelimit-"}

// hopByHop are never forwarded, whatever the lists above say.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Proxy-Connection": true,
}

// hopHeaders are headers the gateway never copies from a response it
// relays (kept for the callers that filter an already filtered header).
var hopHeaders = hopByHop

func allowed(k string, names map[string]bool, prefixes []string) bool {
	if names[k] {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// connectionNamed returns the header names listed in h's Connection header
// (canonical), which are hop-by-hop too; nil when there are none.
func connectionNamed(h http.Header) map[string]bool {
	var named map[string]bool
	for _, v := range h["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				if named == nil {
					named = map[string]bool{}
				}
				named[http.CanonicalHeaderKey(f)] = true
			}
		}
	}
	return named
}

// forwardRequestHeaders copies to dst the headers of src a client may pass
// to an upstream.
func forwardRequestHeaders(dst, src http.Header) {
	named := connectionNamed(src)
	for k, vs := range src {
		if allowed(k, requestAllowed, requestAllowedPrefixes) && !hopByHop[k] && !named[k] {
			dst[k] = vs
		}
	}
}

// responseHeaders keeps, in place, the headers of an upstream's answer the
// client may see, and returns src.
func responseHeaders(src http.Header) http.Header {
	named := connectionNamed(src)
	for k := range src {
		if !allowed(k, responseAllowed, responseAllowedPrefixes) || hopByHop[k] || named[k] {
			delete(src, k)
		}
	}
	return src
}
