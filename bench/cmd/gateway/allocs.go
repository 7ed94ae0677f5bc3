package main

import (
	"os/exec"
	"regexp"
	"strconv"
)

var allocsRE = regexp.MustCompile(`BenchmarkHandler\S*\s+\d+\s+[\d.]+ ns/op\s+\d+ B/op\s+(\d+) allocs/op`)

// handlerAllocs runs `go test -bench BenchmarkHandler -benchmem ./gateway/`
// in the repository root and returns its allocs/op, or false when the
// benchmark is missing or fails.
func handlerAllocs(root string) (float64, bool) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkHandler$", "-benchmem", "-benchtime", "2000x", "./gateway/")
	cmd.Dir = root
	out, _ := cmd.CombinedOutput()
	m := allocsRE.FindSubmatch(out)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(string(m[1]), 64)
	return n, err == nil
}
