#!/usr/bin/env bash
# Runs the whole Swift suite RUNS times in a row (default 20) with both cores kept busy by two
# `yes` processes, as a shared CI machine would be, and the table-service suites on a throwaway
# PostgreSQL cluster too. Each run must finish and pass. A run still going after 15 minutes is
# called hung (scripts/within.sh): the tests still running are named in its log, the stacks of all
# its threads are written to hang-N.txt (gdb), then it is killed.
# Prints one line per run and the counts. Needs the suites' build (scripts/test.sh makes it).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/swift-tests.sh
runs=${1:-${RUNS:-20}}
out=${HANG_CHECK_DIR:-$(mktemp -d /tmp/todosync-hang.XXXXXX)}
mkdir -p "$out"
pg_dir=$(mktemp -d /tmp/todosync-pg.XXXXXX)
loads=()
cleanup() {
  kill "${loads[@]}" 2>/dev/null
  scripts/postgres-cluster.sh stop "$pg_dir"
}
trap cleanup EXIT
TODOSYNC_TEST_POSTGRES_URL=$(scripts/postgres-cluster.sh start "$pg_dir")
export TODOSYNC_TEST_POSTGRES_URL
for _ in 1 2; do
  yes >/dev/null &
  loads+=($!)
done
passed=0 failed=0 hung=0
for run in $(seq "$runs"); do
  started=$(date +%s)
  # within.sh names the tests still running and writes the threads' stacks (hang-threads-N.txt).
  scripts/within.sh 900 swift test "${swift_tests[@]}" --skip-build >"$out/run-$run.log" 2>&1
  case $? in
    0) status=passed; passed=$((passed + 1)) ;;
    124) status=hung; hung=$((hung + 1)); for f in hang-threads-*.txt; do [ -e "$f" ] && mv "$f" "$out/hang-$run-${f#hang-threads-}"; done ;;
    *) status=failed; failed=$((failed + 1)); grep -E "✘|error:" "$out/run-$run.log" | head -5 ;;
  esac
  echo "run $run: $status in $(($(date +%s) - started)) s ($(tail -1 "$out/run-$run.log" | cut -c1-120))"
done
echo "hang check: $runs runs with both cores loaded: $passed passed, $failed failed, $hung hung (logs in $out)"
[ "$failed" -eq 0 ] && [ "$hung" -eq 0 ]
