#!/usr/bin/env bash
# The main job: installs what is missing, builds libhft (Release, -O3,
# -march=native, no sanitizer) and runs the latency lab's quick preset:
# every lane (floor, tx, rtt, rx, codec) for libhft, QuickFIX (and llfix,
# below), 100,000 calls each, client on CPU 1 and venue on CPU 0, in under
# two minutes on a quiet 2-core host. hft-bench starts its own hft-venue per run and prints
# the summary table and where report.json / report.html are.
#
# Extra arguments go to hft-bench and override the preset, e.g.
#   scripts/run.sh --preset full          (the seed-scale 64 vs 640 MiB experiment)
#   scripts/run.sh --lanes tx,rtt --calls 1000000
# HFT_BUILD_DIR chooses the build directory (default build/release).
#
# llfix joins the engines (tx and rtt with --engines llfix, in both presets)
# when its source tree is beside the clone, ../shared/third_party/llfix, or
# where HFT_LLFIX_DIR points; HFT_LLFIX_DIR= (empty) leaves it out. The
# product never needs it: only hft-bench's adapter is built against it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${HFT_BUILD_DIR:-build/release}
# An HFT_LLFIX_DIR given is passed as is (configure names it if it is not
# an llfix tree); unset, the tree beside the clone is used when it is there.
if [ -n "${HFT_LLFIX_DIR+set}" ]; then
  llfix=("-DHFT_LLFIX_DIR=$HFT_LLFIX_DIR")
elif [ -f ../shared/third_party/llfix/include/llfix/fix_client.h ]; then
  llfix=("-DHFT_LLFIX_DIR=$PWD/../shared/third_party/llfix")
else
  llfix=(-DHFT_LLFIX_DIR=)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHFT_SANITIZE=OFF -DHFT_BUILD_TESTS=OFF \
  -DHFT_BUILD_BENCH=OFF "${llfix[@]}" >/dev/null
cmake --build "$build" --target hft-bench hft-venue -j "$(nproc)"
preset=(--preset quick)
for arg in "$@"; do
  if [[ "$arg" == --preset || "$arg" == --preset=* ]]; then preset=(); fi
done
exec "$build/apps/hft-bench/hft-bench" "${preset[@]}" "$@"
