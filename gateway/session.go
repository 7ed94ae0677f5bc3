package gateway

import (
	"net/http"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/pool"
)

// A request's session key homes it on the pool member that holds its
// conversation's prompt cache (docs/GATEWAY.md §11.2; SEMANTICS §9.3 rule
// 3b). The gateway keeps only the key's hash: the key is never logged, put
// in a metric or copied out of the body.

// sessionHeader is the request header that names a session explicitly,
// for a client whose body carries none of the fields below.
const sessionHeader = "X-Loopctl-Session"

// sessionFields are the body fields a session key may come from, as scan
// found them: each the raw JSON string literal (quotes included), a view
// of the request body rather than a copy, nil when the body has none (or
// not as a non-empty string). Nothing else reads them: the request log
// and the Observer read only the model and stream of a request.
type sessionFields struct {
	userID   []byte // Messages metadata.user_id (Claude Code's session)
	cacheKey []byte // chat and Responses prompt_cache_key
	user     []byte // chat and Responses user
}

// sessionOf returns the session of a request with headers h whose body
// scan read as q: the x-loopctl-session header when present and not empty,
// else metadata.user_id, else prompt_cache_key, else user, else no session
// (no affinity for that request). The order puts the most specific key
// first: Claude Code's user_id names its session, a prompt_cache_key names
// one conversation's cache, while user names a person, whose conversations
// then share a home (harmless). The fields are read whatever the wire,
// since each is sent only by its wire's clients and any stable key keeps a
// conversation at home. Only the key's hash is kept (pool.SessionOf).
func sessionOf(h http.Header, q *request) pool.Session {
	if v := h[sessionHeader]; len(v) > 0 && v[0] != "" {
		return pool.SessionOf(v[0])
	}
	for _, raw := range [...][]byte{q.session.userID, q.session.cacheKey, q.session.user} {
		if raw != nil {
			return pool.SessionOf(unquote(raw))
		}
	}
	return pool.Session{}
}

// sessionKey returns v, a top-level value (body[vs:ve]), as a session
// field: a view of it when it is a non-empty JSON string, else nil (an
// empty or missing key is no session; another field may name one).
func sessionKey(v []byte) []byte {
	if len(v) > 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v
	}
	return nil
}

// metadataUserID returns metadata.user_id of a top-level "metadata" value
// body[vs:ve], as sessionKey does; nil when the value is not an object
// with that member. It reads only the object's own members: a nested
// user_id is not Claude Code's. A break in the object's structure (the
// body is checked whole later) is nil.
func metadataUserID(body []byte, vs, ve int) []byte {
	if body[vs] != '{' {
		return nil
	}
	var id []byte
	for i := wire.SkipSpace(body, vs+1); i < ve && body[i] != '}'; {
		ks, ke, mvs, mve, ok := member(body, i)
		if !ok || mve > ve {
			return nil
		}
		if string(body[ks:ke]) == `"user_id"` {
			id = sessionKey(body[mvs:mve])
		}
		if i = wire.SkipSpace(body, mve); i < ve && body[i] == ',' {
			i = wire.SkipSpace(body, i+1)
		}
	}
	return id
}
