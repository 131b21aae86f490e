#!/usr/bin/env bash
# Schema changes, release build, one run, baselines in the same run: a default and a rename over
# ROWS rows (default 1,000,000) reaching a client's store, against the same client's pull of the
# rows before the change; a writer's p50/p99 during the backfill against before it.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product schema-bench >/dev/null
.build/release/schema-bench "${ROWS:-1000000}"
