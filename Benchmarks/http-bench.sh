#!/usr/bin/env bash
# Requests per second of todosync's HTTP layer against nginx serving the same bytes, in one run:
# - a static file (Public/css/app.css);
# - a page with a 50-row table rendered per request from templates, rows through a FragmentCache
#   as the dashboard does (nginx serves the pre-rendered page);
# - the dashboard's own todo list with 50 rows: store reads, header, layout (nginx serves a copy).
# Release builds, wrk on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10s}
connections=${CONNECTIONS:-32}

swift build -c release --product http-bench >/dev/null
swift build -c release --product todosync >/dev/null
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers read as another user
trap 'kill $bench_pid $dashboard_pid $nginx_pid 2>/dev/null || true; rm -rf "$work"' EXIT

mkdir -p "$work/www/public/css"
cp Public/css/app.css "$work/www/public/css/app.css"
.build/release/http-bench Public Benchmarks/HTTPBench/templates "$work/www/page" > "$work/port" &
bench_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
ours=$(cat "$work/port")

# The dashboard, offline, with 60 todos waiting to be pushed (badges on every row).
mkdir -p "$work/dashboard"
for n in $(seq 60); do
  .build/release/todosync client --store "$work/dashboard/store.sqlite" --remote http://127.0.0.1:9/ \
    add "Todo number $n <with> \"markup\" & ampersands" >/dev/null
done
.build/release/todosync --port 0 --data-dir "$work/dashboard" > "$work/dashboard.log" 2>&1 &
dashboard_pid=$!
for _ in $(seq 50); do grep -q "open http" "$work/dashboard.log" && break; sleep 0.1; done
dashboard=$(grep -o "http://127.0.0.1:[0-9]*" "$work/dashboard.log")
session="Cookie: todosync_session=0123456789abcdef0123456789abcdef"
curl -s -H "$session" "$dashboard/" > "$work/www/todos"

source Benchmarks/nginx.sh
start_nginx "$work" "$work/www" "text/html; charset=utf-8" /page

rate() { wrk -t2 -c"$connections" -d"$duration" -H "$session" "$1" | awk '/Requests\/sec/ {print $2}'; }
curl -s "http://127.0.0.1:$ours/page" > "$work/ours.html"
curl -s "http://127.0.0.1:$nginx_port/page" > "$work/nginx.html"
curl -s -H "$session" "$dashboard/" >> "$work/ours.html"
curl -s "http://127.0.0.1:$nginx_port/todos" >> "$work/nginx.html"
cmp -s "$work/ours.html" "$work/nginx.html" \
  || { echo "the two servers do not serve the same page bytes" >&2; diff "$work/ours.html" "$work/nginx.html" | head -5; cat "$work/nginx-error.log"; exit 1; }

printf "%-28s %12s %12s %8s %8s\n" "what" "todosync" "nginx" "ratio" "target"
for case in "static file|127.0.0.1:$ours/public/css/app.css|/public/css/app.css|0.8" \
  "rendered 50-row page|127.0.0.1:$ours/page|/page|0.3" "dashboard todo list, 50 rows|${dashboard#http://}/|/todos|"; do
  IFS='|' read -r name url path target <<<"$case"
  a=$(rate "http://$url")
  b=$(rate "http://127.0.0.1:$nginx_port$path")
  printf "%-28s %12.0f %12.0f %7.2fx %8s\n" "$name" "$a" "$b" "$(echo "$a / $b" | bc -l)" "${target:+≥ ${target}x}"
done
echo "(req/s with wrk -t2 -c$connections -d$duration; ratio = todosync / nginx on the same bytes)"
read -r cold warm rows < <(.build/release/http-bench --render-only Public Benchmarks/HTTPBench/templates "$work/page2")
echo "rendering the 50-row page in-process (swift-mustache): ${cold} µs with every row rendered afresh," \
  "${warm} µs with the rows' HTML remembered (${rows} µs of it building the 50 row values)"
