package retry_test

import (
	"encoding/json"
	"testing"

	"github.com/loopctl/loopctl-go/retry"
)

func TestClassJitterText(t *testing.T) {
	for _, c := range []retry.Class{retry.Transient, retry.RateLimited, retry.Permanent} {
		b, err := json.Marshal(c)
		if err != nil || string(b) != `"`+c.String()+`"` {
			t.Fatalf("Marshal(%v) = %s, %v", c, b, err)
		}
		var got retry.Class
		if err := json.Unmarshal(b, &got); err != nil || got != c {
			t.Fatalf("Unmarshal(%s) = %v, %v", b, got, err)
		}
	}
	for _, j := range []retry.Jitter{retry.FullJitter, retry.ProportionalJitter} {
		b, err := json.Marshal(j)
		if err != nil || string(b) != `"`+j.String()+`"` {
			t.Fatalf("Marshal(%v) = %s, %v", j, b, err)
		}
		var got retry.Jitter
		if err := json.Unmarshal(b, &got); err != nil || got != j {
			t.Fatalf("Unmarshal(%s) = %v, %v", b, got, err)
		}
	}
	var c retry.Class
	var j retry.Jitter
	for _, bad := range []string{"", "Transient", "none"} {
		if c.UnmarshalText([]byte(bad)) == nil || j.UnmarshalText([]byte(bad)) == nil {
			t.Errorf("UnmarshalText(%q) = nil error", bad)
		}
	}
	if _, err := retry.Class(9).MarshalText(); err == nil {
		t.Error("Class(9).MarshalText() = nil error")
	}
	if _, err := retry.Jitter(-1).MarshalText(); err == nil {
		t.Error("Jitter(-1).MarshalText() = nil error")
	}
}
