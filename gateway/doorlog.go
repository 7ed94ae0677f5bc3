package gateway

import (
	"log/slog"
	"net/http"
)

// refuseAtDoor writes a refusal of admit (before any endpoint runs) and
// records it as a request refused before routing is recorded: the
// requests counter with outcome invalid and one "request" log line with
// the status and the error, so that a 415 or a 403 shows where a 400
// does.
func (g *Gateway) refuseAtDoor(w http.ResponseWriter, r *http.Request, status int, e apiError) {
	ep := wires[r.URL.Path]
	ep.writeError(w, status, e)
	label := "other"
	if ep != nil {
		label = ep.label
	}
	g.m.request(label, "", "", outcomeInvalid, 0)
	if g.log != nil {
		g.log.LogAttrs(r.Context(), slog.LevelWarn, "request", slog.String("api", label), slog.String("model", ""),
			slog.Int("status", status), slog.String("outcome", outcomeInvalid), slog.String("path", logName(r.URL.Path)),
			slog.String("error", e.Message))
	}
}
