#!/usr/bin/env bash
# Power cuts under `todosync serve` and `todosync client` (issue 34): N runs (default 10) of
# Tests/PowerCut/power_cut.py, each with its SQLite files on a FUSE filesystem that loses whatever
# was not fsync-ed; the cut comes during inserts, a push, a pull or a checkpoint-heavy phase (run i
# gets seed SEED+i-1, and the seed picks the phase), and every insert answered 201 and every
# `client add` that exited 0 must survive it. First checks the filesystem itself (check_fs.py).
#
#   scripts/power-cut-loop.sh 40                  40 runs
#   POWER_CUT_SEED=1234 scripts/power-cut-loop.sh replay a loop (its seed is printed at start)
#   Tests/PowerCut/power_cut.py --seed 1237       replay one run
#
# Needs root (or FUSE for the user), fuse3 and python3-fusepy (scripts/install-deps.sh test),
# and TODOSYNC_BIN (default .build/debug/todosync, built here when missing). The last line reports
# the counts; the exit status is 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-10}
seed=${POWER_CUT_SEED:-$(( $(date +%s) % 100000 ))}
bin=${TODOSYNC_BIN:-.build/debug/todosync}
[ -x "$bin" ] || swift build --product todosync >/dev/null || exit 1

# A copy of the binary: a build during the loop must not change it under a run.
work=$(mktemp -d "${TMPDIR:-/tmp}/todosync-powercut-loop.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$bin" "$work/todosync"
export TODOSYNC_BIN="$work/todosync"

echo "power cut loop: $runs runs with $bin, seed $seed (replay with POWER_CUT_SEED=$seed)"
python3 Tests/PowerCut/check_fs.py || { echo "0 passed, $runs failed (the filesystem's own check failed)"; exit 1; }
passed=0 failed=0
for run in $(seq "$runs"); do
  if python3 Tests/PowerCut/power_cut.py --seed $((seed + run - 1)); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
