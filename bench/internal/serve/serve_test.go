package serve

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	tests := []struct {
		ds   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(5, 1, 3, 2, 4), 0.5, 3 * time.Millisecond},
		{ms(5, 1, 3, 2, 4), 0, time.Millisecond},
		{ms(5, 1, 3, 2, 4), 1, 5 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 3 * time.Millisecond}, // index 1.5 rounds to 2
	}
	for _, tt := range tests {
		if got := Quantile(tt.ds, tt.q); got != tt.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", tt.ds, tt.q, got, tt.want)
		}
	}
}
