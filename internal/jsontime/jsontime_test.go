package jsontime

import (
	"testing"
	"time"
)

func TestOmitValue(t *testing.T) {
	at := time.Date(2026, 11, 30, 17, 0, 0, 5, time.UTC)
	tests := []struct {
		name string
		in   time.Time
		nil_ bool
	}{
		{"zero is left out", time.Time{}, true},
		{"a time is kept", at, false},
	}
	for _, tt := range tests {
		p := Omit(tt.in)
		if (p == nil) != tt.nil_ {
			t.Fatalf("%s: Omit = %v", tt.name, p)
		}
		if got := Value(p); !got.Equal(tt.in) {
			t.Errorf("%s: Value(Omit(%v)) = %v", tt.name, tt.in, got)
		}
	}
}
