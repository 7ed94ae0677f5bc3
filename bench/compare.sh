#!/usr/bin/env bash
# compare.sh: run loopctl-go's side-by-side benchmark suite and print
# (a) benchstat's table and (b) loopctl's time and allocations as a ratio to
# each peer's, with the performance targets marked met or missed.
#
# Environment:
#   COUNT      rounds (samples per benchmark; benchstat wants >= 6)  default 6
#   BENCHTIME  -benchtime of each sample                            default 100ms
#   CPU        -cpu list for the RunParallel benchmarks             default 1,2
#
# The test binary is built once and run COUNT times with -count 1, each
# round running every benchmark once (single-goroutine benchmarks with
# -cpu 1, then the *Parallel ones with -cpu $CPU): rounds interleave the
# libraries in time, so a burst of noise from the rest of the machine hits
# all of them instead of one library's samples. The ratio table uses medians.
# Raw output is kept under results/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")"

COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-100ms}
CPU=${CPU:-1,2}
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da

export PATH="$(go env GOPATH)/bin:$PATH"
if ! command -v benchstat >/dev/null 2>&1; then
	echo "installing benchstat ($BENCHSTAT_VERSION)" >&2
	go install "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION" ||
		go install golang.org/x/perf/cmd/benchstat@latest
fi

mkdir -p results
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="results/raw-$stamp.txt"
bin="results/bench.test"
go test -c -o "$bin" .
: >"$raw"

serial='^Benchmark(Closed|ClosedDoFloor|Open|HalfOpenContention|Registry|Fallback|RetryFirstTry)$'
parallel='^Benchmark.*Parallel$'
run() { # run PATTERN CPU: one round of PATTERN, appended to $raw
	local out
	if ! out=$("./$bin" -test.run '^$' -test.benchmem -test.count 1 \
		-test.benchtime "$BENCHTIME" -test.bench "$1" -test.cpu "$2" 2>&1); then
		printf '%s\n' "$out" >&2
		echo "compare.sh: benchmark run failed (pattern $1, cpu $2)" >&2
		exit 1
	fi
	printf '%s\n' "$out" >>"$raw"
}
for i in $(seq 1 "$COUNT"); do
	echo "round $i/$COUNT" >&2
	run "$serial" 1
	run "$parallel" "$CPU"
done
cp "$raw" results/latest.txt
rm -f "$bin"

echo
echo "# benchstat (raw: bench/$raw)"
echo
# One table per group of comparable libraries; time and allocations only.
units='.unit:(sec/op OR allocs/op)'
benchstat -filter "$units .name:/^(Closed|Open|HalfOpenContention)(Parallel)?\$/" -col /lib "$raw"
echo
benchstat -filter "$units .name:/^(RetryFirstTry|Registry)(Parallel)?\$/" -col /lib "$raw"
echo
benchstat -filter "$units .name:/^Fallback(Parallel)?\$/" "$raw"
echo
go run ./cmd/ratio "$raw"
echo
echo "Command: COUNT=$COUNT BENCHTIME=$BENCHTIME CPU=$CPU bench/compare.sh"
