package gateway

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/smithy-go/encoding/httpbinding"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// The Anthropic family's other hosts (docs/GATEWAY.md §10.2): Amazon
// Bedrock and Google Vertex AI serve Messages bodies on their own paths,
// with their own anthropic_version and a few body rules. Both are served
// as anthropic upstreams (the same request path, translation and streams);
// what differs is the data below.
const (
	APIBedrock = "bedrock" // Messages on Amazon Bedrock (InvokeModel)
	APIVertex  = "vertex"  // Messages on Google Vertex AI (rawPredict)
)

// cloud is what an Anthropic-family upstream on Bedrock or Vertex does
// differently from Anthropic's own API.
type cloud struct {
	api     string // APIBedrock or APIVertex
	version string // the body's anthropic_version
	// drop are the top-level body keys removed (the model is in the path).
	drop []string
	// betas: the client's anthropic-beta header becomes the body's
	// anthropic_beta, only the flags in this allow-list (Bedrock); nil:
	// the header is forwarded as is (Vertex).
	betas map[string]bool
	// base is the upstream's base URL; project and region name Vertex's
	// model path.
	base, project, region string
	// countTokens: count_tokens is sent upstream (Vertex); false: it is
	// answered locally, as for an openai upstream (GATEWAY §8.8).
	countTokens bool
	// errors maps an error answer (status, headers, body) to Anthropic's
	// shape and the verdict's kind.
	errors func(status int, h http.Header, body []byte) cloudError
}

// Anthropic versions of the clouds' bodies.
const (
	bedrockVersion = "bedrock-2023-05-31"
	vertexVersion  = "vertex-2023-10-16"
)

// bedrockBetas are the anthropic-beta flags Bedrock accepts in
// anthropic_beta (others, such as Claude Code's claude-code-20250219 or
// oauth flags, make it answer 400, so they are dropped). Documented in
// docs/gateway.md.
var bedrockBetas = map[string]bool{
	"computer-use-2024-10-22": true, "computer-use-2025-01-24": true, "computer-use-2025-11-24": true,
	"token-efficient-tools-2025-02-19": true, "interleaved-thinking-2025-05-14": true,
	"output-128k-2025-02-19": true, "dev-full-thinking-2025-05-14": true,
	"context-1m-2025-08-07": true, "context-management-2025-06-27": true,
	"fine-grained-tool-streaming-2025-05-14": true, "tool-search-tool-2025-10-19": true,
	"tool-examples-2025-10-29": true, "effort-2025-11-24": true,
}

// newCloud returns the cloud of upstream c (nil for another api), with its
// base URL's default from its region.
func newCloud(c Upstream) *cloud {
	base := strings.TrimRight(c.BaseURL, "/")
	switch c.API {
	case APIBedrock:
		if base == "" {
			base = "https://bedrock-runtime." + c.Region + ".amazonaws.com"
		}
		return &cloud{api: APIBedrock, version: bedrockVersion, drop: []string{"model", "stream", "anthropic_version"},
			betas: bedrockBetas, base: base, region: c.Region, errors: bedrockError}
	case APIVertex:
		if base == "" {
			base = "https://" + c.Region + "-aiplatform.googleapis.com"
			if c.Region == "global" {
				base = "https://aiplatform.googleapis.com"
			}
		}
		return &cloud{api: APIVertex, version: vertexVersion, drop: []string{"model", "anthropic_version"},
			base: base, project: c.Project, region: c.Region, countTokens: true, errors: vertexError}
	}
	return nil
}

// cloudProblems checks the keys of a Bedrock or Vertex upstream u (at p):
// region, and project for Vertex; region and project only where they mean
// something.
func (ps *problems) cloudProblems(p string, u Upstream) {
	switch u.API {
	case APIBedrock:
		if u.Region == "" {
			ps.add(p+".region", "required for api bedrock (its AWS region, e.g. us-east-1)")
		}
	case APIVertex:
		if u.Region == "" {
			ps.add(p+".region", "required for api vertex (its Google Cloud region, e.g. us-east5, or global)")
		}
		if u.Project == "" {
			ps.add(p+".project", "required for api vertex (the Google Cloud project id)")
		}
	}
	if u.Project != "" && u.API != APIVertex {
		ps.add(p+".project", "is for api vertex only")
	}
}

