#!/usr/bin/env bash
# The main job: installs what is missing, builds libhft (Release, -O3,
# -march=native) and runs it. Extra arguments go to the main program.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHFT_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc)"
exec build/release/apps/hft-demo/hft-demo "$@"
