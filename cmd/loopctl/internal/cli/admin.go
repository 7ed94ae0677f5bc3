package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/gateway"
)

const adminUsage = `usage: loopctl admin <action> [MODEL] [flags]

A thin client of a running gateway's admin API (docs/gateway.md, "Admin API"):

  loopctl admin breakers [MODEL]                       every model breaker, or one
  loopctl admin hold MODEL --ttl 10m --reason INC-42   take the primary out of rotation (ttl at most 24h)
  loopctl admin release MODEL                          end a hold now (the next request probes)
  loopctl admin reset MODEL                            back to the primary, every counter zeroed
  loopctl admin disable MODEL --entry UP/M [--ttl 1h] [--reason R]   a chain entry out of routing
  loopctl admin enable MODEL --entry UP/M              put it back
  loopctl admin disable MODEL --member UP/M [--ttl 1h] [--reason R]  a pool member out of rotation
                                                       (ttl at most 24h; in every pool that lists it)
  loopctl admin enable MODEL --member UP/M             put it back
  loopctl admin reset MODEL --member UP/M              that member's breaker closed, its trip count zeroed
  loopctl admin reload                                 re-read the config file (as SIGHUP), answer what changed

The key comes from the environment variable LOOPCTL_ADMIN_KEY (sent as
Authorization: Bearer); the gateway from --url (default: the local serve
address, or LOOPCTL_ADMIN_URL). Output is a table, or the API's JSON with
--json. A refused action exits 1 with the gateway's reason.`

// AdminKeyEnv and AdminURLEnv are the environment variables `loopctl admin`
// reads its key and its default gateway URL from.
const (
	AdminKeyEnv = "LOOPCTL_ADMIN_KEY"
	AdminURLEnv = "LOOPCTL_ADMIN_URL"
)

// adminArgs are the parsed arguments of `loopctl admin`.
type adminArgs struct {
	action, model           string
	url, ttl, reason, entry string
	member                  string // a pool member (upstream/model): a member action
	json                    bool
	getenv                  func(string) string
	seenTTL, seenReason     bool
}

// runAdmin is `loopctl admin`.
func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, code, done := parseAdmin(args, stdout, stderr, os.Getenv)
	if done {
		return code
	}
	body, err := a.call(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "loopctl admin %s: %v\n", a.action, err)
		return ExitFailure
	}
	if a.json {
		_, _ = stdout.Write(body)
		return ExitOK
	}
	// A member action answers with every model whose pools list the
	// member: a list, as GET /admin/breakers is.
	list := a.action == "breakers" && a.model == "" || a.member != ""
	write := func() error { return writeAdmin(stdout, body, list) }
	if a.action == "reload" {
		write = func() error { return writeReload(stdout, body) }
	}
	if err := write(); err != nil {
		fmt.Fprintf(stderr, "loopctl admin %s: %v\n", a.action, err)
		return ExitFailure
	}
	return ExitOK
}

// parseAdmin parses `loopctl admin` arguments: the action, the model and
// the flags, in any order after the action.
func parseAdmin(args []string, stdout, stderr io.Writer, getenv func(string) string) (adminArgs, int, bool) {
	a := adminArgs{getenv: getenv}
	fs := NewFlagSet("admin")
	def := getenv(AdminURLEnv)
	if def == "" {
		def = "http://" + gateway.DefaultListen
	}
	fs.StringVar(&a.url, "url", def, "the gateway's base `URL`")
	fs.StringVar(&a.ttl, "ttl", "", "hold or disable: how long (a Go duration: 10m, 1h30m)")
	fs.StringVar(&a.reason, "reason", "", "hold or disable: why (e.g. an incident id), logged and shown")
	fs.StringVar(&a.entry, "entry", "", "disable or enable: the chain entry (upstream/model)")
	fs.StringVar(&a.member, "member", "", "disable, enable or reset: the pool member (upstream/model), in every pool that lists it")
	fs.BoolVar(&a.json, "json", false, "print the API's JSON instead of a table")
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			code, _ := ParseFlags(fs, adminUsage, rest, stdout, stderr)
			return a, code, true
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	fs.Visit(func(f *flag.Flag) {
		a.seenTTL = a.seenTTL || f.Name == "ttl"
		a.seenReason = a.seenReason || f.Name == "reason"
	})
	if len(pos) == 0 {
		return a, UsageError(stderr, fs.Name(), "missing the action: breakers, hold, release, reset, disable, enable or reload"), true
	}
	a.action = pos[0]
	if len(pos) > 1 {
		a.model = pos[1]
	}
	if msg := a.check(len(pos)); msg != "" {
		return a, UsageError(stderr, fs.Name(), msg), true
	}
	return a, ExitOK, false
}

// check returns what is wrong with the action's arguments, or "".
func (a *adminArgs) check(npos int) string {
	switch a.action {
	case "breakers":
		if npos > 2 {
			return "breakers takes at most one model"
		}
		return ""
	case "reload":
		if npos > 1 || a.seenTTL || a.seenReason || a.entry != "" || a.member != "" {
			return "reload takes no model, --ttl, --reason, --entry or --member"
		}
		return ""
	case "hold", "release", "reset", "disable", "enable":
	default:
		return fmt.Sprintf("unknown action %q: want breakers, hold, release, reset, disable, enable or reload", a.action)
	}
	switch {
	case npos != 2:
		return a.action + " takes one model"
	case a.member != "" && (a.action == "hold" || a.action == "release"):
		return "there is no member hold: disable the member with --ttl (at most 24h), and enable it to put it back"
	case a.member != "" && a.entry != "":
		return "--member and --entry do not go together: one names a pool member, the other a chain entry"
	case a.action == "hold" && a.ttl == "":
		return "hold needs --ttl (at most 24h)"
	case (a.action == "disable" || a.action == "enable") && a.entry == "" && a.member == "":
		return a.action + " needs --entry UPSTREAM/MODEL (a chain entry) or --member UPSTREAM/MODEL (a pool member)"
	}
	return ""
}

// body returns the JSON body of a's POST.
func (a *adminArgs) body() []byte {
	m := map[string]string{"action": a.action}
	if a.entry != "" {
		m["entry"] = a.entry
	}
	if a.member != "" {
		m["member"] = a.member
	}
	if a.seenTTL {
		m["ttl"] = a.ttl
	}
	if a.seenReason {
		m["reason"] = a.reason
	}
	b, _ := json.Marshal(m)
	return b
}

// call sends a's request and returns the answer's body; an answer that is
// not 200 is an error with the gateway's message.
func (a *adminArgs) call(ctx context.Context) ([]byte, error) {
	u := strings.TrimRight(a.url, "/") + "/admin/breakers"
	if a.model != "" {
		u += "/" + url.PathEscape(a.model)
	}
	method, body := http.MethodGet, []byte(nil)
	switch a.action {
	case "breakers":
	case "reload":
		u, method, body = strings.TrimRight(a.url, "/")+"/admin/reload", http.MethodPost, []byte("{}")
	default:
		method, body = http.MethodPost, a.body()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if k := a.getenv(AdminKeyEnv); k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := strings.TrimSpace(string(out))
		if json.Unmarshal(out, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		} else if r := reloadRefusal(out); r != "" {
			msg = r
		}
		hint := ""
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
			hint = " (set " + AdminKeyEnv + " to an admin key)"
		}
		return nil, fmt.Errorf("%s %s: %d: %s%s", method, u, res.StatusCode, msg, hint)
	}
	return out, nil
}
