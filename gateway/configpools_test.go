package gateway

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

func TestMemberSettings(t *testing.T) {
	tests := []struct {
		name string
		in   Breaker
		want breaker.Settings
	}{
		{"defaults", Breaker{}, breaker.Settings{Name: "member@a/m", FailureThreshold: 3, RecoveryDuration: 30 * time.Second, ProbeTimeout: 5 * time.Minute, QuotaCooldown: 10 * time.Minute}},
		{"set", Breaker{TripThreshold: 5, RecoveryTimeout: time.Second, RecoveryBackoff: 2, MaxRecoveryTimeout: time.Minute, SlowCallAfter: time.Second},
			breaker.Settings{Name: "member@a/m", FailureThreshold: 5, RecoveryDuration: time.Second, ProbeTimeout: 5 * time.Minute, QuotaCooldown: 10 * time.Minute, RecoveryBackoff: 2, MaxRecoveryTimeout: time.Minute, SlowCallAfter: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := memberSettings("a/m", tt.in)
			if got.Name != tt.want.Name || got.FailureThreshold != tt.want.FailureThreshold || got.RecoveryDuration != tt.want.RecoveryDuration ||
				got.ProbeTimeout != tt.want.ProbeTimeout || got.QuotaCooldown != tt.want.QuotaCooldown || got.RecoveryBackoff != tt.want.RecoveryBackoff ||
				got.MaxRecoveryTimeout != tt.want.MaxRecoveryTimeout || got.SlowCallAfter != tt.want.SlowCallAfter {
				t.Fatalf("memberSettings = %+v, want %+v", got, tt.want)
			}
			if _, err := breaker.New(got); err != nil {
				t.Fatalf("breaker.New: %v", err)
			}
		})
	}
}
