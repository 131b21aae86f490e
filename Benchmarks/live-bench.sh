#!/usr/bin/env bash
# The change channel, release build, one run, baselines in the same run: A's edit → B's store over
# EDITS (default 500) edits, live against polling, on SQLite and (with a PostgreSQL cluster started
# here) between two PostgreSQL instances; SUBSCRIBERS (default 1,000) idle subscribers on one
# todosync serve for IDLE_SECONDS (default 60): memory, CPU and requests against polling clients.
# The page figure (A's edit → B's DOM) is Benchmarks/live-page-bench.py's.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product live-bench >/dev/null
swift build -c release --product todosync >/dev/null
pg_dir=$(mktemp -d)
trap 'scripts/postgres-cluster.sh stop "$pg_dir" >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
if command -v pg_ctlcluster >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    export TODOSYNC_BENCH_POSTGRES_URL=$(POSTGRES_DURABLE=1 scripts/postgres-cluster.sh start "$pg_dir")
fi
.build/release/live-bench "${EDITS:-500}" "$PWD/.build/release/todosync"
# The page figure drives Chromium through Selenium: the browser tests' virtual environment.
venv=.venv-test
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r Tests/Browser/requirements.txt
"$venv/bin/python" Benchmarks/live-page-bench.py "$PWD/.build/release/todosync" || echo "(the page figure could not be measured)"
