package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// oauthEntry is the "oauth" object of a url server in --config: the client
// side of MCP authorization toward that server.
type oauthEntry struct {
	ClientID     string   `json:"client_id"`     // "": the proxy registers itself (RFC 7591)
	ClientSecret string   `json:"client_secret"` // with client_id only
	Scopes       []string `json:"scopes"`        // nil: what the server asks for
	TokenFile    string   `json:"token_file"`    // "": under the user's config directory
	RedirectPort int      `json:"redirect_port"` // login's loopback port; 0: any free one
}

// oauthSpec is a checked oauthEntry.
type oauthSpec struct {
	clientID, clientSecret string
	scopes                 []string
	tokenFile              string
	redirectPort           int
}

// oauth checks the "oauth" object e of server name (key is its key path)
// into a spec: only for a url server, client_secret only with client_id, a
// token_file relative to the config file's directory (default: the user's
// config directory, loopctl/mcp-proxy/oauth/NAME.json).
func (k configKeys) oauth(key, name string, e serverEntry) (*oauthSpec, error) {
	o := e.OAuth
	switch {
	case o == nil:
		return nil, nil
	case e.URL == "":
		return nil, k.bad(key, "only a server with a url takes oauth")
	case o.ClientSecret != "" && o.ClientID == "":
		return nil, k.bad(key+".client_secret", "needs client_id")
	case o.RedirectPort < 0 || o.RedirectPort > 65535:
		return nil, k.bad(key+".redirect_port", "must be a port number (got %d)", o.RedirectPort)
	}
	for i, sc := range o.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\n") {
			return nil, k.bad(fmt.Sprintf("%s.scopes[%d]", key, i), "%q is not one scope", sc)
		}
	}
	spec := &oauthSpec{clientID: o.ClientID, clientSecret: o.ClientSecret, scopes: o.Scopes,
		tokenFile: o.TokenFile, redirectPort: o.RedirectPort}
	switch {
	case spec.tokenFile == "":
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, k.bad(key+".token_file", "no default (%v): give one", err)
		}
		spec.tokenFile = filepath.Join(dir, "loopctl", "mcp-proxy", "oauth", name+".json")
	case !filepath.IsAbs(spec.tokenFile):
		spec.tokenFile = filepath.Join(filepath.Dir(k.file), spec.tokenFile)
	}
	return spec, nil
}

// options are the mcptool.OAuthOptions of server name; authorize and
// redirect are login's interactive step (nil and "" when serving).
func (o *oauthSpec) options(name, redirect string, authorize auth.AuthorizationCodeFetcher) mcptool.OAuthOptions {
	return mcptool.OAuthOptions{Server: name, ClientID: o.clientID, ClientSecret: o.clientSecret, Scopes: o.scopes,
		TokenFile: o.tokenFile, RedirectURL: redirect, Authorize: authorize}
}
