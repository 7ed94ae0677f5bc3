package pool_test

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/pool"
)

// TestHashIsSHA256: Hash is the first 8 bytes, big-endian, of SHA-256 at
// every length, on both sides of the stack copy's limit.
func TestHashIsSHA256(t *testing.T) {
	for n := range 300 {
		s := strings.Repeat("session-key/", n/12+1)[:n]
		sum := sha256.Sum256([]byte(s))
		if got, want := pool.Hash(s), binary.BigEndian.Uint64(sum[:8]); got != want {
			t.Fatalf("Hash of %d bytes = %#x, want %#x", n, got, want)
		}
	}
}
