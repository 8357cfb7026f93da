#!/usr/bin/env bash
# Starts libhft's acceptor (hft-venue --conformance) on a free port, runs
# hft-conformance against it with the arguments after "--", and always stops
# the acceptor again.
#
# usage: run_against_hft_venue.sh --venue HFT_VENUE --runner HFT_CONFORMANCE
#          --spec-dir DIR --work-dir DIR [--sessions TW44,...] -- RUNNER_ARGS...
set -uo pipefail

venue="" runner="" spec_dir="" work_dir="" sessions=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venue) venue=$2; shift 2 ;;
    --runner) runner=$2; shift 2 ;;
    --spec-dir) spec_dir=$2; shift 2 ;;
    --work-dir) work_dir=$2; shift 2 ;;
    --sessions) sessions=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_against_hft_venue.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in venue runner spec_dir work_dir; do
  [ -n "${!v}" ] || { echo "run_against_hft_venue.sh: --${v//_/-} is required" >&2; exit 2; }
done
mkdir -p "$work_dir"
rm -f "$work_dir/port"

args=(--conformance --spec-dir "$spec_dir" --port 0 --port-file "$work_dir/port" --log-level info)
[ -n "$sessions" ] && args+=(--sessions "$sessions")
"$venue" "${args[@]}" >"$work_dir/venue.log" 2>&1 &
venue_pid=$!
stop_venue() {
  if kill -0 "$venue_pid" 2>/dev/null; then
    kill -TERM "$venue_pid" 2>/dev/null
    for _ in $(seq 100); do
      kill -0 "$venue_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$venue_pid" 2>/dev/null
  fi
  wait "$venue_pid" 2>/dev/null
}
trap stop_venue EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1200); do
  [ -s "$work_dir/port" ] && break
  if ! kill -0 "$venue_pid" 2>/dev/null; then
    echo "hft-venue exited before listening:" >&2
    cat "$work_dir/venue.log" >&2
    exit 1
  fi
  sleep 0.1
done
[ -s "$work_dir/port" ] || { echo "hft-venue did not report its port within 120 s" >&2; exit 1; }
"$runner" --port "$(cat "$work_dir/port")" "$@" | tee "$work_dir/runner.out"
exit "${PIPESTATUS[0]}"
