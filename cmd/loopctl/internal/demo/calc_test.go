package demo

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestCalc(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  string
	}{
		{"17 * 23", 391, ""},
		{"1200 / 16", 75, ""},
		{"(3 + 4) * 6", 42, ""},
		{"2 * (5 + 7)", 24, ""},
		{"1 - 2 - 3", -4, ""}, // left-associative
		{"8 / 4 / 2", 1, ""},
		{"2 + 3 * 4", 14, ""},
		{"-(2 + 3)", -5, ""},
		{"--4", 4, ""},
		{"3 x 4", 12, ""},
		{" 1.5 * 2 ", 3, ""},
		{"", 0, "unexpected end"},
		{"1 +", 0, "unexpected end"},
		{"(1 + 2", 0, "missing ')'"},
		{"1 + 2)", 0, "unexpected ')'"},
		{"1 / 0", 0, "division by zero"},
		{"2 ^ 3", 0, "unexpected '^'"},
		{"1..2", 0, "bad number"},
		{strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200), 0, "nested too deeply"},
		{"1" + strings.Repeat("0", 400), 0, "bad number"},
	}
	for _, tt := range tests {
		got, err := Calc(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Calc(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Calc(%q) = %v, %v; want an error mentioning %q", tt.in, got, err, tt.err)
		}
	}
}

// FuzzCalc checks that Calc never panics, returns only finite numbers, and
// agrees with Go on "a op b" for small integers.
func FuzzCalc(f *testing.F) {
	for _, s := range []string{"17 * 23", "(3 + 4) * 6", "-(1)", "1/0", "((", "9 x 9", "1e5", "."} {
		f.Add(s, int64(3), int64(4), uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, a, b int64, op uint8) {
		if v, err := Calc(s); err == nil && (math.IsInf(v, 0) || math.IsNaN(v)) {
			t.Fatalf("Calc(%q) = %v", s, v)
		}
		a, b = a%1000, b%1000
		ops := "+-*/"
		o := ops[int(op)%len(ops)]
		expr := strconv.FormatInt(a, 10) + " " + string(o) + " " + strconv.FormatInt(b, 10)
		got, err := Calc(expr)
		var want float64
		switch o {
		case '+':
			want = float64(a + b)
		case '-':
			want = float64(a - b)
		case '*':
			want = float64(a * b)
		case '/':
			if b == 0 {
				if err == nil {
					t.Fatalf("Calc(%q) = %v, want division by zero", expr, got)
				}
				return
			}
			want = float64(a) / float64(b)
		}
		if err != nil || got != want {
			t.Fatalf("Calc(%q) = %v, %v; want %v", expr, got, err, want)
		}
	})
}
