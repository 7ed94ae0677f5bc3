package pool_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestHashVectors fixes the session and member hashes and the rendezvous
// score (docs/SEMANTICS.md §9.3 rule 3b), so that every replica, in any
// version or language, homes a session on the same member.
func TestHashVectors(t *testing.T) {
	for _, v := range []struct {
		s    string
		want uint64
	}{
		{"", 0xe3b0c44298fc1c14},
		{"anthropic/claude-sonnet-4-5", 0xa2c3875497ad1594},
		{"anthropic-b/claude-sonnet-4-5", 0x2cdf9dbd7759b263},
		{"bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", 0xd51d0b62385283a3},
		{"session-1", 0x84097828fc31a8c8},
	} {
		if got := pool.Hash(v.s); got != v.want {
			t.Errorf("Hash(%q) = %#016x, want %#016x", v.s, got, v.want)
		}
	}
	k := pool.Hash("session-1")
	for _, v := range []struct {
		member string
		w      float64
		want   float64
	}{
		{"anthropic/claude-sonnet-4-5", 1, 2.7725669454383715},
		{"anthropic/claude-sonnet-4-5", 2, 5.545133890876743},
		{"anthropic-b/claude-sonnet-4-5", 1, 0.626501982416365},
		{"bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", 1, 2.3825430168409794},
	} {
		if got := pool.Score(k, pool.Hash(v.member), v.w); got != v.want {
			t.Errorf("Score(session-1, %s, %v) = %v, want %v", v.member, v.w, got, v.want)
		}
	}
	if s := pool.SessionOf(""); s != (pool.Session{}) {
		t.Errorf("SessionOf(\"\") = %v, want no session", s)
	}
	if h, ok := pool.SessionOf("session-1").Hash(); !ok || h != k {
		t.Errorf("SessionOf(session-1).Hash() = %#x, %v", h, ok)
	}
}

// TestRendezvousMovesOnlyTheLeaversSessions: when a member leaves (is not
// admitted), the sessions homed on the others keep their home, and those of
// the leaver spread over the rest; weights and member sets are random. The
// slack is set wide: at idle a member's cost is 1/w, so with weights further
// apart than the slack the lighter homes fail the slack bound (rule 3b),
// which is not what this test is about.
func TestRendezvousMovesOnlyTheLeaversSessions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 2 + r.IntN(7)
		weights := make([]float64, n)
		for i := range weights {
			weights[i] = float64(1 + r.IntN(4))
		}
		f := newFixture(t, weights, func(s *pool.Settings, _ []breaker.Settings) { s.AffinitySlack = 1e9 })
		leaver := r.IntN(n)
		moved := 0
		for k := range 500 {
			s := pool.SessionOf(fmt.Sprintf("trial %d session %d", trial, k))
			before := f.p.Home(s)
			var q pool.Request
			a := f.choose(t, &q, pool.Need{Session: s, CanServe: func(i int) bool { return i != leaver }})
			a.Cancel(f.c.Now())
			if before != leaver && a.Member() != before {
				t.Fatalf("trial %d: session homed on m%d moved to m%d when m%d left", trial, before, a.Member(), leaver)
			}
			if before == leaver {
				moved++
				if want := homeAmong(f, s, others(n, leaver)...); a.Member() != want {
					t.Fatalf("trial %d: the leaver's session went to m%d, want its next home m%d", trial, a.Member(), want)
				}
			}
		}
		if w := weights[leaver] / sum(weights); math.Abs(float64(moved)/500-w) > 0.1 {
			t.Errorf("trial %d: %d of 500 sessions moved, want about %.0f", trial, moved, 500*w)
		}
	}
}

// others returns the members 0…n−1 but leaver.
func others(n, leaver int) []int {
	var out []int
	for i := range n {
		if i != leaver {
			out = append(out, i)
		}
	}
	return out
}

// sum returns the sum of ws.
func sum(ws []float64) float64 {
	var s float64
	for _, w := range ws {
		s += w
	}
	return s
}

// TestRendezvousWeights: a member of weight w is home to a share w / Σw of
// the sessions (within 2 points over 20,000 sessions).
func TestRendezvousWeights(t *testing.T) {
	weights := []float64{1, 2, 3, 4}
	f := newFixture(t, weights, nil)
	count := make([]int, len(weights))
	const sessions = 20000
	for k := range sessions {
		count[f.p.Home(pool.SessionOf(fmt.Sprint("s", k)))]++
	}
	for i, w := range weights {
		if share := float64(count[i]) / sessions; math.Abs(share-w/10) > 0.02 {
			t.Errorf("m%d (weight %v) homes %.3f of the sessions, want %.2f", i, w, share, w/10)
		}
	}
}

// TestWeightsUnderLoad: with equal estimates and the pool under load (mean
// in flight ≥ 10 × members), each member's share of 10,000 requests is its
// weight's share within 3 points (power of two choices on cost, rule 3c).
// Requests finish in a random order, each in flight for a similar time.
func TestWeightsUnderLoad(t *testing.T) {
	for _, weights := range [][]float64{{1, 1, 1}, {1, 2, 3}, {1, 1, 2, 4}} {
		t.Run(fmt.Sprint(weights), func(t *testing.T) {
			src := rand.New(rand.NewPCG(3, 4))
			f := newFixture(t, weights, func(s *pool.Settings, _ []breaker.Settings) { s.Rand = src.Uint64 })
			sumW := sum(weights)
			load := 12 * len(weights)
			var open []pool.Attempt
			count := make([]int, len(weights))
			const requests = 10000
			for k := range requests + load {
				if len(open) >= load {
					j := src.IntN(len(open))
					open[j].Cancel(f.c.Now())
					open[j] = open[len(open)-1]
					open = open[:len(open)-1]
				}
				var q pool.Request
				a := f.choose(t, &q, pool.Need{})
				open = append(open, a)
				if k >= load { // after the warm-up
					count[a.Member()]++
				}
			}
			for i, w := range weights {
				if share := float64(count[i]) / requests; math.Abs(share-w/sumW) > 0.03 {
					t.Errorf("m%d (weight %v) served %.3f, want %.3f ± 0.03", i, w, share, w/sumW)
				}
			}
		})
	}
}
