#!/usr/bin/env bash
# The table service's write and read paths, release build, loopback, in one run, on SQLite (the
# baseline) and on PostgreSQL (one instance, then two behind nginx):
#   0. durability: the disk's own sync rate (8 KB written and fdatasync'd in a loop, in the folder
#      the databases live in), then durable SQLite inserts (each answered after its commit is on
#      disk; concurrent commits share a sync) against the same service whose syncs do nothing
#      (eatmydata), with 16 connections and with 1, and the syncs per insert (/metrics);
#   1. insert ROWS/2 rows with 64 connections, then ROWS rows (default 100k) with 16, wrk POSTing one
#      row per request (2 threads); on PostgreSQL also with the change channel off (the instance tells
#      no other of its writes), and pgbench inserting the same rows straight, as the ceiling;
#   2. read them all back in pages of 1,000 ($top=1000, $skip advanced as the Link header does),
#      with one curl over one keep-alive connection;
#   3. the same number of fetches by the same curl of a static file of one page's size from nginx.
# Prints rows/s for each, the ratios to SQLite, and the CPU time per insert spent in the service
# and in PostgreSQL, per insert and per row read (from which it estimates how many instances one
# PostgreSQL server carries).
# Figures are noisy: compare within one run. PostgreSQL is a throwaway cluster, durable like the
# SQLite service (fsync and synchronous_commit on, PostgreSQL's defaults).
# SQLITE_ONLY=1 stops after the SQLite run (the write path's CPU per insert, without PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-100000}
page=1000

swift build -c release --product service-bench >/dev/null
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers read as another user
pids=(); wrk_pid=""
cleanup() {
  kill "${pids[@]}" ${wrk_pid:-} 2>/dev/null || true
  [ -d "$work/postgres" ] && scripts/postgres-cluster.sh stop "$work/postgres"
  rm -rf "$work"
}
trap cleanup EXIT
source Benchmarks/nginx.sh
source scripts/nginx-upstream.sh

# start_service DATABASE [WRAPPER] → sets port (and appends the pid to pids, its pid to service_pid)
start_service() {
  : > "$work/port"
  ${2:-} .build/release/service-bench "$1" > "$work/port" &
  service_pid=$!
  pids+=("$service_pid")
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  port=$(head -1 "$work/port")
}

# Cumulative CPU seconds of processes (utime + stime of /proc/PID/stat).
cpu_of() {
  local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    total=$(awk -v t="$total" '{ print t + ($14 + $15) / 100 }' "/proc/$pid/stat")
  done
  echo "$total"
}
# The throwaway cluster's processes: its postmaster and the backends it started.
postgres_pids() {
  local postmaster
  [ -f "$work/postgres/data/postmaster.pid" ] || return 0
  postmaster=$(head -1 "$work/postgres/data/postmaster.pid")
  echo "$postmaster" $(pgrep -P "$postmaster")
}

# The service's disk syncs so far (its /metrics), 0 when it does not count them.
disk_syncs() {
  curl -s "$1/metrics" | awk '/^todosync_disk_syncs_total / {print $2} END {}' | head -1 | grep . || echo 0
}

