#!/usr/bin/env bash
# Installs the Debian packages todosync needs, only those missing.
#   scripts/install-deps.sh run     building and running (pkg-config, libmicrohttpd, SQLite)
#   scripts/install-deps.sh test    + headless Chromium and its driver, Python venv for Selenium,
#                                   PostgreSQL (a throwaway cluster runs the suite on it too),
#                                   fuse3 and python3-fusepy (the power-cut loop's filesystem),
#                                   gdb (the stacks of a stalled test: scripts/within.sh)
#   scripts/install-deps.sh bench   + nginx, wrk and eatmydata, the baselines of the benchmarks
set -euo pipefail

packages=(pkg-config libmicrohttpd-dev libsqlite3-dev zlib1g-dev)
case "${1:-run}" in
  run) ;;
  test) packages+=(chromium chromium-driver python3-venv curl postgresql fuse3 python3-fusepy gdb) ;;
  bench) packages+=(nginx-light wrk curl postgresql eatmydata) ;;
  *) echo "usage: $0 run|test|bench" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing system packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "Run as root, or install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
