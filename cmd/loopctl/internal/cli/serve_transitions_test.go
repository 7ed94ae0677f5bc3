package cli

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// TestTransitionLogNamesTheOperator: serve's breaker log line for a
// transition an operator caused names the act, who, why and until when,
// and never a failure count; one caused by failures keeps its reason.
func TestTransitionLogNamesTheOperator(t *testing.T) {
	at := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	until := at.Add(10 * time.Minute)
	tr := func(from, to fallback.State, fm, tm, act, why string, end time.Time) fallback.Transition {
		return fallback.Transition{From: from, To: to, FromModel: fm, ToModel: tm, At: at, Manual: act, Reason: why, Until: end}
	}
	tests := []struct {
		name string
		t    fallback.Transition
		want []string
	}{
		{"failures", tr(fallback.Primary, fallback.Fallback, "up/a", "up/b", "", "", time.Time{}),
			[]string{`"reason":"up/a failed trip_threshold times in a row"`}},
		{"hold", tr(fallback.Primary, fallback.Fallback, "up/a", "up/b", "hold", "INC-42 (by oncall)", until),
			[]string{`"reason":"up/a held by an operator (oncall) until 2026-12-03T04:10:00Z: INC-42"`, `"cause":"operator"`, `"action":"hold"`, `"by":"oncall"`, `"operator_reason":"INC-42"`, `"until":"2026-12-03T04:10:00Z"`}},
		{"disable", tr(fallback.Fallback, fallback.Fallback, "up/b", "up/c", "disable", "flaky (by oncall)", until),
			[]string{`"reason":"up/b disabled by an operator (oncall) until 2026-12-03T04:10:00Z: flaky"`, `"action":"disable"`}},
		{"enable", tr(fallback.Fallback, fallback.Fallback, "up/c", "up/b", "enable", " (by oncall)", time.Time{}),
			[]string{`"reason":"up/b enabled by an operator (oncall)"`, `"cause":"operator"`, `"by":"oncall"`}},
		{"reset", tr(fallback.Fallback, fallback.Primary, "up/b", "up/a", "reset", " (by oncall)", time.Time{}),
			[]string{`"reason":"reset by an operator (oncall)"`, `"by":"oncall"`}},
		{"reset, no name", tr(fallback.Fallback, fallback.Primary, "up/b", "up/a", "reset", "", time.Time{}),
			[]string{`"reason":"reset by an operator"`}},
		{"hold end", tr(fallback.Fallback, fallback.Recovering, "up/b", "up/a", "hold_end", "INC-42 (by oncall)", until),
			[]string{`"reason":"the operator's hold of up/a ended: probing it"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logTransitions(slog.New(slog.NewJSONHandler(&buf, nil)))("smart", tc.t)
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log line lacks %s: %s", w, buf.String())
				}
			}
			if tc.t.Manual != "" && strings.Contains(buf.String(), "failed") {
				t.Errorf("an operator's act logged as a failure: %s", buf.String())
			}
		})
	}
}

// TestTransitionLogOfAnAdminHold: the line serve logs for a hold made
// through POST /admin/breakers/{model} names the admin key.
func TestTransitionLogOfAnAdminHold(t *testing.T) {
	srv, log := loggingGateway(t, transitionConfig(t, "up/b"), "")
	if code := postAs(t, srv, "/admin/breakers/smart", "sk-admin", `{"action":"hold","ttl":"10m","reason":"INC-42"}`); code != http.StatusOK {
		t.Fatalf("hold: %d (log %s)", code, log)
	}
	line := log.line()
	for _, w := range []string{`"reason":"up/a held by an operator (oncall) until `, `: INC-42"`, `"by":"oncall"`, `"action":"hold"`} {
		if !strings.Contains(line, w) {
			t.Errorf("breaker line lacks %s: %q", w, line)
		}
	}
}

// TestTransitionLogOfAdminEnableAndReset: the lines serve logs for an
// enable and a reset made through POST /admin/breakers/{model} name the
// admin key, as a hold's and a disable's do, though the library's Enable
// and Reset take no reason.
func TestTransitionLogOfAdminEnableAndReset(t *testing.T) {
	srv, log := loggingGateway(t, transitionConfig(t, "up/b", "up/c"), "")
	acts := []struct {
		body string
		want []string // in the act's last breaker line
	}{
		{`{"action":"hold","ttl":"10m","reason":"INC-42"}`, []string{`"action":"hold"`, `"by":"oncall"`}},
		{`{"action":"disable","entry":"up/b","reason":"flaky"}`, []string{`"action":"disable"`, `"by":"oncall"`}},
		{`{"action":"enable","entry":"up/b"}`, []string{`"reason":"up/b enabled by an operator (oncall)"`, `"action":"enable"`, `"by":"oncall"`}},
		{`{"action":"reset"}`, []string{`"reason":"reset by an operator (oncall)"`, `"action":"reset"`, `"by":"oncall"`}},
	}
	for _, a := range acts {
		log.reset()
		if code := postAs(t, srv, "/admin/breakers/smart", "sk-admin", a.body); code != http.StatusOK {
			t.Fatalf("%s: %d (log %s)", a.body, code, log)
		}
		line := log.line()
		for _, w := range a.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: breaker line lacks %s: %q", a.body, w, line)
			}
		}
	}
}
