#!/usr/bin/env bash
# The main job: installs what is missing, builds libhft (Release, -O3,
# -march=native), starts hft-venue and runs hft-trader against it on
# loopback, showing the exchange. Extra arguments go to hft-trader.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHFT_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc)"
bin=build/release/apps
work=$(mktemp -d)
"$bin/hft-venue/hft-venue" --port 0 --port-file "$work/port" >"$work/venue.log" 2>&1 &
venue=$!
trap 'kill -INT $venue 2>/dev/null; wait $venue 2>/dev/null; cat "$work/venue.log"; rm -rf "$work"' EXIT
for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "hft-venue did not start" >&2; exit 1; }
"$bin/hft-trader/hft-trader" --port "$(cat "$work/port")" --orders 10000 --rate 20000 --show 2 "$@"
