package retrybudget

import (
	"sync"
	"testing"
)

func TestBucket(t *testing.T) {
	for _, c := range []struct {
		name        string
		feed, burst float64
		feeds       int
		want        int // retries allowed after spending the start and feeding feeds times
		start       int // retries the full bucket allows
	}{
		{"defaults", 0, 0, 5, 1, 10},
		{"feed 0.5 burst 2", 0.5, 2, 3, 1, 2},
		{"capped at the burst", 1, 3, 100, 3, 3},
		{"fractional burst", 0.25, 2.5, 2, 1, 2},
	} {
		var b Bucket
		b.Init(c.feed, c.burst)
		if got := spend(&b); got != c.start {
			t.Errorf("%s: a full bucket allows %d retries, want %d", c.name, got, c.start)
		}
		for range c.feeds {
			b.Feed()
		}
		if got := spend(&b); got != c.want {
			t.Errorf("%s: after %d feeds %d retries, want %d", c.name, c.feeds, got, c.want)
		}
	}
	var off Bucket
	off.Init(-1, 1)
	if !off.Off() || spend(&off) < 100 {
		t.Error("a negative feed does not turn the budget off")
	}
	var zero Bucket
	if zero.Spend() {
		t.Error("the zero Bucket allows a retry")
	}
}

func spend(b *Bucket) int {
	n := 0
	for n < 100 && b.Spend() {
		n++
	}
	return n
}

// TestBucketConcurrent: concurrent feeds and spends never spend more than
// the start plus what was fed.
func TestBucketConcurrent(t *testing.T) {
	var b Bucket
	b.Init(0.5, 4)
	var mu sync.Mutex
	spent := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Feed()
				if b.Spend() {
					mu.Lock()
					spent++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if max := 4 + 400*0.5; float64(spent) > max || b.Tokens() < 0 {
		t.Fatalf("spent %d (at most %v), %v tokens left", spent, max, b.Tokens())
	}
}

// TestBucketRefund: a refund gives back a spent token, up to the burst, and
// does nothing with the budget off.
func TestBucketRefund(t *testing.T) {
	var b Bucket
	b.Init(0.5, 2)
	b.Refund()
	if got := b.Tokens(); got != 2 {
		t.Fatalf("a refund to a full bucket: %v tokens, want 2", got)
	}
	b.Spend()
	b.Spend()
	b.Refund()
	if got := b.Tokens(); got != 1 {
		t.Fatalf("a refund after two spends: %v tokens, want 1", got)
	}
	var off Bucket
	off.Init(0.5, 3)
	off.Spend()
	off.Retune(-1, 3) // off: keeps its 2 tokens
	off.Refund()
	off.Retune(0.5, 3)
	if got := off.Tokens(); got != 2 {
		t.Fatalf("a refund while off changed the tokens: %v, want 2", got)
	}
}
