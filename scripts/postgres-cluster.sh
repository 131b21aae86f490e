#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a folder of its own, on a free loopback port, for tests and
# benchmarks. It never touches a system cluster.
#   scripts/postgres-cluster.sh start DIR   creates and starts it; prints its URL
#                                           (postgres://todosync@127.0.0.1:PORT/todosync)
#   scripts/postgres-cluster.sh restart DIR [MODE]
#                                           restarts it on its port with its settings; MODE is
#                                           pg_ctl's shutdown mode: fast (the default) or immediate
#                                           (a crash: recovery from the WAL on start)
#   scripts/postgres-cluster.sh recover DIR starts it again on its port with its settings after a
#                                           crash (every process of it killed, or a power cut):
#                                           PostgreSQL recovers from its WAL
#   scripts/postgres-cluster.sh stop DIR    stops it and removes DIR (not a POSTGRES_DATA folder)
# The data directory is DIR/data; POSTGRES_DATA=PATH at start puts it at PATH instead (DIR/data then
# links to it), such as on the power-cut filesystem (Tests/PowerCut/postgres.py). DIR keeps what
# must outlive the data directory's disk: the server's log, its socket, its port and options.
# PostgreSQL refuses to run as root: as root, the cluster runs as the `postgres` user that
# Debian's package creates. Durability is traded for speed (fsync off): the data is thrown away.
# POSTGRES_DURABLE=1 keeps PostgreSQL's durable defaults (fsync, synchronous_commit, full_page_writes
# on), for benchmarks that compare durable with durable. POSTGRES_OPTIONS adds server options after
# these (a later -c wins): "-c synchronous_commit=on" keeps every acknowledged commit through a
# crash of PostgreSQL alone (`restart DIR immediate`), the machine staying up, without fsync's cost.
set -euo pipefail

command="${1:-}"
dir="${2:-}"
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start|restart|recover|stop DIR" >&2; exit 2; }

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "PostgreSQL is not installed (scripts/install-deps.sh test installs it)." >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts the server of DIR/data with the options of DIR/options (pg_ctl's postmaster.opts lives in
# the data directory, which a power cut may take back to before it was written).
start_server() {
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 start -o "$(cat "$dir/options")" \
    >/dev/null || { tail -40 "$dir/server.log" >&2; exit 1; }
}

case "$command" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    if [ -n "${POSTGRES_DATA:-}" ]; then
      mkdir -p "$POSTGRES_DATA"
      [ "$(id -u)" -eq 0 ] && chown postgres: "$POSTGRES_DATA"  # initdb makes it 0700
      ln -s "$POSTGRES_DATA" "$dir/data"
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$dir/data" -U todosync --auth=trust --no-locale -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [ "${POSTGRES_DURABLE:-0}" = 1 ] && fast=""
    # Tests run in parallel, each service with a pool of up to 8 connections: with the machine
    # loaded they overlap longer, and a run reached 287 of the 300 connections this used to allow.
    echo "-p $port -c listen_addresses=127.0.0.1 -k $dir $fast -c max_connections=1000" \
      "-c shared_buffers=128MB ${POSTGRES_OPTIONS:-}" >"$dir/options"
    start_server
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U todosync todosync
    echo "$port" >"$dir/port"
    echo "postgres://todosync@127.0.0.1:$port/todosync?sslmode=disable"
    ;;
  restart)
    mode="${3:-fast}"
    case "$mode" in fast|immediate) ;; *) echo "restart mode: fast or immediate, not $mode" >&2; exit 2 ;; esac
    # pg_ctl restart keeps the options the server was started with (postmaster.opts: its port
    # too); -l again, or the new server's output would hold the caller's standard output open.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "$mode" -w -t 60 restart >/dev/null \
      || { tail -20 "$dir/server.log" >&2; exit 1; }
    ;;
  recover)
    start_server
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|restart|recover|stop DIR" >&2
    exit 2
    ;;
esac
