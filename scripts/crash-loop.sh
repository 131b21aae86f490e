#!/usr/bin/env bash
# Crash consistency of the sync client: CRASH_RUNS times (default 20), make local changes with
# `todosync client`, start a push or a pull, SIGKILL it at a random moment, then check the store
# (integrity_check, no change lost or queued twice, nothing on the service twice), restart the
# client, sync to the end and check that store and service agree.
#
#   CRASH_RUNS=200 scripts/crash-loop.sh        the full run
#   CRASH_SEED=1234 scripts/crash-loop.sh       replay a run (the seed is printed at start)
#
# Needs .build/debug/todosync (built by scripts/test.sh; built here when missing), sqlite3's
# Python module and curl. The last line reports the counts; the exit status is 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${CRASH_RUNS:-20}
seed=${CRASH_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$seed
bin=${TODOSYNC_BIN:-.build/debug/todosync}
[ -x "$bin" ] || swift build --product todosync >/dev/null || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/todosync-crash.XXXXXX")
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" serve --port 0 --database "$work/service.sqlite" --quiet >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/serve.log" | head -1)
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "${url:-}" ] || { echo "todosync serve did not start:"; cat "$work/serve.log"; exit 1; }
echo "crash loop: $runs runs against $url, seed $seed (replay with CRASH_SEED=$seed)"

store="$work/device.sqlite"
model="$work/model.txt"
: >"$model"
client() { "$bin" client --store "$store" --remote "$url" "$@"; }
mine=()          # ids of our items that still exist
kills_push=0 kills_pull=0 kills_startup=0 finished=0 failures=0
typical_ms=150   # refined by every command that finishes before its kill

for run in $(seq "$runs"); do
  # Local changes: new items, an edit of a new one, edits and a delete of older ones.
  for n in 1 2 3 4; do
    id="r$run-n$n"
    client add "text $id" --id "$id" >/dev/null || { echo "run $run: add failed"; failures=$((failures + 1)); }
    echo "add $id text $id" >>"$model"
    mine+=("$id")
  done
  client edit "r$run-n1" --text "text r$run-n1 edited" >/dev/null && echo "edit r$run-n1 text r$run-n1 edited" >>"$model"
  if [ ${#mine[@]} -gt 8 ]; then
    pick=${mine[$((RANDOM % (${#mine[@]} - 4)))]}
    client edit "$pick" --text "text $pick run $run" >/dev/null && echo "edit $pick text $pick run $run" >>"$model"
    index=$((RANDOM % (${#mine[@]} - 4)))
    gone=${mine[$index]}
    if client delete "$gone" >/dev/null; then
      echo "delete $gone" >>"$model"
      mine=("${mine[@]:0:$index}" "${mine[@]:$((index + 1))}")
    fi
  fi
  # Another device adds rows on the service, so that pulls have pages to fetch.
  args=()
  for n in $(seq 12); do
    args+=(-s -o /dev/null -X POST -H "ZUMO-API-VERSION: 2.0.0" -H "Content-Type: application/json"
      -d "{\"id\":\"other-$run-$n\",\"text\":\"other $run $n\"}" "$url/tables/todoitem" --next)
  done
  curl "${args[@]}" -s -o /dev/null "$url/tables/todoitem?\$top=1" -H "ZUMO-API-VERSION: 2.0.0"

  # The push or pull to kill: every second run a pull (it pushes first), page size 3.
  if [ $((run % 2)) -eq 0 ]; then command=(push); else command=(pull --query-id all --page-size 3); fi
  # A random moment within the time such a command took when it ran to the end (adapts to the machine).
  delay_ms=$((1 + RANDOM % typical_ms))
  started_ns=$(date +%s%N)
  client "${command[@]}" >"$work/killed.log" 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null
    # Where it died: nothing sent yet (start-up), operations left (push), or none left (pull).
    read -r pending sent < <(python3 -c "import sqlite3,sys; print(*sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*), COUNT(*) FILTER (WHERE attempts > 0) FROM __operations\").fetchone())" "$store")
    if [ "$pending" -gt 0 ] && [ "$sent" -eq 0 ]; then
      kills_startup=$((kills_startup + 1))
    elif [ "${command[0]}" = push ] || [ "$pending" -gt 0 ]; then
      kills_push=$((kills_push + 1))
    else
      kills_pull=$((kills_pull + 1))
    fi
  else
    wait "$pid" 2>/dev/null
    finished=$((finished + 1))
    took_ms=$(( ($(date +%s%N) - started_ns) / 1000000 ))
    typical_ms=$(( (typical_ms + took_ms + 1) / 2 ))
  fi

  ok=1
  scripts/crash-check.py after-kill "$store" "$url" "$model" || ok=0
  # Restart: one clean sync to the end.
  if ! client pull --query-id all >"$work/restart.log" 2>&1; then
    echo "  run $run: the sync after the restart failed:"; sed 's/^/    /' "$work/restart.log"; ok=0
  fi
  scripts/crash-check.py converged "$store" "$url" "$model" || ok=0
  if [ $ok -eq 0 ]; then
    failures=$((failures + 1))
    echo "  run $run FAILED (${command[*]}, killed after ${delay_ms} ms)"
  fi
done

echo "crash loop: runs $runs, kills during push $kills_push, kills during pull $kills_pull, kills before the first request $kills_startup, finished before the kill $finished, failures $failures (seed $seed)"
[ "$failures" -eq 0 ]
