#!/usr/bin/env bash
# The table service's write and read paths, release build, loopback, in one run:
#   1. insert ROWS rows (default 100k) with wrk POSTing one row per request (2 threads, 16 connections);
#   2. read them all back in pages of 1,000 ($top=1000, $skip advanced as the Link header does),
#      with one curl over one keep-alive connection;
#   3. the same number of fetches by the same curl of a static file of one page's size from nginx.
# Prints rows/s for 1 and 2 and the ratio of 2 to 3. Figures are noisy: compare within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-100000}
page=1000

swift build -c release --product service-bench >/dev/null
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers read as another user
service_pid=""; nginx_pid=""; wrk_pid=""
trap 'kill $service_pid $nginx_pid ${wrk_pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT

.build/release/service-bench "$work/tables.sqlite" > "$work/port" &
service_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(head -1 "$work/port")
base="http://127.0.0.1:$port"

# 1. Inserts. wrk's threads stop themselves after their share of rows, but wrk waits for -d, so
# the script times the inserts itself: it polls the row count and interrupts wrk when all are in.
per_thread=$(( rows / 2 ))
count_rows() {
  curl -s -H 'ZUMO-API-VERSION: 2.0.0' "$base/tables/bench?\$top=0&\$inlinecount=allpages" | sed 's/.*"count":\([0-9]*\).*/\1/'
}
start=$(date +%s.%N)
ROWS_PER_THREAD=$per_thread wrk -t2 -c16 -d600s -s Benchmarks/service-post.lua "$base/tables/bench" > "$work/wrk.out" &
wrk_pid=$!
while [ "$(count_rows)" -lt "$rows" ]; do sleep 0.05; done
end=$(date +%s.%N)
kill -INT "$wrk_pid"; wait "$wrk_pid" || true
count=$(count_rows)
insert_rate=$(echo "$count / ($end - $start)" | bc -l)
non2xx=$(awk '/Non-2xx/ {print $NF}' "$work/wrk.out"); non2xx=${non2xx:-0}

# 2. Reads: every page, in order, over one connection.
pages=$(( (count + page - 1) / page ))
: > "$work/urls"
for i in $(seq 0 $(( pages - 1 ))); do
  printf 'url = "%s/tables/bench?$top=%d&$orderby=updatedAt,id&$skip=%d"\noutput = "/dev/null"\n' \
    "$base" "$page" $(( i * page )) >> "$work/urls"
done
curl -s -H 'ZUMO-API-VERSION: 2.0.0' "$base/tables/bench?\$top=$page&\$orderby=updatedAt,id" -o "$work/www-page.json"
read_bytes=$(curl -s -H 'ZUMO-API-VERSION: 2.0.0' -K "$work/urls" -w '%{size_download}\n' | awk '{s+=$1} END {print s}')
seconds() { local start end; start=$(date +%s.%N); "$@" > /dev/null; end=$(date +%s.%N); echo "$end - $start" | bc -l; }
read_seconds=$(seconds curl -s -H 'ZUMO-API-VERSION: 2.0.0' -K "$work/urls")

# 3. nginx: the same number of fetches of a file of one page's size.
mkdir -p "$work/www"
mv "$work/www-page.json" "$work/www/page.json"
source Benchmarks/nginx.sh
start_nginx "$work" "$work/www" application/json /page.json
: > "$work/nginx-urls"
for i in $(seq 1 "$pages"); do
  printf 'url = "http://127.0.0.1:%d/page.json?n=%d"\noutput = "/dev/null"\n' "$nginx_port" "$i" >> "$work/nginx-urls"
done
nginx_seconds=$(seconds curl -s -K "$work/nginx-urls")

printf "inserted %d rows (%s non-2xx) at %.0f rows/s (wrk -t2 -c16, one POST per row)\n" "$count" "$non2xx" "$insert_rate"
printf "read %d rows in %d pages of %d (%d bytes) in %.2f s: %.0f rows/s\n" \
  "$count" "$pages" "$page" "$read_bytes" "$read_seconds" "$(echo "$count / $read_seconds" | bc -l)"
printf "nginx, same curl, %d fetches of the %d-byte first page: %.2f s\n" "$pages" "$(stat -c %s "$work/www/page.json")" "$nginx_seconds"
printf "read path / nginx static file: %.2fx the time (%.2f of nginx's speed)\n" \
  "$(echo "$read_seconds / $nginx_seconds" | bc -l)" "$(echo "$nginx_seconds / $read_seconds" | bc -l)"
