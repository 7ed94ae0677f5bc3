package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/internal/redistest"
)

// Two processes share response pins through one real Redis, under the
// store's prefix, with a TTL of 24 h.
func TestResponsePins(t *testing.T) {
	srv := redistest.Start(t)
	a := startStore(t, srv, Options{Prefix: "pins"}).ResponsePins()
	b := startStore(t, srv, Options{Prefix: "pins"}).ResponsePins()
	other := startStore(t, srv, Options{Prefix: "other"}).ResponsePins()
	ctx := context.Background()
	if err := a.Remember(ctx, "resp_1", "up/b"); err != nil {
		t.Fatal(err)
	}
	if ref, err := b.Lookup(ctx, "resp_1"); err != nil || ref != "up/b" {
		t.Fatalf("b: %q %v", ref, err)
	}
	if ref, err := b.Lookup(ctx, "resp_2"); err != nil || ref != "" {
		t.Fatalf("unknown: %q %v", ref, err)
	}
	if ref, _ := other.Lookup(ctx, "resp_1"); ref != "" {
		t.Fatalf("another prefix sees %q", ref)
	}
	c := newClient(t, srv.Addr())
	ttl, err := c.Do(ctx, c.B().Ttl().Key("{pins:response:resp_1}").Build()).AsInt64()
	if err != nil || ttl <= int64((ResponseTTL-time.Minute)/time.Second) || ttl > int64(ResponseTTL/time.Second) {
		t.Fatalf("ttl %d %v", ttl, err)
	}
}
