#!/usr/bin/env bash
# gateway.sh: measure the latency loopctl's gateway adds and its throughput,
# next to direct calls, a minimal httputil.ReverseProxy and the Portkey
# gateway, every target a process of its own pinned to the same cores
# (taskset), in one run against the same scripted upstream on loopback
# (see cmd/gateway for what is measured and how, translated requests
# included: GATEWAY.md §8.9, and a three-member pool next to a one-entry
# model: GATEWAY.md §11). Under two minutes.
#
# Portkey (npm @portkey-ai/gateway, pinned in portkey/package-lock.json) is
# installed with npm ci when node_modules is missing; without node or npm,
# or if the install fails, it is skipped with a message.
#
# Flags are passed to the command, e.g. ./gateway.sh -rounds 20 -p99 5ms.
# The output is also kept under results/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")"

. portkey/install.sh
ensure_portkey gateway.sh

mkdir -p results
out="results/gateway-$(date -u +%Y%m%dT%H%M%SZ).txt"
go build -o results/gateway-bench ./cmd/gateway
(cd .. && go build -o bench/results/loopctl ./cmd/loopctl)
GOMAXPROCS=${GOMAXPROCS:-2} ./results/gateway-bench -loopctl results/loopctl "$@" | tee "$out"
echo "(kept in bench/$out)" >&2
