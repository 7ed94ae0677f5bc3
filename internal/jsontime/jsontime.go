// Package jsontime writes optional times into JSON structs: a zero time is a
// nil pointer, so that an `omitempty` field leaves it out, and reads them
// back. It imports only the standard library, like the core packages that
// use it for their snapshots.
package jsontime

import "time"

// Omit returns &t, or nil for the zero time (which the snapshot leaves out).
func Omit(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Value returns *t, or the zero time for nil (a time the JSON left out).
func Value(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
