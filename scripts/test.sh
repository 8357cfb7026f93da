#!/usr/bin/env bash
# Builds libhft and passes its tests:
#  1. unit, conformance, interop and install tests under ASan+UBSan (with the
#     lab's llfix adapter when ../shared/third_party/llfix exists);
#  2. the wire-path layers (codec, store, session) with -fno-exceptions;
#  3. the tests of resident memory that skip under ASan, in a Release build;
#  4. the libFuzzer target (clang), replaying the seed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
# Tests labelled "long" (every FIX version's conformance suite over TCP, the
# runner's own validation against QuickFIX) spend minutes waiting on heartbeat
# intervals; they run with --long.
ctest_filter=(-LE long)
if [ "${1:-}" = "--long" ]; then ctest_filter=(); fi

# The lab's llfix adapter and its tests are built when llfix's tree is
# beside the clone (../shared/third_party/llfix; CI has it); the product
# never needs it.
llfix=()
if [ -f ../shared/third_party/llfix/include/llfix/fix_client.h ]; then
  llfix=("-DHFT_LLFIX_DIR=$PWD/../shared/third_party/llfix")
fi

# -O1 -g1: ASan's recommended level; compiles ~40% faster than -O2 -g with line
# tables still in every report.
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DHFT_SANITIZE=ON -DHFT_WERROR=ON -DHFT_BUILD_BENCH=OFF "${llfix[@]}"
cmake --build build/asan -j "$jobs"
(cd build/asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" --timeout 600 "${ctest_filter[@]}")

cmake -S . -B build/noexc -G Ninja -DCMAKE_BUILD_TYPE=Release -DHFT_NO_EXCEPTIONS=ON -DHFT_WERROR=ON \
  -DHFT_BUILD_TESTS=OFF -DHFT_BUILD_BENCH=OFF -DHFT_BUILD_APPS=OFF
cmake --build build/noexc -j "$jobs" --target hft_codec $( [ -d src/store ] && echo hft_store ) $( [ -d src/session ] && echo hft_session )

# The tests of resident memory skip under ASan (its shadow memory, and
# blocks kept on the heap so that it guards their ends): a Release build
# runs them, and a skip there fails the stage.
cmake -S . -B build/release-mem -G Ninja -DCMAKE_BUILD_TYPE=Release -DHFT_WERROR=ON \
  -DHFT_BUILD_BENCH=OFF -DHFT_BUILD_APPS=OFF -DHFT_BUILD_EXAMPLES=OFF -DHFT_QUICKFIX=OFF "${llfix[@]}"
cmake --build build/release-mem -j "$jobs" --target core_byte_buffer_test engine_many_sessions_test
mem_test() {
  local out
  out=$("$1" --gtest_filter="$2") || { echo "$out"; exit 1; }
  echo "$out" | tail -n 1
  if echo "$out" | grep -q '\[  SKIPPED \]'; then echo "$out"; echo "$1: a memory test was skipped"; exit 1; fi
}
mem_test build/release-mem/tests/core/core_byte_buffer_test 'ByteBuffer.*:ZeroedArray.*:ResidentArray.*'
mem_test build/release-mem/tests/engine/engine_many_sessions_test 'ManySessions.a_session_that_holds_nothing*'

if [ -d fuzz ] && [ -f fuzz/CMakeLists.txt ]; then
  cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHFT_FUZZ=ON \
    -DHFT_BUILD_TESTS=OFF -DHFT_BUILD_BENCH=OFF -DHFT_BUILD_APPS=OFF -DHFT_BUILD_EXAMPLES=OFF -DHFT_QUICKFIX=OFF
  cmake --build build/fuzz -j "$jobs"
  for f in build/fuzz/fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    scratch=$(mktemp -d)
    # Replay the seed corpus, then a short seeded mutation run; new inputs go
    # to the scratch folder (the first corpus argument), never into the repo.
    # The targets that write files (journals) or read them (time zones) run
    # ~100 inputs a second: the time bound keeps each one to a few seconds.
    "$f" -runs=0 "fuzz/corpus/${name#fuzz_}" 2>&1 | tail -n 2
    "$f" -runs=20000 -max_total_time=5 -max_len=4096 -seed=1 "$scratch" "fuzz/corpus/${name#fuzz_}" 2>&1 | tail -n 2
    rm -rf "$scratch"
  done
fi
echo "all test stages passed"
