// Command ratio reads `go test -bench -benchmem` output (several -count runs,
// several -cpu values) and prints, per benchmark, loopctl's time and
// allocations as a ratio to each peer's (medians of all samples), then the
// issue's performance targets, each marked met or missed.
//
// Usage:
//
//	go run ./cmd/ratio results/raw.txt
//	go test -bench . -benchmem | go run ./cmd/ratio
//
// It exits 0 whether or not targets are met (a noisy machine must not fail a
// script); the "missed" marks are the verdict. It exits 1 on unreadable input.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	var in io.Reader = os.Stdin
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	rs, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(rs) == 0 {
		fmt.Fprintln(os.Stderr, "ratio: no benchmark results in input")
		os.Exit(1)
	}
	report(os.Stdout, rs)
}
