#!/usr/bin/env bash
# Power cuts under `todosync serve` and `todosync client` (issues 34 and 50): N runs (default 10)
# of Tests/PowerCut/power_cut.py, each with its files on a FUSE filesystem that loses whatever was
# not fsync-ed; the cut comes during inserts, a push, a pull or another phase (the seed picks it),
# and every insert answered 201 and every `client add` that exited 0 must survive it. The service's
# store alternates between the stores of POWER_CUT_STORES (default "sqlite postgres": a SQLite file,
# or a PostgreSQL cluster whose data directory is on that filesystem): run i uses store
# (i-1) mod K of the K stores, with seed SEED+(i-1)/K, so each seed meets every store.
# First checks the filesystem itself (check_fs.py).
#
#   scripts/power-cut-loop.sh 40                  40 runs, 20 on SQLite and 20 on PostgreSQL
#   POWER_CUT_STORES=postgres scripts/power-cut-loop.sh 6
#                                                 6 runs on PostgreSQL only
#   POWER_CUT_SEED=1234 scripts/power-cut-loop.sh replay a loop (its seed is printed at start)
#   Tests/PowerCut/power_cut.py --seed 1237 [--store postgres]
#                                                 replay one run (a failed run prints this line)
#
# Needs root (or FUSE for the user), fuse3 and python3-fusepy (scripts/install-deps.sh test),
# PostgreSQL's server for the postgres store (without it, the loop says so and runs SQLite only),
# and TODOSYNC_BIN (default .build/debug/todosync, built here when missing). The last line reports
# the counts; the exit status is 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-10}
seed=${POWER_CUT_SEED:-$(( $(date +%s) % 100000 ))}
bin=${TODOSYNC_BIN:-.build/debug/todosync}
read -ra stores <<<"${POWER_CUT_STORES:-sqlite postgres}"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [[ " ${stores[*]} " == *" postgres "* ]]; then
  echo "power cut loop: PostgreSQL is not installed (scripts/install-deps.sh test): SQLite runs only"
  stores=(sqlite)
fi
[ -x "$bin" ] || swift build --product todosync >/dev/null || exit 1

# A copy of the binary: a build during the loop must not change it under a run.
work=$(mktemp -d "${TMPDIR:-/tmp}/todosync-powercut-loop.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$bin" "$work/todosync"
export TODOSYNC_BIN="$work/todosync"

echo "power cut loop: $runs runs with $bin on ${stores[*]}, seed $seed (replay with POWER_CUT_SEED=$seed)"
python3 Tests/PowerCut/check_fs.py || { echo "0 passed, $runs failed (the filesystem's own check failed)"; exit 1; }
passed=0 failed=0
for run in $(seq 0 $((runs - 1))); do
  store=${stores[run % ${#stores[@]}]}
  if python3 Tests/PowerCut/power_cut.py --seed $((seed + run / ${#stores[@]})) --store "$store"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
