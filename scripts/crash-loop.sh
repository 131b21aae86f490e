#!/usr/bin/env bash
# Crash consistency of the sync client: CRASH_RUNS times (default 20), make local changes with
# `todosync client`, start a push or a pull (the default push window: several requests on the wire
# at once), SIGKILL it at a random moment, then check the store
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
server_pid="" proxy_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  [ -n "$proxy_pid" ] && kill -9 "$proxy_pid" 2>/dev/null
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
# The client reaches the service over a slow link (CRASH_LINK_DELAY_MS per request, default 25), so
# that a kill often finds several requests of the push window on the wire.
"$bin" proxy --listen 0 --to "$url" --fault "delay=${CRASH_LINK_DELAY_MS:-25}" --quiet >"$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 100); do
  link=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/proxy.log" | head -1)
  [ -n "$link" ] && break
  sleep 0.05
done
[ -n "${link:-}" ] || { echo "todosync proxy did not start:"; cat "$work/proxy.log"; exit 1; }
echo "crash loop: $runs runs against $url through $link, seed $seed (replay with CRASH_SEED=$seed)"

store="$work/device.sqlite"
model="$work/model.txt"
: >"$model"
client() { "$bin" client --store "$store" --remote "$link" "$@"; }
mine=()          # ids of our items that still exist
kills_push=0 kills_pull=0 kills_startup=0 kills_window=0 finished=0 failures=0
# The kill lands after most of the start-up (measured once: a command with nothing to send) plus a
# random part of the time such a command took when it ran to the end (refined as runs finish).
started_ns=$(date +%s%N)
client status >/dev/null
startup_ms=$(( ($(date +%s%N) - started_ns) * 3 / 4 / 1000000 ))
typical_ms=150

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
  delay_ms=$((startup_ms + 1 + RANDOM % typical_ms))
  started_ns=$(date +%s%N)
  # Started directly, not through the `client` function: a function in the background runs in a
  # subshell, and the kill would hit that shell while todosync went on to the end.
  "$bin" client --store "$store" --remote "$link" "${command[@]}" >"$work/killed.log" 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null
    # Where it died: nothing sent yet (start-up), operations left (push), or none left (pull).
    # (inFlight: operations whose request was on the wire, several at once in the default window.)
    read -r pending sent inflight < <(python3 -c "import sqlite3,sys; print(*sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*), COUNT(*) FILTER (WHERE attempts > 0), COUNT(*) FILTER (WHERE state = 'inFlight') FROM __operations\").fetchone())" "$store")
    [ "$inflight" -gt 1 ] && kills_window=$((kills_window + 1))
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
    typical_ms=$(( (typical_ms + took_ms - startup_ms + 1) / 2 ))
    [ "$typical_ms" -gt 0 ] || typical_ms=1
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

echo "crash loop: runs $runs, kills during push $kills_push, kills during pull $kills_pull, kills before the first request $kills_startup, kills with several requests on the wire $kills_window, finished before the kill $finished, failures $failures (seed $seed)"
[ "$failures" -eq 0 ]
