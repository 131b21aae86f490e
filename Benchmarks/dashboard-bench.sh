#!/usr/bin/env bash
# The dashboard's pages at 1,000 and at 1,000,000 rows (release build, one run): both stores are
# filled through the real pull path from a real table service, then each page is requested over
# HTTP; prints the p50 of 15 requests at each size and their ratio (target: every ratio ≤ 2).
# SMALL and LARGE change the sizes, e.g. LARGE=200000 for a quicker run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product dashboard-bench >/dev/null
.build/release/dashboard-bench "${SMALL:-1000}" "${LARGE:-1000000}"
