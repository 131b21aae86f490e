#!/usr/bin/env bash
# The sync client against the real table service (in-process, loopback), release build, one run:
# pull of ROWS rows (default 100k, page size 1000) and a verify of the pulled copy, and push of PUSHES
# queued inserts (default 10k), each also over Datasync v3,
# with the floors measured in the same run (plain GETs of the same pages, prepared-statement inserts
# of the same rows, plain sequential POSTs of the same bodies), and a push over a slow link (through
# `todosync proxy --fault delay=25`) against the same POSTs sent one by one through it, and the pull
# and push again over HTTPS against plain HTTP, alternating (`ONLY=tls` runs only that). Figures are
# noisy: compare ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product client-bench >/dev/null
swift build -c release --product todosync >/dev/null  # the slow-link line runs `todosync proxy`
.build/release/client-bench "${ROWS:-100000}" "${PUSHES:-10000}"
