#!/usr/bin/env bash
# within.sh SECONDS COMMAND...: runs a Swift test command with a watchdog that says where it stalls.
# - A test still running TEST_LIMIT seconds after it started (300 unless given) is called stalled:
#   the stacks of the test process's threads are taken (gdb, which `scripts/install-deps.sh test`
#   installs), the frames of our own code in them are printed, and the tests running then are
#   named. Once per stalled test; the command goes on (Swift Testing's own limits fail the test).
# - Past SECONDS the whole command is called hung: the same, the tests that started and never ended,
#   and the command is killed.
# The stacks of each dump go to hang-threads-N.txt. (Swift's tasks have no tree to print from
# outside the process: a suspended task shows in no thread, so the running tests' names say which.)
# Exits with the command's status, or 124 when it hung.
set -uo pipefail
# Test names are keys: take them as they are, never evaluated again (names hold brackets, quotes).
shopt -s assoc_expand_once
repo=$(cd "$(dirname "$0")/.." && pwd)
limit=$1
shift
test_limit=${TEST_LIMIT:-300}
log=$(mktemp /tmp/todosync-within.XXXXXX)
trap 'rm -f "$log"' EXIT

# A session of its own, so that the test binary swift-test starts (in a group of its own) is found
# and killed with it; its output line by line (stdbuf), so that a stalled test's lines are not left
# in a buffer.
setsid stdbuf -oL "$@" > >(tee "$log") 2>&1 &
pid=$!
started=$(date +%s)

declare -A running=()  # test name → when its start was read
declare -A dumped=()   # tests already reported stalled
lines_read=0
dumps=0

# Reads the lines written since the last call: a test's start adds it to `running`, its end removes it.
read_new_lines() {
  local total line name
  total=$(wc -l <"$log")
  [ "$total" -gt "$lines_read" ] || return 0
  while IFS= read -r line; do
    if [[ $line == "◇ Test case passing"* || $line == "◇ Test run started." ]]; then
      continue
    elif [[ $line =~ ^◇\ Test\ (.*)\ started\.$ ]]; then
      running["${BASH_REMATCH[1]}"]=$(date +%s)
    elif [[ $line =~ ^[✔✘]\ Test\ (.*)\ (passed|failed)\ after ]]; then
      name=${BASH_REMATCH[1]}
      unset "running[${name% with [0-9]* test case*}]"
    fi
  done < <(sed -n "$((lines_read + 1)),${total}p" "$log")
  lines_read=$total
}

# Prints the frames of our code in the test process's threads, and the tests running.
dump_stacks() {
  local test_pid name file
  test_pid=$(pgrep -s "$pid" -f 'PackageTests' | head -1)
  dumps=$((dumps + 1))
  file="hang-threads-$dumps.txt"
  if [ -z "$test_pid" ]; then
    echo "== (no test process to take stacks from)"
  elif ! command -v gdb >/dev/null; then
    echo "== (gdb is not installed: scripts/install-deps.sh test installs it)"
  else
    timeout 120 gdb -p "$test_pid" -batch -ex "set pagination off" -ex "thread apply all bt" >"$file" 2>&1
    echo "== frames of our code in the test process's threads (all stacks: $file)"
    grep -oE "in [^ ]+ .* at $repo/(Sources|Tests)/[^ ]+" "$file" | sed -E 's/^in ([^ ]+) .* at /\1 at /' \
      | sort | uniq -c | sort -rn | head -40 | swift demangle --simplified
  fi
  echo "== tests running now"
  local since
  for name in "${!running[@]}"; do
    since=${running[$name]}
    echo "$name (for $(($(date +%s) - since)) s)"
  done
}

while kill -0 "$pid" 2>/dev/null; do
  read_new_lines
  now=$(date +%s)
  stalled=()
  for name in "${!running[@]}"; do
    since=${running[$name]}
    [ $((now - since)) -ge "$test_limit" ] && [ -z "${dumped[$name]:-}" ] && stalled+=("$name")
  done
  if [ ${#stalled[@]} -gt 0 ]; then
    for name in "${stalled[@]}"; do
      echo "== stalled: '$name' has run for more than $test_limit s"
      dumped["$name"]=1
    done
    dump_stacks
  fi
  if [ $((now - started)) -ge "$limit" ]; then
    echo "== hung: still running after $limit s: $*"
    dump_stacks
    pkill -9 -s "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 124
  fi
  sleep 2
done
wait "$pid"
