package health_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
)

func TestStatusText(t *testing.T) {
	for _, s := range []health.Status{health.Healthy, health.Degraded, health.Unhealthy} {
		b, err := s.MarshalText()
		if err != nil || string(b) != s.String() {
			t.Fatalf("%v.MarshalText() = %q, %v", s, b, err)
		}
		var got health.Status
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Fatalf("UnmarshalText(%q) = %v, %v", b, got, err)
		}
	}
	for _, bad := range []string{"", "Healthy", "sick"} {
		var s health.Status
		if err := s.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) = nil error", bad)
		}
	}
	if _, err := health.Status(-1).MarshalText(); err == nil {
		t.Error("Status(-1).MarshalText() = nil error")
	}
}

func TestToolHealthJSON(t *testing.T) {
	tests := []struct {
		name string
		h    health.ToolHealth
		want string
	}{
		{"fresh", health.ToolHealth{Tool: "search", Stats: health.Stats{EWMA: 1}},
			`{"tool":"search","state":"closed","status":"healthy","stats":{"calls":0,"successes":0,"failures":0,"total_duration":"0s","max_duration":"0s","ewma":1,"success_rate":1,"score":1}}`},
		{"open", health.ToolHealth{Tool: "db", State: breaker.Open, Status: health.Unhealthy,
			Stats: health.Stats{Calls: 4, Successes: 1, Failures: 3, TotalDuration: 1500 * time.Millisecond, MaxDuration: time.Second, EWMA: 0.25}},
			`{"tool":"db","state":"open","status":"unhealthy","stats":{"calls":4,"successes":1,"failures":3,"total_duration":"1.5s","max_duration":"1s","ewma":0.25,"success_rate":0.25,"score":0.25}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.h)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("Marshal = %s\nwant      %s", b, tt.want)
			}
			var got health.ToolHealth
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got != tt.h {
				t.Fatalf("round trip = %+v, want %+v", got, tt.h)
			}
			var st health.Stats
			sb, _ := json.Marshal(tt.h.Stats)
			if err := json.Unmarshal(sb, &st); err != nil || st != tt.h.Stats {
				t.Fatalf("Stats round trip = %+v, %v; want %+v", st, err, tt.h.Stats)
			}
		})
	}
}

func TestStatsJSONErrors(t *testing.T) {
	var s health.Stats
	if err := json.Unmarshal([]byte(`{"total_duration":"soon"}`), &s); err == nil {
		t.Error("bad duration: nil error")
	}
	if err := json.Unmarshal([]byte(`{"calls":2}`), &s); err != nil || s.EWMA != 1 {
		t.Errorf("absent ewma = %v, %v; want 1", s.EWMA, err)
	}
	var h health.ToolHealth
	if err := json.Unmarshal([]byte(`{"tool":"x","status":"fine"}`), &h); err == nil {
		t.Error("unknown status: nil error")
	}
}

func TestRegistrySummaryJSON(t *testing.T) {
	r, err := health.NewRegistry(breaker.Settings{FailureThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := r.Allow("a")
	p.Failure()
	p, _ = r.Allow("b")
	p.Success()
	sum := r.Summary()
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var got []health.ToolHealth
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != sum[0] || got[1] != sum[1] {
		t.Fatalf("round trip of Summary = %+v, want %+v", got, sum)
	}
	if got[0].State != breaker.Open || got[0].Status != health.Unhealthy {
		t.Fatalf("tool a = %+v, want open and unhealthy", got[0])
	}
}
