package gateway

import (
	"net/url"
	"strings"
)

// Azure OpenAI as most deployments are still called (docs/gateway.md): an
// openai upstream with api_version and base_url
// https://{resource}.openai.azure.com sends chat completions and
// embeddings to /openai/deployments/{deployment}/…?api-version=V, the
// model name being the deployment's, and Responses to
// /openai/responses?api-version=V (the deployment in the body's model).
// Without api_version, Azure's v1 API is base_url …/openai/v1 as any
// openai upstream.

// azureURL returns the URL of a request for deployment on endpoint w of an
// Azure OpenAI upstream whose base URL is base, with api-version version.
func azureURL(base, deployment, version string, w *endpoint) (*url.URL, error) {
	path := "/openai/deployments/" + url.PathEscape(deployment) + w.path
	if w == responsesEndpoint {
		path = "/openai/responses"
	}
	return url.Parse(base + path + "?api-version=" + url.QueryEscape(version))
}

// azureProblems checks an upstream's api_version (at p): only for api
// openai, a bare version string, and a base URL that is the resource's
// (not its v1 path).
func (ps *problems) azureProblems(p string, u Upstream) {
	if u.APIVersion == "" {
		return
	}
	if u.API != "" && u.API != APIOpenAI {
		ps.add(p+".api_version", "is for api openai (Azure OpenAI's deployments), not %s", u.API)
		return
	}
	if strings.ContainsAny(u.APIVersion, "?&=/ ") {
		ps.add(p+".api_version", "%q is not a version such as 2024-10-21", u.APIVersion)
	}
	if strings.Contains(strings.TrimRight(u.BaseURL, "/"), "/openai") {
		ps.add(p+".base_url", "%q: with api_version the base_url is the resource's, such as https://my-resource.openai.azure.com (the gateway adds /openai/deployments/{model}/…)", redactQuery(u.BaseURL))
	}
}
