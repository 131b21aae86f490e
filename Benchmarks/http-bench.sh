#!/usr/bin/env bash
# Requests per second of todosync's HTTP layer against nginx serving the same bytes, in one run:
# a static file (Public/css/app.css) and a page rendered from a template with a 50-row table
# (nginx serves the pre-rendered page). Release build, wrk on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10s}
connections=${CONNECTIONS:-32}

swift build -c release --product http-bench >/dev/null
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers read as another user
trap 'kill $bench_pid $nginx_pid 2>/dev/null || true; rm -rf "$work"' EXIT

mkdir -p "$work/www/public/css"
cp Public/css/app.css "$work/www/public/css/app.css"
.build/release/http-bench Public Benchmarks/HTTPBench/templates "$work/www/page" > "$work/port" &
bench_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
ours=$(cat "$work/port")

source Benchmarks/nginx.sh
start_nginx "$work" "$work/www" "text/html; charset=utf-8" /page

rate() { wrk -t2 -c"$connections" -d"$duration" "$1" | awk '/Requests\/sec/ {print $2}'; }
curl -s "http://127.0.0.1:$ours/page" > "$work/ours.html"
curl -s "http://127.0.0.1:$nginx_port/page" > "$work/nginx.html"
cmp -s "$work/ours.html" "$work/nginx.html" \
  || { echo "the two servers do not serve the same page bytes" >&2; diff "$work/ours.html" "$work/nginx.html" | head -5; cat "$work/nginx-error.log"; exit 1; }

printf "%-28s %12s %12s %8s %8s\n" "what" "todosync" "nginx" "ratio" "target"
for case in "static file|/public/css/app.css|0.8" "rendered 50-row page|/page|0.3"; do
  IFS='|' read -r name path target <<<"$case"
  a=$(rate "http://127.0.0.1:$ours$path")
  b=$(rate "http://127.0.0.1:$nginx_port$path")
  printf "%-28s %12.0f %12.0f %7.2fx %7sx\n" "$name" "$a" "$b" "$(echo "$a / $b" | bc -l)" "$target"
done
echo "(req/s with wrk -t2 -c$connections -d$duration; ratio = todosync / nginx on the same bytes)"
echo "rendering the 50-row page in-process: $(.build/release/http-bench --render-only Public Benchmarks/HTTPBench/templates "$work/page2") µs per page (swift-mustache)"
