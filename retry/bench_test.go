package retry

import (
	"context"
	"testing"
)

func succeed(context.Context) (int, error) { return 1, nil }

func BenchmarkDoFirstTrySuccess(b *testing.B) {
	ctx := context.Background()
	p := Policy{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Do(ctx, p, succeed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDoFirstTrySuccessParallel(b *testing.B) {
	ctx := context.Background()
	p := Policy{OnRetry: func(Attempt) {}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Do(ctx, p, succeed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDoFirstTrySuccessClosure uses a capturing closure and a
// cancellable context, as the agent loop does.
func BenchmarkDoFirstTrySuccessClosure(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Do(ctx, Policy{}, func(context.Context) (int, error) { n++; return n, nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDelay(b *testing.B) {
	p := Policy{Jitter: ProportionalJitter}
	b.ReportAllocs()
	var sink int64
	for i := 0; b.Loop(); i++ {
		sink += int64(p.Delay(i&15, 0.37))
	}
	_ = sink
}

func BenchmarkClassify(b *testing.B) {
	err := error(&StatusError{Code: 503})
	b.ReportAllocs()
	for b.Loop() {
		if Classify(err) != Transient {
			b.Fatal("wrong class")
		}
	}
}
