package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway"
)

// TestAdminTrips: the table and one breaker's detail show the trip count
// and the cooldown in force (SEMANTICS §9.1, GATEWAY §9.1).
func TestAdminTrips(t *testing.T) {
	until := time.Now().Add(20 * time.Second)
	v := gateway.BreakerView{Model: "smart", State: fallback.Fallback, Routed: "up/b", OpenUntil: &until, OpenReason: "backoff",
		Cooldown: "20s", Counters: gateway.CountersView{Trips: 2},
		Thresholds: gateway.ThresholdsView{RecoveryBackoff: 2, MaxRecoveryTimeout: "50s"}, Chain: []gateway.EntryView{}}
	var b bytes.Buffer
	writeBreakerTable(&b, []gateway.BreakerView{v}, time.Now())
	lines := strings.Split(b.String(), "\n")
	head, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	at := func(col string) int {
		for i, h := range head {
			if h == col {
				return i
			}
		}
		t.Fatalf("no %s column in\n%s", col, b.String())
		return -1
	}
	// OPEN UNTIL is two words in the header and three in a row ("…Z, in 20s").
	if got := row[at("TRIPS")+1]; got != "2" {
		t.Errorf("TRIPS %q in\n%s", got, b.String())
	}
	if got := row[at("COOLDOWN")+1]; got != "20s" {
		t.Errorf("COOLDOWN %q in\n%s", got, b.String())
	}
	b.Reset()
	writeBreaker(&b, v, time.Now())
	if !strings.Contains(b.String(), "2, cooldown 20s (recovery_backoff 2, max_recovery_timeout 50s)") {
		t.Errorf("detail:\n%s", b.String())
	}
}
