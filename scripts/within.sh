#!/usr/bin/env bash
# within.sh SECONDS COMMAND...: runs a Swift test command with a time limit that turns a hang into a
# failure saying where it hung. Past SECONDS the command is called hung: the stacks of the test
# process's threads go to hang-threads.txt (with gdb, when it is installed), the frames of our own
# code in them and the tests that started and never ended (read from Swift Testing's lines) are
# printed, and the command is killed. Exits with the command's status, or 124 when it hung.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
limit=$1
shift
log=$(mktemp /tmp/todosync-within.XXXXXX)
trap 'rm -f "$log"' EXIT

# A session of its own, so that the test binary swift-test starts (in a group of its own) is found
# and killed with it; its output line by line (stdbuf), so that a hung test's lines are not left in
# a buffer.
setsid stdbuf -oL "$@" > >(tee "$log") 2>&1 &
pid=$!
started=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
  if [ $(($(date +%s) - started)) -ge "$limit" ]; then
    echo "== hung: still running after $limit s: $*"
    test_pid=$(pgrep -s "$pid" -f 'PackageTests' | head -1)
    if [ -n "$test_pid" ] && command -v gdb >/dev/null; then
      gdb -p "$test_pid" -batch -ex "thread apply all bt" >hang-threads.txt 2>&1
      echo "== frames of our code in the test process's threads (all stacks: hang-threads.txt)"
      grep -oE "in [^ ]+ .* at $repo/(Sources|Tests)/[^ ]+" hang-threads.txt | sed -E 's/^in ([^ ]+) .* at /\1 at /' \
        | sort | uniq -c | sort -rn | head -40 | swift demangle --simplified
    fi
    echo "== tests that started and never ended"
    grep -oP '^◇ Test \K.*(?= started\.$)' "$log" | grep -v -e '^run$' -e '^case passing' | while IFS= read -r name; do
      grep -qF -e "Test $name passed" -e "Test $name failed" -e "Test $name with " "$log" || echo "$name"
    done
    pkill -9 -s "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 124
  fi
  sleep 2
done
wait "$pid"
