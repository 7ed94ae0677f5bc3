package pool

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
)

// scoreHome is the reference of rule 3b: the member of adm with the highest
// Score, ties to the first, every score computed.
func scoreHome(p *Pool, k, adm uint64) int {
	best, top := -1, math.Inf(-1)
	for i := range p.members {
		if adm&(1<<i) == 0 {
			continue
		}
		if sc := Score(k, p.members[i].hash, p.members[i].weight); best < 0 || sc > top {
			best, top = i, sc
		}
	}
	return best
}

// weightedPool returns a pool of the given weights, with members named
// name0, name1, ….
func weightedPool(tb testing.TB, name string, weights []float64) *Pool {
	tb.Helper()
	s := Settings{}
	for i, w := range weights {
		b, err := breaker.New(breaker.Settings{})
		if err != nil {
			tb.Fatal(err)
		}
		s.Members = append(s.Members, Member{Name: fmt.Sprintf("%s%d", name, i), Weight: w, Breaker: b})
	}
	p, err := New(s)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestHomeWeightedIsScoreArgmax: the home with unequal weights, which takes
// the logarithm only for the members whose bounds leave them a chance, is
// the argmax of Score to the bit (ties to the first member) over random
// sessions, weights (near one another, far apart, tiny and huge), member
// counts and admitted sets.
func TestHomeWeightedIsScoreArgmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 3))
	weightSets := []func(i int) float64{
		func(i int) float64 { return float64(i + 1) },
		func(i int) float64 { return 1 + float64(i%2)*1e-12 }, // nearly equal
		func(int) float64 { return rng.Float64()*10 + 1e-3 },
		func(int) float64 { return math.Ldexp(1, rng.IntN(40)-20) },
		func(int) float64 { return math.Exp(rng.NormFloat64() * 8) },
		func(i int) float64 { return []float64{1e-300, 1e300, 1, 2}[i%4] },
		func(i int) float64 { return []float64{pruneMin, pruneMax, 1}[i%3] },
		func(int) float64 { return math.Ldexp(1+rng.Float64(), rng.IntN(1000)-500) },
	}
	checked := 0
	for trial := range 3000 {
		n := 2 + rng.IntN(MaxMembers-1)
		if trial%2 == 0 {
			n = 2 + rng.IntN(9) // pools as configured: a few members
		}
		ws := make([]float64, n)
		for i := range ws {
			ws[i] = weightSets[trial%len(weightSets)](i)
		}
		p := weightedPool(t, fmt.Sprintf("t%d/m", trial), ws)
		if p.equal {
			continue
		}
		for range 40 {
			k := rng.Uint64()
			adm := rng.Uint64() & (1<<n - 1)
			if adm == 0 || rng.IntN(3) == 0 {
				adm = 1<<n - 1
			}
			if got, want := p.homeWeighted(k, adm), scoreHome(p, k, adm); got != want {
				t.Fatalf("weights %v, session %#x, admitted %#x: home %d, Score's argmax %d", ws, k, adm, got, want)
			}
			checked++
		}
	}
	if checked < 50000 {
		t.Fatalf("only %d homes checked", checked)
	}
}

// unsplitmix64 inverts splitmix64: each of its steps is a bijection.
func unsplitmix64(z uint64) uint64 {
	unxorshift := func(y uint64, s uint) uint64 {
		x := y
		for range 64 / s {
			x = y ^ x>>s
		}
		return x
	}
	z = unxorshift(z, 31)
	z *= 0x319642b2d24d8ec3 // the inverse of 0x94d049bb133111eb mod 2^64
	z = unxorshift(z, 27)
	z *= 0x96de1b173f119089 // the inverse of 0xbf58476d1ce4e5b9 mod 2^64
	z = unxorshift(z, 30)
	return z - 0x9e3779b97f4a7c15
}

// TestHomeWeightedAtTheEdges: sessions placed by inverting splitmix64 at
// the ends of h's range, where the bounds are loosest or undefined: h that
// rounds to 1 (the score is −Inf), h just below 1, and the smallest h. The
// home is Score's argmax there too.
func TestHomeWeightedAtTheEdges(t *testing.T) {
	if got := splitmix64(unsplitmix64(0x0123456789abcdef)); got != 0x0123456789abcdef {
		t.Fatalf("unsplitmix64 does not invert splitmix64: %#x", got)
	}
	for _, ws := range [][]float64{
		{1, 2, 3, 0.5, 8},
		{pruneMin, pruneMax, 1, 2 * pruneMin, pruneMax / 2}, // the pruned range's ends
		{math.SmallestNonzeroFloat64, math.MaxFloat64, 1},   // scored without pruning
	} {
		p := weightedPool(t, fmt.Sprintf("edge%v/m", ws), ws)
		checkEdges(t, p)
	}
}

// checkEdges compares p's weighted home with Score's argmax for sessions
// that put h at its range's ends on each member, over every admitted set.
func checkEdges(t *testing.T, p *Pool) {
	t.Helper()
	for _, top := range []uint64{1<<53 - 1, 1<<53 - 2, 1<<53 - 3, 1 << 52, 0, 1} {
		if h := (float64(top) + 0.5) / (1 << 53); top == 1<<53-1 && h != 1 {
			t.Fatalf("h for %#x = %v, want 1 (the rounding this test is about)", top, h)
		}
		for target := range p.members {
			// Session k gives member target the output top (bits 11 and
			// up), the other members whatever follows from k.
			for low := range uint64(4) {
				k := unsplitmix64(top<<11|low) ^ p.members[target].hash
				for adm := uint64(1); adm < 1<<len(p.members); adm++ {
					if got, want := p.homeWeighted(k, adm), scoreHome(p, k, adm); got != want {
						t.Fatalf("weights %v: h top %#x on member %d, admitted %#b: home %d, Score's argmax %d",
							p.weights(), top, target, adm, got, want)
					}
				}
			}
		}
	}
}

// weights returns p's members' weights.
func (p *Pool) weights() []float64 {
	ws := make([]float64, len(p.members))
	for i := range p.members {
		ws[i] = p.members[i].weight
	}
	return ws
}

// TestHomeEqualIsScoreArgmax: with equal weights the home ranks by h alone;
// over random sessions and admitted sets it is Score's argmax.
func TestHomeEqualIsScoreArgmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 4))
	for _, w := range []float64{1, 0.1, 3} {
		p := weightedPool(t, fmt.Sprintf("equal%v/m", w), []float64{w, w, w, w, w, w, w, w})
		for range 100000 {
			k, adm := rng.Uint64(), rng.Uint64()&0xff|1<<rng.IntN(8)
			if got, want := p.homeEqual(k, adm), scoreHome(p, k, adm); got != want {
				t.Fatalf("weight %v, session %#x, admitted %#b: home %d, Score's argmax %d", w, k, adm, got, want)
			}
		}
	}
}
