package breaker

import (
	"errors"
	"testing"
)

// TestInitInPlace checks that Init makes an embedded zero Breaker behave like
// one from New, and rejects what New rejects.
func TestInitInPlace(t *testing.T) {
	var holder struct {
		calls int
		b     Breaker
	}
	if err := holder.b.Init(Settings{Name: "tool", FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	p, err := holder.b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	p.Failure()
	if _, err := holder.b.Allow(); !errors.Is(err, ErrOpen) {
		t.Fatalf("after the threshold: Allow err = %v, want ErrOpen", err)
	}
	var oe *OpenError
	if _, err := holder.b.Allow(); !errors.As(err, &oe) || oe.Name != "tool" {
		t.Fatalf("refusal = %#v, want an *OpenError named tool", err)
	}
	var bad Breaker
	var se *SettingsError
	if err := bad.Init(Settings{ProbeTimeout: -1}); !errors.As(err, &se) || se.Field != "ProbeTimeout" {
		t.Fatalf("Init with a negative ProbeTimeout: err = %v, want a *SettingsError for ProbeTimeout", err)
	}
	if err := holder.b.Init(Settings{Name: "other"}); err == nil {
		t.Fatal("a second Init succeeded, want an error")
	}
	if oe := holder.b.Name(); oe != "tool" {
		t.Fatalf("after a refused second Init, Name = %q, want tool", oe)
	}
}
