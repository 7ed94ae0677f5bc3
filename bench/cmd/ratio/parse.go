package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// sample is one benchmark result line.
type sample struct {
	ns, bytes, allocs float64
}

// key identifies a benchmark without its library: the family (the top-level
// name without "Benchmark"), the other sub-benchmark parameters (e.g.
// "tools=100"), and GOMAXPROCS.
type key struct {
	family string
	params string
	procs  int
}

func (k key) String() string {
	s := k.family
	if k.params != "" {
		s += "/" + k.params
	}
	return s
}

// result is the median of all samples of one benchmark.
type result struct {
	key
	lib   string
	n     int     // samples
	ns    float64 // median ns/op
	minNS float64 // fastest sample: the least disturbed by other load
	bytes float64
	alloc float64
}

// parse reads `go test -bench` output and returns the median of every
// benchmark, in first-appearance order. Lines that are not benchmark results
// are ignored. A name's "-N" suffix is GOMAXPROCS; without one it is 1 (the
// testing package omits "-1").
func parse(r io.Reader) ([]result, error) {
	type acc struct {
		key
		lib     string
		samples []sample
	}
	var order []string
	all := map[string]*acc{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // not a result line (e.g. a log line)
		}
		name, procs := splitProcs(f[0])
		s, ok := units(f[2:])
		if !ok {
			return nil, fmt.Errorf("ratio: no ns/op in %q", sc.Text())
		}
		id := name + "\x00" + strconv.Itoa(procs)
		a := all[id]
		if a == nil {
			k, lib := splitName(name)
			k.procs = procs
			a = &acc{key: k, lib: lib}
			all[id] = a
			order = append(order, id)
		}
		a.samples = append(a.samples, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]result, 0, len(order))
	for _, id := range order {
		a := all[id]
		out = append(out, result{
			key:   a.key,
			lib:   a.lib,
			n:     len(a.samples),
			ns:    median(a.samples, func(s sample) float64 { return s.ns }),
			minNS: minimum(a.samples),
			bytes: median(a.samples, func(s sample) float64 { return s.bytes }),
			alloc: median(a.samples, func(s sample) float64 { return s.allocs }),
		})
	}
	return out, nil
}

// splitProcs splits "BenchmarkX/lib=y-2" into "BenchmarkX/lib=y" and 2.
func splitProcs(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i < strings.LastIndexByte(name, '/') {
		return name, 1
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n <= 0 {
		return name, 1
	}
	return name[:i], n
}

// splitName splits "BenchmarkRegistry/tools=1/lib=loopctl" into its key and
// library. A name without a lib= element belongs to lib "loopctl".
func splitName(name string) (key, string) {
	parts := strings.Split(strings.TrimPrefix(name, "Benchmark"), "/")
	k := key{family: parts[0]}
	lib := "loopctl"
	var params []string
	for _, p := range parts[1:] {
		if v, ok := strings.CutPrefix(p, "lib="); ok {
			lib = v
			continue
		}
		params = append(params, p)
	}
	k.params = strings.Join(params, "/")
	return k, lib
}

// units reads "12.3 ns/op 0 B/op 0 allocs/op" (in any order, with any other
// metrics mixed in).
func units(f []string) (sample, bool) {
	var s sample
	var haveNS bool
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			continue
		}
		switch f[i+1] {
		case "ns/op":
			s.ns, haveNS = v, true
		case "B/op":
			s.bytes = v
		case "allocs/op":
			s.allocs = v
		}
	}
	return s, haveNS
}

func minimum(ss []sample) float64 {
	m := ss[0].ns
	for _, s := range ss[1:] {
		m = min(m, s.ns)
	}
	return m
}

func median(ss []sample, get func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = get(s)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
