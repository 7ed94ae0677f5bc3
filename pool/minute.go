package pool

import "time"

// minuteBuckets is the ring that counts a deployment's attempts over the
// last minute, in buckets of minuteBucket (the admin view's share).
const (
	minuteBuckets = 6
	minuteBucket  = int64(10 * time.Second)
)

// minute counts attempts started over the last minute, lazily: a bucket is
// cleared when it is next used for a later span.
type minute struct {
	span  [minuteBuckets]int64 // the span (t / minuteBucket) each bucket counts
	count [minuteBuckets]int
}

// add counts one attempt started at t.
func (m *minute) add(t int64) {
	s := t / minuteBucket
	i := int(uint64(s) % minuteBuckets)
	if m.span[i] != s {
		m.span[i], m.count[i] = s, 0
	}
	m.count[i]++
}

// total returns the attempts started within the last minute of t (the
// current bucket and the five before it).
func (m *minute) total(t int64) int {
	s, n := t/minuteBucket, 0
	for i := range minuteBuckets {
		if d := s - m.span[i]; d >= 0 && d < minuteBuckets {
			n += m.count[i]
		}
	}
	return n
}
