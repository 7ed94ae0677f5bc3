//go:build race

package main

// raceBuild: the test builds loopctl with -race too, so that it reuses the
// packages `go test -race` has already compiled (and checks loopctl under
// the race detector).
const raceBuild = true
