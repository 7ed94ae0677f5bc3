package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// MaxHold is the longest hold POST /admin/breakers/{model} accepts
// (docs/GATEWAY.md §9.2).
const MaxHold = 24 * time.Hour

// maxReason is the longest reason an admin action accepts, in bytes.
const maxReason = 200

// adminAction is the body of POST /admin/breakers/{model}.
type adminAction struct {
	Action string `json:"action"`
	TTL    string `json:"ttl"`
	Reason string `json:"reason"`
	Entry  string `json:"entry"`
	Member string `json:"member"`

	ttl  time.Duration // TTL parsed (0: none)
	seen map[string]bool
}

// badField is a refusal of an admin body: 400 naming the field.
type badField struct{ field, msg string }

func (e *badField) Error() string { return e.msg }

// readAction decodes and checks an admin action's body for route rt; the
// error is a *badField naming the field that is wrong.
func readAction(body []byte, rt *route) (adminAction, error) {
	var a adminAction
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			name := strings.Trim(f, `"`)
			if name == "" {
				name = "body" // a key "": no name to give
			}
			return a, &badField{name, "unknown field " + f + " (the fields are action, ttl, reason, entry, member)"}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return a, &badField{te.Field, te.Field + " must be a string"}
		}
		return a, &badField{"body", "the body must be one JSON object such as {\"action\":\"hold\",\"ttl\":\"10m\",\"reason\":\"INC-42\"}: " + err.Error()}
	}
	if d.More() {
		return a, &badField{"body", "the body must be one JSON object"}
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw)
	a.seen = map[string]bool{}
	for k := range raw {
		a.seen[strings.ToLower(k)] = true // encoding/json matches keys without case
	}
	return a, a.check(rt)
}

// check checks the fields a's action takes: which must be there, which
// must not, a TTL's form and bounds, the entry's place in rt's chain. A
// member's place in rt's pools is checked by the caller (controlMember).
func (a *adminAction) check(rt *route) error {
	allowed := map[string]string{
		"hold": "ttl reason", "release": "", "reset": "member",
		"disable": "entry member ttl reason", "enable": "entry member",
	}
	if _, ok := allowed[a.Action]; !ok {
		if !a.seen["action"] {
			return &badField{"action", "action is missing: one of hold, release, reset, disable, enable"}
		}
		return &badField{"action", "unknown action " + quoteField(a.Action) + ": want hold, release, reset, disable or enable"}
	}
	if err := a.checkFields(allowed[a.Action]); err != nil {
		return err
	}
	if len(a.Reason) > maxReason {
		return &badField{"reason", "reason is longer than 200 bytes"}
	}
	if a.seen["ttl"] {
		d, err := time.ParseDuration(a.TTL)
		switch {
		case err != nil:
			return &badField{"ttl", "ttl " + quoteField(a.TTL) + " is not a duration such as 10m or 1h30m"}
		case d <= 0:
			return &badField{"ttl", "ttl must be positive"}
		case a.Action == "hold" && d > MaxHold:
			return &badField{"ttl", "ttl " + a.TTL + " is longer than the longest hold, 24h"}
		case a.seen["member"] && d > MaxHold:
			return &badField{"ttl", "ttl " + a.TTL + " is longer than the longest member disable, 24h"}
		}
		a.ttl = d
	}
	if a.seen["entry"] && !inChain(rt, a.Entry) {
		return &badField{"entry", "entry " + quoteField(a.Entry) + " is not in the chain of " + rt.name + " (its chain: " + strings.Join(rt.settings.Chain, ", ") + ")"}
	}
	return nil
}

// checkFields checks that a has the fields its action needs and none
// outside allowed (a space-separated list).
func (a *adminAction) checkFields(allowed string) error {
	switch {
	case a.Action == "hold" && !a.seen["ttl"]:
		return &badField{"ttl", "hold needs ttl"}
	case (a.Action == "disable" || a.Action == "enable") && !a.seen["entry"] && !a.seen["member"]:
		return &badField{"entry", a.Action + " needs entry (a chain entry, upstream/model) or member (a pool member)"}
	case a.seen["member"] && (a.Action == "hold" || a.Action == "release"):
		// A member's breaker has no hold: a disable with a TTL is one.
		return &badField{"member", "there is no member hold: take a member out with {\"action\":\"disable\",\"member\":...,\"ttl\":\"10m\"} and back with enable"}
	case a.seen["member"] && a.seen["entry"]:
		return &badField{"member", "member and entry do not go together: one names a pool member, the other a chain entry"}
	}
	for _, f := range []string{"ttl", "reason", "entry", "member"} {
		if a.seen[f] && !strings.Contains(allowed, f) {
			return &badField{f, f + " does not apply to " + a.Action}
		}
	}
	return nil
}

