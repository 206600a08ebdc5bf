#!/bin/bash
# What --metrics costs a call over HTTP at one in flight, pinned to one core, over many short runs.
#
# Each run of the harness starts its own gateways and keeps them for all its rounds, and a run's
# paired difference (metrics on minus off) moves by about ±0.8 µs from one run to the next: as
# much for a build that records nothing per call. Many short runs, with the builds interleaved and
# the order within a round alternating, resolve what one long run cannot.
#
# Usage: scripts/metrics_runs.sh RUNS LOG GATEWAY...   (from the repository's root, after
#        cargo build --release -p pegboard-load; ROUNDS=5 by default)
# then:  python3 crates/pegboard-load/scripts/metrics_runs_summary.py LOG
set -euo pipefail
runs=$1 log=$2
shift 2
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) -eq 1 ]; then order=off,metrics; else order=metrics,off; fi
  for gateway in "$@"; do
    row=$(taskset -c 0 target/release/pegboard-load --backends units --concurrency 1 --fronts http \
      --telemetry "$order" --rounds "${ROUNDS:-5}" --seconds 1 --list-tools 0 --gateway-bin "$gateway" \
      2>/dev/null | grep -E '^\| units.*http \+metrics' || true)
    echo "$i $order $gateway $row" >> "$log"
  done
done
