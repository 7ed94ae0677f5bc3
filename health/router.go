package health

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Router picks, for a tool, the first usable candidate among the tool and its
// backups. It routes by the breakers alone, with pure reads of its
// [Registry]; health [Status] and score are reported ([Registry.Summary]),
// never used to route. A Router is safe for concurrent use.
type Router struct {
	r       *Registry
	backups map[string][]string
}

// NewRouter returns a router over r. backups maps a tool to its backups, in
// order of preference; the map is copied.
func NewRouter(r *Registry, backups map[string][]string) *Router {
	c := make(map[string][]string, len(backups))
	for k, v := range backups {
		c[k] = slices.Clone(v)
	}
	return &Router{r: r, backups: c}
}

// Backups returns a copy of tool's backups, in order (nil if it has none).
func (rt *Router) Backups(tool string) []string { return slices.Clone(rt.backups[tool]) }

// Resolve picks, in the order [tool, backups...], the first candidate whose
// breaker would allow a call ([Registry.WouldAllow]). The breakers alone
// decide: a tripped tool whose cooldown has passed is resolved to itself (the
// call becomes its probe) even while a backup is healthy, a tool whose probe is
// in flight is skipped, and a closed breaker is used whatever its score (a
// score changes only when the tool is called, so routing by it would starve a
// tool that failed once). When every candidate would be refused it returns an
// [*UnavailableError], a soft error that matches [breaker.ErrOpen]. Resolve
// changes nothing and creates no tool: take the gate ([Registry.Allow]) on the
// returned name and settle under that name.
func (rt *Router) Resolve(tool string) (string, error) {
	if rt.r.WouldAllow(tool) {
		return tool, nil
	}
	backups := rt.backups[tool]
	for _, c := range backups {
		if rt.r.WouldAllow(c) {
			return c, nil
		}
	}
	candidate := func(i int) string {
		if i == 0 {
			return tool
		}
		return backups[i-1]
	}
	n := 1 + len(backups)
	retry := time.Duration(-1)
	for i := range n {
		if e := rt.r.lookup(candidate(i)); e != nil {
			if d := e.b.RetryIn(); retry < 0 || d < retry {
				retry = d
			}
		}
	}
	st := breaker.Open
	if e := rt.r.lookup(tool); e != nil {
		st = e.b.State()
	}
	return "", &UnavailableError{
		Tool:    tool,
		Backups: slices.Clone(backups),
		Err:     &breaker.OpenError{Name: tool, State: st, RetryIn: max(retry, 0)},
	}
}

// UnavailableError is the soft refusal of [Router.Resolve]: the tool and all
// its backups would be refused. errors.Is(err, breaker.ErrOpen) is true, and
// errors.As finds the wrapped [*breaker.OpenError], whose RetryIn is the
// soonest any candidate may be probed.
type UnavailableError struct {
	// Tool is the tool that was asked for.
	Tool string
	// Backups are its backups, all refused too.
	Backups []string
	// Err is the refusal for Tool, with the soonest RetryIn of all candidates.
	Err *breaker.OpenError
}

// Error returns text such as
//
//	tool temporarily unavailable: circuit breaker open for "search" and its backups "web", "cache"; retry in 12s
//
// with the wait rounded up as [breaker.RoundRetry] does (sub-second precision
// below 10s).
func (e *UnavailableError) Error() string {
	if len(e.Backups) == 0 {
		return e.Err.Error()
	}
	var b strings.Builder
	b.WriteString("tool temporarily unavailable: circuit breaker open for ")
	b.WriteString(strconv.Quote(e.Tool))
	b.WriteString(" and its backup")
	if len(e.Backups) > 1 {
		b.WriteString("s")
	}
	for i, name := range e.Backups {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" " + strconv.Quote(name))
	}
	b.WriteString("; retry in " + breaker.RoundRetry(e.Err.RetryIn).String())
	return b.String()
}

// Unwrap returns the wrapped [*breaker.OpenError].
func (e *UnavailableError) Unwrap() error { return e.Err }
