#!/usr/bin/env bash
# Runs N fault campaigns (default 20) and prints how many converged, stalled or diverged: three
# auto-syncing dashboards, each through its own fault proxy, two `todosync serve` instances on one
# throwaway PostgreSQL; partitions, lossy links, paused instances and killed clients for DURATION seconds (60),
# then healing. See Tests/Browser/fault_campaign.py. A seed replays a campaign:
#   scripts/fault-campaign.sh 20 [--seed S] [--duration 60] [--power-cuts]
# (--power-cuts: the clients' data on power-cut filesystems, and power cuts among the faults.)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-20}"
shift || true
scripts/install-deps.sh test
swift build --product todosync >/dev/null
pg_dir=$(mktemp -d /tmp/todosync-pg.XXXXXX)
trap 'scripts/postgres-cluster.sh stop "$pg_dir"' EXIT
url=$(scripts/postgres-cluster.sh start "$pg_dir")
TODOSYNC_BIN="$PWD/.build/debug/todosync" python3 Tests/Browser/fault_campaign.py \
  --campaigns "$count" --postgres "$url" "$@"
