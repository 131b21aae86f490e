#!/usr/bin/env bash
# Conflicts settled by policy and the journal page, release build, one run, baselines in the same run:
# CONFLICTS (default 1,000) updates that each meet a 412 and merge, against the same push with no
# conflicts; the /journal page with ENTRIES (default 10,000) entries against an empty journal (p50).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product conflict-bench >/dev/null
.build/release/conflict-bench "${CONFLICTS:-1000}" "${ENTRIES:-10000}"
