package openai_test

import (
	"testing"

	"github.com/loopctl/loopctl-go/provider/internal/providertest"
)

// BenchmarkComplete measures one Complete call against a loopback fake
// server (SDK encoding, HTTP round trip, decoding, mapping).
func BenchmarkComplete(b *testing.B) { providertest.BenchmarkComplete(b, harness) }

// BenchmarkCompleteParallel is BenchmarkComplete from parallel goroutines.
func BenchmarkCompleteParallel(b *testing.B) { providertest.BenchmarkCompleteParallel(b, harness) }
