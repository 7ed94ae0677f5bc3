package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpProxyLoginUsage = `usage: loopctl mcp-proxy login SERVER --config FILE [--wait 5m]

Authorizes loopctl toward the OAuth-protected MCP server SERVER of --config (a
"url" server with an "oauth" object), once: it listens on a loopback port of
127.0.0.1 for the authorization server's redirect, prints the authorization URL
to open in a browser, waits (--wait) for the code, exchanges it and stores the
token in the server's token file (mode 0600). mcp-proxy then uses and refreshes
that token without asking anyone.`

// loginCallback is what the redirect to the loopback listener carried.
type loginCallback struct {
	res *auth.AuthorizationResult
	err error
}

// mcpProxyLogin is `loopctl mcp-proxy login`.
func mcpProxyLogin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("mcp-proxy login")
	config := fs.String("config", "", "JSON config `FILE` of mcp-proxy, whose server SERVER has \"oauth\"")
	wait := fs.Duration("wait", 5*time.Minute, "how long to wait for the authorization")
	name, args := loginName(args)
	if code, done := ParseFlags(fs, mcpProxyLoginUsage, args, stdout, stderr); done {
		return code
	}
	usage := func(msg string) int { return UsageError(stderr, fs.Name(), msg) }
	if name == "" || *config == "" || *wait <= 0 {
		return usage("want SERVER, --config FILE and a positive --wait")
	}
	spec, err := loginServer(*config, name)
	if err != nil {
		return usage(err.Error())
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", spec.oauth.redirectPort))
	if err != nil {
		fmt.Fprintf(stderr, "mcp-proxy login: the redirect listener: %v\n", err)
		return 1
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	codes := make(chan loginCallback, 1)
	srv := &http.Server{Handler: callbackHandler(codes), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ln) }()
	defer func() { srv.Close(); <-served }()

	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	var asked atomic.Bool // the server asked for an authorization
	fetch := func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		asked.Store(true)
		fmt.Fprintf(stdout, "To authorize loopctl toward %q, open this URL in a browser:\n\n  %s\n\nWaiting up to %v for the redirect to %s\n",
			spec.name, a.URL, *wait, redirect)
		select {
		case cb := <-codes:
			return cb.res, cb.err
		case <-ctx.Done():
			return nil, fmt.Errorf("no authorization within %v", *wait)
		}
	}
	if err := loginConnect(ctx, spec, redirect, fetch); err != nil {
		fmt.Fprintf(stderr, "mcp-proxy login %s: %v\n", spec.name, err)
		return 1
	}
	if !asked.Load() {
		fmt.Fprintf(stdout, "%s did not ask for authorization: nothing stored\n", spec.name)
		return 0
	}
	fmt.Fprintf(stdout, "Authorized: the token of %s is stored in %s\n", spec.name, spec.oauth.tokenFile)
	return 0
}

// loginServer returns the server name of the config file, which must be a
// url server with "oauth".
func loginServer(config, name string) (serverSpec, error) {
	var s proxySettings
	if err := loadProxyFile(config, &s); err != nil {
		return serverSpec{}, err
	}
	for _, spec := range s.servers {
		if spec.name != name {
			continue
		}
		if spec.oauth == nil {
			return spec, fmt.Errorf("%s: mcpServers.%s has no \"oauth\" object", config, name)
		}
		return spec, nil
	}
	return serverSpec{}, fmt.Errorf("%s: no server %q in mcpServers", config, name)
}

// loginConnect connects to spec's server through the interactive flow and
// closes the session once it is up: the token is stored by then.
func loginConnect(ctx context.Context, spec serverSpec, redirect string, fetch auth.AuthorizationCodeFetcher) error {
	h, err := mcptool.NewOAuthHandler(spec.oauth.options(spec.name, redirect, fetch))
	if err != nil {
		return err
	}
	t, _ := mcptool.StreamableHTTPAuth(spec.url, nil, h)(ctx)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "loopctl-mcp-proxy-login", Version: "1"}, nil).Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	return cs.Close()
}

// callbackHandler receives the authorization server's redirect at /callback
// and hands the first one to codes.
func callbackHandler(codes chan<- loginCallback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cb := loginCallback{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
		msg := "loopctl: authorization received; you can close this tab.\n"
		if e := q.Get("error"); e != "" || q.Get("code") == "" {
			desc := strings.TrimSpace(e + " " + q.Get("error_description"))
			cb = loginCallback{err: errors.New("authorization refused: " + desc)}
			msg = "loopctl: " + cb.err.Error() + "\n"
		}
		select {
		case codes <- cb:
		default: // a second redirect: the first one counts
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, msg)
	})
	return mux
}

// loginName splits login's arguments into the server's name (the first
// argument, or the last, that is not a flag) and the flags.
func loginName(args []string) (string, []string) {
	switch n := len(args); {
	case n > 0 && !strings.HasPrefix(args[0], "-"):
		return args[0], args[1:]
	case n > 0 && !strings.HasPrefix(args[n-1], "-"):
		return args[n-1], args[:n-1]
	}
	return "", args
}

// loginArgs reports whether args are `login ...` and returns the rest.
func loginArgs(args []string) ([]string, bool) {
	if len(args) > 0 && args[0] == "login" {
		return args[1:], true
	}
	return nil, false
}
