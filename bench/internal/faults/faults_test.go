package faults

import "testing"

// TestBrownoutPattern: the brownout fails exactly 3 requests in every 10 and
// never two in a row, across the tens too.
func TestBrownoutPattern(t *testing.T) {
	fails := 0
	for n := range 1000 {
		if BrownoutFails(n) {
			fails++
			if BrownoutFails(n + 1) {
				t.Fatalf("requests %d and %d both fail", n, n+1)
			}
		}
		if (n+1)%10 == 0 && fails != 3*(n+1)/10 {
			t.Fatalf("%d failures in the first %d requests, want %d", fails, n+1, 3*(n+1)/10)
		}
	}
}
