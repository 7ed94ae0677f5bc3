package gateway

import (
	"net"
	"net/http"

	"github.com/loopctl/loopctl-go/internal/loopback"
)

// adminAuthorized applies the doors of /admin/… (docs/GATEWAY.md §9.1) and
// writes the refusal itself. A read (GET, HEAD) needs a key when keys are
// configured, as /metrics does: one of admin_keys when there are any, else
// a client key. A write (any other method) needs one of admin_keys; without
// admin_keys it is refused with 403, except from a loopback address when no
// keys are configured at all. name is the admin key's name (for the audit
// log), "" when none was needed or the key is a client key.
func (g *Gateway) adminAuthorized(w http.ResponseWriter, r *http.Request) (name string, ok bool) {
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if i := matchKey(presented(r, true), g.admins.keys); i >= 0 {
		return g.admins.names[i], true
	}
	switch {
	case len(g.admins.keys) == 0 && len(g.clients.keys) == 0 && (read || loopbackRemote(r)):
		return "", true
	case read && len(g.admins.keys) == 0 && matchKey(presented(r, true), g.clients.keys) >= 0:
		return "", true
	case !read && len(g.admins.keys) == 0:
		writeOpenAIError(w, http.StatusForbidden, apiError{Message: "admin writes need one of admin_keys, and this gateway has none (add admin_keys to the config)", Type: "permission_error", Code: "no_admin_keys"})
		return "", false
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="loopctl gateway admin"`)
	what := "a key"
	if !read || len(g.admins.keys) > 0 {
		what = "one of admin_keys"
	}
	writeOpenAIError(w, http.StatusUnauthorized, apiError{Message: "this endpoint needs " + what + " (Authorization: Bearer <key>)", Type: "authentication_error", Code: "invalid_api_key"})
	return "", false
}

// loopbackRemote reports whether r came from a loopback address.
func loopbackRemote(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return host != "" && loopback.Addr(host)
}
