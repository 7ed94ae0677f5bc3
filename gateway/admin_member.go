package gateway

import (
	"net/http"
	"strings"
	"time"
)

// A member action (docs/GATEWAY.md §11.5): POST /admin/breakers/{model}
// with member: upstream/model disables, enables or resets a pool member.
// It acts on the deployment, so in every pool that lists it, and answers
// with the view of every configured model whose pools list it:
// {"member": "...", "breakers": [...]}. A model's own reset (no member)
// resets its model breaker only.

// MemberActionView is the answer to a member action: the member, and the
// view of every configured model whose pools list it, in config order.
type MemberActionView struct {
	Member   string        `json:"member"`
	Breakers []BreakerView `json:"breakers"`
}

// controlMember serves a member action a on the pools of rt's route for
// the admin key named who: 400 naming member when no pool of rt lists it.
func (g *Gateway) controlMember(w http.ResponseWriter, r *http.Request, rt *route, a adminAction, who string) {
	if pd, _ := g.memberOf(rt.name, a.Member); pd == nil || rt.direct {
		writeOpenAIError(w, http.StatusBadRequest, apiError{Message: g.notAMember(rt, a.Member),
			Type: "invalid_request_error", Param: "member", Code: "invalid_admin_action"})
		return
	}
	var until time.Time
	if a.ttl > 0 {
		until = g.now().Add(a.ttl)
	}
	switch a.Action {
	case "disable":
		g.pools.off.disable(a.Member, until, a.Reason, who)
	case "enable":
		g.pools.off.enable(a.Member)
	case "reset":
		g.memberBreaker(a.Member).Reset()
	}
	if g.log != nil {
		attrs := []any{"key", who, "action", a.Action, "model", rt.name, "member", a.Member,
			"reason", logName(a.Reason), "ttl", a.TTL, "remote", r.RemoteAddr}
		if !until.IsZero() {
			attrs = append(attrs, "until", until.UTC().Format(time.RFC3339))
		}
		g.log.Warn("admin", attrs...)
	}
	v := MemberActionView{Member: a.Member, Breakers: []BreakerView{}}
	for _, mr := range g.order {
		if pd, _ := g.memberOf(mr.name, a.Member); pd != nil {
			v.Breakers = append(v.Breakers, g.view(mr))
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// notAMember says that ref is no member of a pool of rt's route, and
// which members its pools have.
func (g *Gateway) notAMember(rt *route, ref string) string {
	var members []string
	for _, pd := range g.poolsOf(rt.name) {
		for _, m := range pd.members {
			members = append(members, m.ref)
		}
	}
	if len(members) == 0 {
		return "member " + quoteField(ref) + ": " + rt.name + " names no pool (a member action needs a model whose primary or chain is pool/<name>)"
	}
	return "member " + quoteField(ref) + " is in no pool of " + rt.name + " (its pools' members: " + strings.Join(members, ", ") + ")"
}
