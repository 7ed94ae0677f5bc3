package fleet

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseInts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		ok   bool
		want []int64
	}{
		{"1 2 3", 3, true, []int64{1, 2, 3}},
		{"1 -1 1796060032147958", 3, true, []int64{1, -1, 1796060032147958}},
		{"1 2", 3, false, nil},
		{"1 2 3 4", 3, false, nil},
		{"1 x 3", 3, false, nil},
		{"", 1, false, nil},
		{"1  2", 2, false, nil},
	} {
		dst := make([]int64, tc.n)
		if ok := parseInts(tc.in, dst); ok != tc.ok || (ok && !equal(dst, tc.want)) {
			t.Errorf("parseInts(%q) = %v %v, want %v %v", tc.in, dst, ok, tc.want, tc.ok)
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzParseInts: a notification never panics the parser, and whatever it
// accepts formats back to the same text.
func FuzzParseInts(f *testing.F) {
	f.Add("1796060032147958 4 1 1796060032147961 1 1796060032150000 0", 7)
	f.Add("1 2", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 64 {
			return
		}
		dst := make([]int64, n)
		if !parseInts(s, dst) {
			return
		}
		parts := make([]string, n)
		for i, v := range dst {
			parts[i] = strconv.FormatInt(v, 10)
		}
		if back := strings.Join(parts, " "); back != s && n > 0 {
			// accepted forms such as "+1" or "01" parse to the same numbers
			again := make([]int64, n)
			if !parseInts(back, again) || !equal(again, dst) {
				t.Fatalf("%q -> %v -> %q", s, dst, back)
			}
		}
	})
}
