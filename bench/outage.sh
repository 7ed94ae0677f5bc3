#!/usr/bin/env bash
# outage.sh: what an outage of the primary model costs the client of
# `loopctl serve`, next to the Portkey gateway, in one run against scripted
# upstreams on loopback (see cmd/outage for what is measured and how).
# About 14 minutes with the defaults on 2 cores (under 18).
#
# loopctl is built from this repository (go build ./cmd/loopctl) and run as a
# separate process with the YAML config the command writes. Portkey (npm
# @portkey-ai/gateway, pinned in portkey/package-lock.json) is installed with
# npm ci when node_modules is missing; without node or npm, or if the install
# fails, it is skipped with a message.
#
# Flags are passed to the command, e.g. a shorter run:
#   ./outage.sh -before 5s -outage 15s -after 15s -kinds 500,429
# Issue 34's partial-outage runs (docs/performance.md, "Partial outages"):
#   ./outage.sh -kinds brownout -outage 180s -probes ""                  # with backoff (2)
#   ./outage.sh -kinds brownout -outage 180s -probes "" -recovery-backoff 0 -targets loopctl
#   ./outage.sh -kinds brownout,slow -outage 30s -probes ""
# The output is also kept under results/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")"

. portkey/install.sh
ensure_portkey outage.sh

mkdir -p results
out="results/outage-$(date -u +%Y%m%dT%H%M%SZ).txt"
(cd .. && go build -o bench/results/loopctl ./cmd/loopctl)
go build -o results/outage-bench ./cmd/outage
GOMAXPROCS=${GOMAXPROCS:-2} ./results/outage-bench -loopctl results/loopctl "$@" | tee "$out"
echo "(kept in bench/$out)"
