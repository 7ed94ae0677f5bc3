package dashboard_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/fallback"
)

// TestPoolRows: a model's pool rows, as its program read them for the
// poll, are in its ModelState and in state.json; a model without pools
// has no "pools" key.
func TestPoolRows(t *testing.T) {
	m, err := fallback.New(fallback.Settings{Primary: "pool/p"})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := fallback.New(fallback.Settings{Primary: "up/z"})
	until := time.Date(2026, 12, 7, 2, 0, 5, 0, time.UTC)
	rows := []dashboard.PoolState{{Entry: "pool/p", Members: []dashboard.MemberState{
		{Name: "up/a", Weight: 1, State: breaker.Open, OpenUntil: &until, OpenReason: "recovery_timeout", Trips: 1},
		{Name: "up/b", Weight: 2, State: breaker.Closed, OpenReason: "manual", Disabled: true, Stream: "1.2s", InFlight: 3, Share: 0.5},
	}}}
	st := dashboard.Read(func() dashboard.Sources {
		return dashboard.Sources{Models: []dashboard.Model{{Name: "claude", Manager: m, Pools: rows}, {Name: "plain", Manager: plain}}}
	}, nil)
	if len(st.Models) != 2 || len(st.Models[0].Pools) != 1 || len(st.Models[0].Pools[0].Members) != 2 {
		t.Fatalf("state: %+v", st.Models)
	}
	b, _ := json.Marshal(st.Models[0].Pools[0].Members[1])
	want := `{"name":"up/b","weight":2,"state":"closed","open_reason":"manual","disabled":true,"trips":0,"stream":"1.2s","in_flight":3,"share":0.5}`
	if string(b) != want {
		t.Errorf("member row JSON:\n got %s\nwant %s", b, want)
	}
	if p, _ := json.Marshal(st.Models[1]); strings.Contains(string(p), `"pools"`) {
		t.Errorf("a model without pools has a pools key: %s", p)
	}
}
