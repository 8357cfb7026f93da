#!/usr/bin/env bash
# The codec micro-benchmarks (bench/encode_bench, parse_bench, validate_bench,
# messages_bench)
# as the codec's targets are stated: Release, -O3 -march=native, pinned to one
# CPU, median of 5 repetitions per invocation. Several invocations, because one
# invocation on a shared host can be off by 20%; the table gives each
# benchmark's medians sorted, and the median of those medians.
#
#   scripts/bench-codec.sh [INVOCATIONS] [CPU]     (default 5, the last CPU)
#
# HFT_BUILD_DIR chooses the build directory (default build/bench).
set -euo pipefail
cd "$(dirname "$0")/.."
invocations=${1:-5}
cpu=${2:-$(($(nproc) - 1))}
bash scripts/deps.sh
build=${HFT_BUILD_DIR:-build/bench}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHFT_SANITIZE=OFF -DHFT_BUILD_TESTS=OFF -DHFT_BUILD_EXAMPLES=OFF \
  -DHFT_BUILD_APPS=OFF -DHFT_BUILD_BENCH=ON >/dev/null
cmake --build "$build" --target encode_bench parse_bench validate_bench messages_bench -j "$(nproc)"

# Benchmark name|what it measures|target (ns, median of 5 repetitions), in print order.
rows=(
  "BM_EncodeNewOrderSingle|encode reference NewOrderSingle (seq + SendingTime)|60"
  "BM_FrameParseNewOrderSingle/repeats:5|frame + verify + index NewOrderSingle|80"
  "BM_FrameParseValidate|frame + parse + validate ExecutionReport, FIX44.xml|200"
  "BM_Validate|validate ExecutionReport alone|"
  "BM_TypedEncodeNewOrderSingle|typed NewOrderSingle encode (generated writer)|"
  "BM_HandEncodeNewOrderSingle|the same fields by hand, same order|"
  "BM_TypedReadExecutionReport|typed ExecutionReport read, 15 fields|"
  "BM_HandReadExecutionReport|the same fields by hand (get_*)|"
)
names=$(printf '%s\n' "${rows[@]}" | cut -d'|' -f1 | sed 's#/repeats:5##' | paste -sd'|')
filter="^($names)(/repeats:5)?\$"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((i = 1; i <= invocations; ++i)); do
  for b in encode_bench parse_bench validate_bench messages_bench; do
    taskset -c "$cpu" "$build/bench/$b" --benchmark_filter="$filter" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
      awk -F, '$1 ~ /_median"$/ { name = $1; gsub(/"/, "", name); sub(/_median$/, "", name);
                                  printf "%s %.1f\n", name, $3 }' >>"$results"
  done
  echo "invocation $i of $invocations done" >&2
done

printf '%-52s %8s %8s  %s\n' "boundary" "median" "target" "medians of the invocations (ns)"
for row in "${rows[@]}"; do
  IFS='|' read -r name label target <<<"$row"
  values=$(awk -v n="$name" '$1 == n { print $2 }' "$results" | sort -n | tr '\n' ' ')
  median=$(echo "$values" | awk '{ if (NF == 0) { print "-"; exit }
                                   if (NF % 2) print $((NF + 1) / 2); else printf "%.1f\n", ($(NF / 2) + $(NF / 2 + 1)) / 2 }')
  printf '%-52s %8s %8s  %s\n' "$label" "$median" "${target:--}" "$values"
done
# Typed over hand-written, per invocation (both measured in the same run).
for pair in "BM_TypedEncodeNewOrderSingle BM_HandEncodeNewOrderSingle encode" \
            "BM_TypedReadExecutionReport BM_HandReadExecutionReport read"; do
  read -r typed hand label <<<"$pair"
  ratios=$(paste <(awk -v n="$typed" '$1 == n { print $2 }' "$results") \
                 <(awk -v n="$hand" '$1 == n { print $2 }' "$results") |
           awk '{ printf "%.3f\n", $1 / $2 }' | sort -n | tr '\n' ' ')
  median=$(echo "$ratios" | awk '{ if (NF == 0) { print "-"; exit }
                                   if (NF % 2) print $((NF + 1) / 2); else printf "%.3f\n", ($(NF / 2) + $(NF / 2 + 1)) / 2 }')
  printf 'typed/hand %-6s ratio: median %s  (per invocation: %s)\n' "$label" "$median" "$ratios"
done
echo "(ns per message; CPU $cpu; $(lscpu | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2; exit }'))"
