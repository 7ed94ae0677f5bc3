package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// probeWires reports which other wires the loopctl target serves: a 404 on
// the probe means the built loopctl does not (a printed note; their
// streaming TTFB is then not measured).
func probeWires(base string) {
	c := &http.Client{Timeout: 5 * time.Second}
	for _, w := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"bench","input":"ping","stream":true}`},
		{"/v1/messages", `{"model":"bench","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"ping"}]}`},
	} {
		res, err := c.Post(base+w.path, "application/json", bytes.NewReader([]byte(w.body)))
		if err != nil {
			fmt.Printf("  %s: probe failed (%v): skipped\n", w.path, err)
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusNotFound {
			fmt.Printf("  %s: 404 from this loopctl build: skipped\n", w.path)
			continue
		}
		fmt.Printf("  %s: served (HTTP %d); its streaming TTFB is not measured yet\n", w.path, res.StatusCode)
	}
}

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
