package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/loopctl/loopctl-go/gateway"
)

// reloadAnswer is the body of POST /admin/reload: what a reload did, or
// why nothing was applied.
type reloadAnswer struct {
	OK bool `json:"ok"`
	gateway.Reloaded
	Error    string            `json:"error"`
	Problems []gateway.Problem `json:"problems"`
}

// reloadRefusal returns the message of a reload's 400 (every problem by
// key path), or "" when body is not one.
func reloadRefusal(body []byte) string {
	var a reloadAnswer
	if json.Unmarshal(body, &a) != nil || a.OK || a.Error == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(a.Error)
	for _, p := range a.Problems {
		b.WriteString("\n  " + p.Path + ": " + p.Message)
	}
	return b.String()
}

// writeReload writes what a reload did, one line per kind of change.
func writeReload(w io.Writer, body []byte) error {
	var a reloadAnswer
	if err := json.Unmarshal(body, &a); err != nil || !a.OK {
		return fmt.Errorf("the gateway's answer is not a reload's: %s", strings.TrimSpace(string(body)))
	}
	fmt.Fprintln(w, "reloaded: the new configuration serves")
	for _, l := range []struct {
		what  string
		names []string
	}{
		{"kept (state, holds and disables carried over)", a.Kept},
		{"started (new breakers, in primary)", a.Started},
		{"dropped", a.Dropped},
		{"needs a restart, not applied", a.Restart},
	} {
		if len(l.names) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", l.what, strings.Join(l.names, ", "))
		}
	}
	return nil
}
