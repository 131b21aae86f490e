#!/usr/bin/env bash
# Runs every benchmark (release builds); each prints its figures and ratios against a baseline
# measured in the same run.
set -euo pipefail
cd "$(dirname "$0")"
for bench in ./*-bench.sh; do
  echo "== $bench"
  "$bench"
  echo
done
