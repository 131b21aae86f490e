#!/usr/bin/env bash
# N stateless table-service instances behind nginx, on one PostgreSQL, all on loopback: the
# deployment of docs/deployment.md, for trying it, for tests and for benchmarks.
#   scripts/serve-cluster.sh [INSTANCES] [DATABASE_URL]
# INSTANCES defaults to 2. Without DATABASE_URL, a throwaway PostgreSQL cluster is started in a
# temporary folder (scripts/postgres-cluster.sh) and removed afterwards.
# Prints the service's URL (nginx) on its first line, then runs until interrupted (Ctrl-C, or
# SIGTERM), and stops everything it started. Environment:
#   TODOSYNC_BIN   the todosync binary (default: a release build, made if missing)
#   PORT           nginx's port (default: a free one)
#   POOL_SIZE      PostgreSQL connections per instance (default 16)
set -euo pipefail
cd "$(dirname "$0")/.."

instances=${1:-2}
database=${2:-}
pool_size=${POOL_SIZE:-16}
bin=${TODOSYNC_BIN:-.build/release/todosync}
[ -x "$bin" ] || swift build -c release --product todosync >&2

work=$(mktemp -d /tmp/todosync-cluster.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -d "$work/postgres" ] && scripts/postgres-cluster.sh stop "$work/postgres"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

if [ -z "$database" ]; then
  database=$(scripts/postgres-cluster.sh start "$work/postgres")
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

instance_ports=()
for index in $(seq 1 "$instances"); do
  port=$(free_port)
  "$bin" serve --quiet --host 127.0.0.1 --port "$port" --database "$database" --pool-size "$pool_size" \
    > "$work/instance-$index.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null -H 'ZUMO-API-VERSION: 2.0.0' "http://127.0.0.1:$port/tables/todoitem" && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/instance-$index.log" >&2; exit 1; }
    sleep 0.1
  done
  instance_ports+=("$port")
done

nginx_port=${PORT:-$(free_port)}
source scripts/nginx-upstream.sh
start_upstream_nginx "$work" "$nginx_port" /tables/todoitem "${instance_ports[@]}"
pids+=("$upstream_pid")
echo "http://127.0.0.1:$nginx_port"
echo "  $instances instances on $database; logs in $work" >&2
wait "${pids[@]}"