// url returns the URL of a request for model on wire w.
func (c *cloud) url(model string, w *endpoint, stream bool) (*url.URL, error) {
	var path string
	switch {
	case c.api == APIBedrock:
		action := "invoke"
		if stream {
			action = "invoke-with-response-stream"
		}
		path = "/model/" + httpbinding.EscapePath(model, true) + "/" + action
	case w == countTokensEndpoint:
		path = c.vertexModels() + "count-tokens:rawPredict"
	default:
		action := ":rawPredict"
		if stream {
			action = ":streamRawPredict"
		}
		path = c.vertexModels() + url.PathEscape(model) + action
	}
	return url.Parse(c.base + path)
}

// vertexModels is the path of the Anthropic models of Vertex's project and
// region, ending in "/".
func (c *cloud) vertexModels() string {
	return "/v1/projects/" + url.PathEscape(c.project) + "/locations/" + url.PathEscape(c.region) + "/publishers/anthropic/models/"
}

// body returns a Messages body (model, stream as the client or the
// translator set them) in the cloud's shape: without the keys the cloud
// does not take (count_tokens keeps its model: its path names none), with
// its anthropic_version and, for Bedrock, the allowed anthropic-beta flags
// of the request's headers h as anthropic_beta.
func (c *cloud) body(b []byte, h http.Header, w *endpoint) []byte {
	drop := c.drop
	if w == countTokensEndpoint {
		drop = []string{"anthropic_version"}
	}
	out := make([]byte, 0, len(b)+64)
	out = append(out, `{"anthropic_version":`...)
	out = strconv.AppendQuote(out, c.version)
	if c.betas != nil {
		if flags := c.allowedBetas(h); len(flags) > 0 {
			out = append(out, `,"anthropic_beta":[`...)
			for i, f := range flags {
				if i > 0 {
					out = append(out, ',')
				}
				out = strconv.AppendQuote(out, f)
			}
			out = append(out, ']')
			drop = append(slices.Clip(drop), "anthropic_beta")
		}
	}
	return appendMembers(out, b, drop)
}

// allowedBetas returns the flags of the anthropic-beta headers in h that
// the cloud accepts, in order, once each.
func (c *cloud) allowedBetas(h http.Header) []string {
	var flags []string
	for _, v := range h["Anthropic-Beta"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); c.betas[f] && !slices.Contains(flags, f) {
				flags = append(flags, f)
			}
		}
	}
	return flags
}

// appendMembers appends to out (an open object with at least one member)
// the top-level members of the JSON object b whose keys are not in drop,
// and closes the object. b is valid JSON (the gateway scanned it or wrote
// it).
func appendMembers(out, b []byte, drop []string) []byte {
	i := wire.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return append(out, '}')
	}
	i++
	for {
		i = wire.SkipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			break
		}
		ks := i
		i = wire.SkipString(b, i)
		key, err := strconv.Unquote(string(b[ks:i]))
		i = wire.SkipSpace(b, i) + 1 // the colon
		i = wire.SkipSpace(b, i)
		i = wire.SkipValue(b, i)
		if err != nil || !slices.Contains(drop, key) {
			out = append(out, ',')
			out = append(out, b[ks:i]...)
		}
		i = wire.SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return append(out, '}')
}

// cloudHeaders adjusts an upstream request's headers for the cloud: the
// version is in the body, and Bedrock takes its betas there too.
func (c *cloud) headers(h http.Header) {
	delete(h, "Anthropic-Version")
	if c.betas != nil {
		delete(h, "Anthropic-Beta")
	}
}
