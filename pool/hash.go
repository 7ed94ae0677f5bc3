package pool

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// Hash returns the first 8 bytes, big-endian, of the SHA-256 of s: the hash
// of a session key and of a member's name in the rendezvous score. It is the
// same in every process and version, so that replicas home a session on the
// same member.
func Hash(s string) uint64 {
	// A string's conversion to bytes allocates past 32 bytes, and session
	// keys are longer (a UUID is 36): up to hashBuf bytes are copied to the
	// stack instead, so that a request's SessionOf allocates nothing.
	var buf [hashBuf]byte
	var sum [sha256.Size]byte
	if len(s) <= hashBuf {
		sum = sha256.Sum256(append(buf[:0], s...))
	} else {
		sum = sha256.Sum256([]byte(s))
	}
	return binary.BigEndian.Uint64(sum[:8])
}

// hashBuf is the longest string Hash hashes from a stack copy.
const hashBuf = 128

// Session is a request's session key, as its hash: requests of one session
// are homed on one member while bounds allow (SEMANTICS §9.3 rule 3b). The
// zero Session is no session: no affinity.
type Session struct {
	hash uint64
	set  bool
}

// SessionOf returns the session of key; an empty key is no session. Only the
// hash is kept, never the key.
func SessionOf(key string) Session {
	if key == "" {
		return Session{}
	}
	return Session{hash: Hash(key), set: true}
}

// SessionHash returns the session whose key hashes to h (by [Hash]), for a
// caller that keeps only the hash.
func SessionHash(h uint64) Session { return Session{hash: h, set: true} }

// Hash returns the session's hash and true, or 0 and false for no session.
func (s Session) Hash() (uint64, bool) { return s.hash, s.set }

// splitmix64 is Vigna's SplitMix64 output for state x: the generator's next
// value after x, 0x9e3779b97f4a7c15 added and the result mixed. splitmix64(0)
// is 0xe220a8397b1dcdaf, the generator's first output from seed 0.
func splitmix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit maps session hash k and member hash m to h in (0, 1): h =
// ((splitmix64(k XOR m) >> 11) + 0.5) / 2^53, exactly, so replicas agree.
func unit(k, m uint64) float64 {
	// The shifted value is below 2^53: as an int64 it converts exactly, to
	// the same float64, without the unsigned conversion's branch.
	return (float64(int64(splitmix64(k^m)>>11)) + 0.5) / (1 << 53)
}

// Score is the weighted rendezvous score −w / ln(h) of a member with hash m
// and weight w for session hash k, h as [unit] says: a session's home is the
// admitted member with the highest score, so that a member that leaves moves
// only the sessions homed on it, and a member of weight 2 is home to twice
// the sessions of one of weight 1.
func Score(k, m uint64, w float64) float64 {
	return -w / math.Log(unit(k, m))
}
