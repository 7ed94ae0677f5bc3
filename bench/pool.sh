#!/usr/bin/env bash
# pool.sh: loopctl's pools (GATEWAY.md §11) next to the Portkey gateway's
# loadbalance mode, in one run against scripted upstreams of three members
# on loopback (see cmd/pool for what is measured and how): m3 down, a
# brownout, slow, a rate limit its headers announce (chat and Messages), a
# hang with and without hedging, all healthy. About 9 minutes with the
# defaults on 2 cores.
#
# loopctl is built from this repository (go build ./cmd/loopctl) and run as a
# separate process with the YAML config the command writes. Portkey (npm
# @portkey-ai/gateway, pinned in portkey/package-lock.json) is installed with
# npm ci when node_modules is missing; without node or npm, or if the install
# fails, it is skipped with a message.
#
# Flags are passed to the command, e.g. a shorter run:
#   ./pool.sh -duration 20s -sick-from 4s -sick-to 12s -scenarios down,healthy
# The output is also kept under results/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")"

. portkey/install.sh
ensure_portkey pool.sh

mkdir -p results
out="results/pool-$(date -u +%Y%m%dT%H%M%SZ).txt"
(cd .. && go build -o bench/results/loopctl ./cmd/loopctl)
go build -o results/pool-bench ./cmd/pool
GOMAXPROCS=${GOMAXPROCS:-2} ./results/pool-bench -loopctl results/loopctl "$@" | tee "$out"
echo "(kept in bench/$out)"
