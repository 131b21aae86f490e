#!/usr/bin/env bash
# The continuous backup (`serve --backup-dir`) and `todosync restore`, release build, in one run
# (see Benchmarks/BackupBench/main.swift): the insert rate with a backup against without (16
# connections, alternated twice), the backup's lag at 1,000 inserts/s (p50, p99, max), and a restore
# of a 1M-row service to its newest commit minus 5 minutes.
#   SECONDS_EACH=10 RATE=1000 ROWS=1000000 Benchmarks/backup-bench.sh
# Run it alone: two builds or benchmarks at once share the 2 cores and the disk.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product backup-bench >/dev/null
.build/release/backup-bench
