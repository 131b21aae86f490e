#!/usr/bin/env bash
# The fleet (docs/fleet.md), release build, one run, each figure against a baseline measured in the
# same run (Benchmarks/fleet-bench.py says how):
#   (a) durable inserts from 16 connections with X-ZUMO-INSTALLATION-ID (1,000 ids) against the same
#       without it (no device to track): both rates and the ratio (target ≥ 0.97);
#   (c) /service/devices p50 with 100 devices known against 10,000 (target ≤ 2);
#   the fleet: DEVICES (default 1,000) simulated devices for DURATION seconds (default 600), one pull
#       every PULL_PERIOD seconds (default 30): advancing, inserting, idle, lossy and one frozen;
#       PASS/FAIL for when the frozen one is reported stalled (≤ stalled-after + one pull period after
#       it froze) and for false positives (none);
#   (b) the tracking's database writes per second over the fleet phase (target ≤ 1).
# Other arguments go to fleet-bench.py: Benchmarks/fleet-bench.sh --quick runs in about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product todosync >/dev/null
python3 Benchmarks/fleet-bench.py --binary "$PWD/.build/release/todosync" \
  --devices "${DEVICES:-1000}" --duration "${DURATION:-600}" --pull-period "${PULL_PERIOD:-30}" "$@"
