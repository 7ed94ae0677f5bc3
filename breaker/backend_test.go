package breaker

import (
	"testing"
	"time"
)

// nopShared is a Shared whose gate always grants and whose verdicts do nothing.
type nopShared struct{}

func (nopShared) Allow() (SharedPermit, error) { return SharedPermit{Gen: 1}, nil }
func (nopShared) Settle(SharedPermit, Outcome) {}
func (nopShared) RetryIn() time.Duration       { return 0 }
func (nopShared) State() State                 { return Closed }
func (nopShared) Snapshot() Snapshot           { return Snapshot{} }
func (nopShared) Reset()                       {}

func (nopShared) SettleLimit(SharedPermit, Outcome, time.Time) {}
func (nopShared) Reconfigure(Settings) error                   { return nil }

type nopBackend struct{ s Shared }

func (b nopBackend) Attach(Settings) (Shared, error) { return b.s, nil }

// BenchmarkSharedPath measures what the Backend seam itself costs on a gate
// and a success (the backend does nothing).
func BenchmarkSharedPath(b *testing.B) {
	br, err := New(Settings{Name: "nop", Backend: nopBackend{nopShared{}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p, _ := br.Allow()
		p.Success()
	}
}
