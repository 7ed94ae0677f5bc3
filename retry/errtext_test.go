package retry

import (
	"strings"
	"testing"
)

// TestEscalationErrorRoundsUp: a Retry-After read from an HTTP date is a raw
// duration; the text states it rounded up, as every wait a person reads.
func TestEscalationErrorRoundsUp(t *testing.T) {
	e := &EscalationError{Attempts: 2, RetryAfter: 4996438811}
	if got := e.Error(); !strings.Contains(got, "(retry after 5s)") {
		t.Fatalf("Error() = %q, want (retry after 5s)", got)
	}
}