# insert LABEL BASE CONNECTIONS COUNT SERVICE_PIDS... → inserts COUNT more rows with wrk over
# CONNECTIONS connections; sets count (rows in the table), insert_rate, service_cpu, db_cpu (per
# insert, ms), syncs_per_insert, non2xx. wrk's threads stop after their share of rows, but wrk waits
# for -d, so the script times the inserts itself: it polls the row count and interrupts wrk when
# all are in.
insert() {
  local label=$1 base=$2 connections=$3 wanted=$4; shift 4
  local service_pids=("$@")
  local threads=$(( connections < 2 ? connections : 2 ))
  local service_before db_before syncs_before start end before
  before=$(count_rows "$base")
  service_before=$(cpu_of "${service_pids[@]}")
  db_before=$(cpu_of $(postgres_pids))
  syncs_before=$(disk_syncs "$base")
  start=$(date +%s.%N)
  insert_runs=$(( ${insert_runs:-0} + 1 ))
  ID_PREFIX="r$insert_runs-" ROWS_PER_THREAD=$(( wanted / threads )) wrk -t"$threads" -c"$connections" -d600s -s Benchmarks/service-post.lua \
    "$base/tables/bench" > "$work/wrk.out" &
  wrk_pid=$!
  while [ "$(count_rows "$base")" -lt $(( before + wanted )) ]; do sleep 0.05; done
  end=$(date +%s.%N)
  kill -INT "$wrk_pid"; wait "$wrk_pid" || true; wrk_pid=""
  count=$(count_rows "$base")
  local inserted=$(( count - before ))
  service_cpu=$(echo "($(cpu_of "${service_pids[@]}") - $service_before) * 1000 / $inserted" | bc -l)
  db_cpu=$(echo "($(cpu_of $(postgres_pids)) - $db_before) * 1000 / $inserted" | bc -l)
  syncs_per_insert=$(echo "($(disk_syncs "$base") - $syncs_before) / $inserted" | bc -l)
  insert_rate=$(echo "$inserted / ($end - $start)" | bc -l)
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$work/wrk.out"); non2xx=${non2xx:-0}
  printf "%-44s %6d rows (%s non-2xx) at %6.0f inserts/s, %.3f ms service CPU each, %.2f disk syncs per insert\n" \
    "$label" "$inserted" "$non2xx" "$insert_rate" "$service_cpu" "$syncs_per_insert"
}

count_rows() {
  curl -s -H 'ZUMO-API-VERSION: 2.0.0' "$1/tables/bench?\$top=0&\$inlinecount=allpages" | sed 's/.*"count":\([0-9]*\).*/\1/'
}

# measure LABEL BASE SERVICE_PIDS... → sets insert_rate, read_rate, service_cpu, db_cpu (per insert, ms),
# read_service_cpu, read_db_cpu (per row read, µs)
measure() {
  local label=$1 base=$2; shift 2
  local service_pids=("$@")
  # 1. Inserts, 64 connections (half the rows) then 16 (the figures after it are 16's).
  insert "$label, 64 connections" "$base" 64 $(( rows / 2 )) "${service_pids[@]}"
  insert_rate_64=$insert_rate
  insert "$label, 16 connections" "$base" 16 "$rows" "${service_pids[@]}"
  insert_rate_16=$insert_rate

  # 2. Reads: every page, in order, over one connection.
  pages=$(( (count + page - 1) / page ))
  : > "$work/urls"
  for i in $(seq 0 $(( pages - 1 ))); do
    printf 'url = "%s/tables/bench?$top=%d&$orderby=updatedAt,id&$skip=%d"\noutput = "/dev/null"\n' \
      "$base" "$page" $(( i * page )) >> "$work/urls"
  done
  curl -s -H 'ZUMO-API-VERSION: 2.0.0' "$base/tables/bench?\$top=$page&\$orderby=updatedAt,id" -o "$work/www-page.json"
  local start_read end_read read_service_before read_db_before
  read_service_before=$(cpu_of "${service_pids[@]}")
  read_db_before=$(cpu_of $(postgres_pids))
  start_read=$(date +%s.%N)
  read_bytes=$(curl -s -H 'ZUMO-API-VERSION: 2.0.0' -K "$work/urls" -w '%{size_download}\n' | awk '{s+=$1} END {print s}')
  end_read=$(date +%s.%N)
  read_seconds=$(echo "$end_read - $start_read" | bc -l)
  read_service_cpu=$(echo "($(cpu_of "${service_pids[@]}") - $read_service_before) * 1000000 / $count" | bc -l)
  read_db_cpu=$(echo "($(cpu_of $(postgres_pids)) - $read_db_before) * 1000000 / $count" | bc -l)
  read_rate=$(echo "$count / $read_seconds" | bc -l)
  printf "%-44s read %d rows in %d pages at %6.0f rows/s\n" "$label" "$count" "$pages" "$read_rate"
  printf "%-44s CPU per insert: service %.3f ms, PostgreSQL %.3f ms; per row read: service %.1f µs, PostgreSQL %.1f µs\n" \
    "" "$service_cpu" "$db_cpu" "$read_service_cpu" "$read_db_cpu"
}