func inChain(rt *route, model string) bool {
	for _, c := range rt.settings.Chain {
		if c == model {
			return true
		}
	}
	return false
}

// quoteField quotes a client's value for an error message (printable ASCII,
// at most MaxModelName bytes).
func quoteField(s string) string { return `"` + logName(s) + `"` }

// control serves POST /admin/breakers/{model}: it applies the action of the
// body to the model's breaker, logs one line, and answers with the
// breaker's new view. who is the admin key's name.
func (g *Gateway) control(w http.ResponseWriter, r *http.Request, name, who string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if err != nil {
		writeOpenAIError(w, http.StatusBadRequest, apiError{Message: "the body could not be read (at most 64 KiB): " + err.Error(), Type: "invalid_request_error", Param: "body"})
		return
	}
	rt, err := g.lookup(name)
	if rt == nil {
		msg := "no model " + quoteField(name) + " (a configured model, or upstream/model of a configured upstream)"
		if err != nil {
			msg = err.Error()
		}
		writeOpenAIError(w, http.StatusNotFound, apiError{Message: msg, Type: "invalid_request_error", Code: "model_not_found"})
		return
	}
	a, err := readAction(body, rt)
	if err != nil {
		bf := err.(*badField)
		writeOpenAIError(w, http.StatusBadRequest, apiError{Message: bf.msg, Type: "invalid_request_error", Param: bf.field, Code: "invalid_admin_action"})
		return
	}
	if a.seen["member"] {
		g.controlMember(w, r, rt, a, who)
		return
	}
	until := g.apply(rt, a, who)
	if g.log != nil {
		attrs := []any{"key", who, "action", a.Action, "model", rt.name, "entry", a.Entry,
			"reason", logName(a.Reason), "ttl", a.TTL, "remote", r.RemoteAddr}
		if !until.IsZero() {
			attrs = append(attrs, "until", until.UTC().Format(time.RFC3339))
		}
		g.log.Warn("admin", attrs...)
	}
	writeJSON(w, http.StatusOK, g.view(rt))
}

// apply runs action a on rt's breaker for the admin key named who and
// returns the end it set (zero: none).
func (g *Gateway) apply(rt *route, a adminAction, who string) time.Time {
	until := time.Time{}
	if a.ttl > 0 {
		until = g.now().Add(a.ttl)
	}
	rt.notes.acts.Lock()
	defer rt.notes.acts.Unlock()
	rt.notes.actor.Store(&who)
	defer rt.notes.actor.Store(nil)
	if op, ok := rt.settings.Backend.(operator); ok {
		if op.Operate(a.Action, a.Entry, signed(a.Reason, who), until) == nil {
			return until
		}
	}
	switch a.Action {
	case "hold":
		rt.mgr.Hold(until, signed(a.Reason, who))
	case "release":
		rt.mgr.Release()
	case "reset":
		rt.mgr.Reset()
	case "disable":
		_ = rt.mgr.Disable(a.Entry, until, signed(a.Reason, who))
	case "enable":
		_ = rt.mgr.Enable(a.Entry)
	}
	return until
}

// operator is what a shared breaker's Backend (fleet's ModelBackend)
// offers for an admin act: the act with its reason written through the
// store, so that every replica's transition names the act, the admin key's
// name (signed into the reason, for an enable and a reset too) and its
// end, not only this one's (docs/FLEET.md).
type operator interface {
	Operate(action, entry, reason string, until time.Time) error
}

// signed is the reason an admin action stores with the library (and the
// store, shared by the fleet): the reason given, and " (by NAME)" with the
// admin key's name.
func signed(reason, who string) string {
	if who == "" {
		return reason
	}
	return reason + " (by " + who + ")"
}

// unsign splits a stored reason into the reason given and the admin key's
// name (see signed).
func unsign(s string) (reason, who string) {
	i := strings.LastIndex(s, " (by ")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return s, ""
	}
	return s[:i], s[i+len(" (by ") : len(s)-1]
}
