package breaker

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// coverage counts the rev 2 situations the histories reached (not safe for
// concurrent use: the property tests do not run in parallel).
var coverage = map[string]int{}

func TestPropertyRandomHistories(t *testing.T) {
	const histories, steps = 400, 300
	clear(coverage)
	defer func() {
		for _, c := range []string{
			"stale failure in closed probe held false", "stale failure in open probe held false",
			"probe cut at its lease", "timeout dated before now",
			"failure-rate trip", "slow-call trip",
			"third trip in a row", "trip count reset", "slow probe", "a hint decides",
			"hint opening from closed", "hint opening from half-open", "quota opening from closed", "quota opening from half-open",
		} {
			if coverage[c] == 0 && !t.Failed() {
				t.Errorf("no history reached %q (coverage %v)", c, coverage)
			}
		}
	}()
	for seed := uint64(1); seed <= histories; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x10097))
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			history(t, steps, r.IntN)
		})
		if t.Failed() {
			t.Logf("failing seed: %d", seed)
			return
		}
	}
}

func FuzzHistory(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 3, 3, 0, 7, 2, 0, 2, 0})
	f.Add([]byte{1, 5, 9, 0, 3, 0, 3, 0, 3, 7, 2, 0, 0, 7, 3, 0, 4, 0, 0, 2})
	f.Add([]byte("the probe has a lease; a lost probe cannot strand the machine"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pos := 0
		next := func(n int) int {
			if pos >= len(data) {
				return 0
			}
			v := int(data[pos]) % n
			pos++
			return v
		}
		history(t, len(data), next)
	})
}
