package pool

import "testing"

// TestSplitmix64Vectors holds splitmix64 to Vigna's reference generator:
// its outputs from seed 0 are splitmix64(0), splitmix64(0x9e3779b97f4a7c15),
// …, so replicas built from any implementation of the spec agree.
func TestSplitmix64Vectors(t *testing.T) {
	const gamma = 0x9e3779b97f4a7c15
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for i, w := range want {
		if got := splitmix64(uint64(i) * gamma); got != w {
			t.Errorf("output %d = %#016x, want %#016x", i, got, w)
		}
	}
	if got := unit(0, 0); got != (float64(0xe220a8397b1dcdaf>>11)+0.5)/(1<<53) {
		t.Errorf("unit(0, 0) = %v", got)
	}
}