# 0. Durability. The disk first: 8 KB written and synced, in a loop, where the databases live.
disk_rate=$(python3 - "$work" <<'PY'
import os, sys, time
path = os.path.join(sys.argv[1], "sync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
block, n = b"x" * 8192, 0
start = time.monotonic()
while time.monotonic() - start < 2:
    os.pwrite(fd, block, 0)
    os.fdatasync(fd)
    n += 1
print(n / (time.monotonic() - start))
os.close(fd)
os.unlink(path)
PY
)
printf "%-44s %6.0f syncs/s (8 KB write + fdatasync)\n" "the disk" "$disk_rate"
durable_rows=$(( rows / 5 ))
start_service "$work/nosync.sqlite" eatmydata
insert "SQLite, syncs doing nothing, 16 connections" "http://127.0.0.1:$port" 16 "$durable_rows" "$service_pid"
nosync_insert=$insert_rate
insert "SQLite, syncs doing nothing, 1 connection" "http://127.0.0.1:$port" 1 $(( durable_rows / 10 )) "$service_pid"
nosync_one=$insert_rate
kill "$service_pid"
start_service "$work/durable.sqlite"
insert "SQLite, durable, 16 connections" "http://127.0.0.1:$port" 16 "$durable_rows" "$service_pid"
durable_insert=$insert_rate
insert "SQLite, durable, 1 connection" "http://127.0.0.1:$port" 1 $(( durable_rows / 10 )) "$service_pid"
durable_one=$insert_rate
kill "$service_pid"
printf "SQLite durable / syncs doing nothing: %.2fx with 16 connections, %.2fx with 1\n\n" \
  "$(echo "$durable_insert / $nosync_insert" | bc -l)" "$(echo "$durable_one / $nosync_one" | bc -l)"

# SQLite: the baseline.
start_service "$work/tables.sqlite"
measure "SQLite, one instance" "http://127.0.0.1:$port" "$service_pid"
sqlite_insert=$insert_rate_16; sqlite_insert_64=$insert_rate_64; sqlite_read=$read_rate; sqlite_read_seconds=$read_seconds
kill "$service_pid"
[ "${SQLITE_ONLY:-0}" = 1 ] && exit 0

# nginx, a static file of one page's size, as before.
mkdir -p "$work/www"
mv "$work/www-page.json" "$work/www/page.json"
start_nginx "$work" "$work/www" application/json /page.json
pids+=("$nginx_pid")
: > "$work/nginx-urls"
for i in $(seq 1 "$pages"); do
  printf 'url = "http://127.0.0.1:%d/page.json?n=%d"\noutput = "/dev/null"\n' "$nginx_port" "$i" >> "$work/nginx-urls"
done
start=$(date +%s.%N); curl -s -K "$work/nginx-urls" > /dev/null; end=$(date +%s.%N)
nginx_seconds=$(echo "$end - $start" | bc -l)
kill "$nginx_pid"

# PostgreSQL: one instance, then two behind nginx; each on a database of its own.
url=$(POSTGRES_DURABLE=1 scripts/postgres-cluster.sh start "$work/postgres")
pg_port=$(cat "$work/postgres/port")
for db in one off two; do
  (cd / && runuser -u postgres -- /usr/lib/postgresql/*/bin/createdb -h 127.0.0.1 -p "$pg_port" -U todosync "bench_$db")
done
base_url=${url%/todosync*}
start_service "$base_url/bench_one?sslmode=disable"
measure "PostgreSQL, one instance" "http://127.0.0.1:$port" "$service_pid"
pg_insert=$insert_rate_16; pg_insert_64=$insert_rate_64; pg_read=$read_rate; pg_service_cpu=$service_cpu
pg_db_cpu=$db_cpu; pg_read_service_cpu=$read_service_cpu; pg_read_db_cpu=$read_db_cpu
kill "$service_pid"

# The same instance telling no other instance of its writes: what the change channel costs.
export SERVICE_BENCH_CHANNEL=off
start_service "$base_url/bench_off?sslmode=disable"
unset SERVICE_BENCH_CHANNEL
insert "PostgreSQL, channel off, 64 connections" "http://127.0.0.1:$port" 64 $(( rows / 2 )) "$service_pid"
off_insert_64=$insert_rate
insert "PostgreSQL, channel off, 16 connections" "http://127.0.0.1:$port" 16 "$rows" "$service_pid"
off_insert=$insert_rate
kill "$service_pid"

# The ceiling: pgbench inserting the same rows into a table of the same shape and indexes, on the
# same cluster, straight (no todosync, no HTTP).
psql -q "$base_url/bench_one" -c 'CREATE TABLE "ceiling" (LIKE "bench" INCLUDING ALL)'
cat > "$work/ceiling.sql" <<'SQL'
INSERT INTO "ceiling" ("id", "createdAt", "updatedAt", "version", "deleted", "text", "complete", "priority")
VALUES (md5(random()::text), floor(extract(epoch FROM clock_timestamp()) * 1000), floor(extract(epoch FROM clock_timestamp()) * 1000),
        'AAAAAAAAAAE=', false, 'benchmark row 1, a short todo text', false, 3);
SQL
ceiling() {
  pgbench -n -M prepared -c "$1" -j 2 -T 10 -f "$work/ceiling.sql" "$base_url/bench_one" 2>/dev/null \
    | awk '/^tps/ {print $3}'
}
ceiling_16=$(ceiling 16); ceiling_64=$(ceiling 64)
printf "%-44s %6.0f inserts/s with 16 connections, %6.0f with 64\n" "pgbench, the same rows (the ceiling)" \
  "$ceiling_16" "$ceiling_64"

start_service "$base_url/bench_two?sslmode=disable"; first_pid=$service_pid; first_port=$port
start_service "$base_url/bench_two?sslmode=disable"; second_pid=$service_pid; second_port=$port
nginx_port=$(( 20000 + RANDOM % 20000 ))
start_upstream_nginx "$work" "$nginx_port" /tables/bench "$first_port" "$second_port"
pids+=("$upstream_pid")
measure "PostgreSQL, two behind nginx" "http://127.0.0.1:$nginx_port" "$first_pid" "$second_pid"
pg2_insert=$insert_rate_16; pg2_insert_64=$insert_rate_64; pg2_read=$read_rate

echo
printf "SQLite read path / nginx static file: %.2fx the time\n" "$(echo "$sqlite_read_seconds / $nginx_seconds" | bc -l)"
printf "SQLite durable / PostgreSQL durable, 16 connections: inserts %.2fx\n" \
  "$(echo "$sqlite_insert / $pg_insert" | bc -l)"
ratio() { echo "$1 / $2" | bc -l; }
printf "PostgreSQL, one instance / SQLite:       inserts %.2fx (64 connections: %.2fx), reads %.2fx\n" \
  "$(ratio "$pg_insert" "$sqlite_insert")" "$(ratio "$pg_insert_64" "$sqlite_insert_64")" "$(ratio "$pg_read" "$sqlite_read")"
printf "PostgreSQL, one instance / pgbench:      inserts %.2fx (64 connections: %.2fx)\n" \
  "$(ratio "$pg_insert" "$ceiling_16")" "$(ratio "$pg_insert_64" "$ceiling_64")"
printf "PostgreSQL, channel on / off:            inserts %.2fx (64 connections: %.2fx)\n" \
  "$(ratio "$pg_insert" "$off_insert")" "$(ratio "$pg_insert_64" "$off_insert_64")"
printf "PostgreSQL, two behind nginx / one:      inserts %.2fx (64 connections: %.2fx)\n" \
  "$(ratio "$pg2_insert" "$pg_insert")" "$(ratio "$pg2_insert_64" "$pg_insert_64")"
printf "PostgreSQL, two behind nginx / SQLite:   inserts %.2fx, reads %.2fx\n" \
  "$(ratio "$pg2_insert" "$sqlite_insert")" "$(ratio "$pg2_read" "$sqlite_read")"
printf "instances one PostgreSQL server carries (same cores each, inserts): service CPU / database CPU = %.1f\n" \
  "$(echo "$pg_service_cpu / $pg_db_cpu" | bc -l)"
printf "instances one PostgreSQL server carries (same cores each, reads):   service CPU / database CPU = %.1f\n" \
  "$(echo "$pg_read_service_cpu / $pg_read_db_cpu" | bc -l)"
