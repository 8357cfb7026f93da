#!/usr/bin/env bash
# Runs the initiator-side conformance scripts: hft-conformance listens (the
# runner plays the acceptor) and the engine under test, an echo initiator,
# connects to it and reconnects between scripts (ReconnectInterval).
#
# usage: run_initiator_suite.sh --runner HFT_CONFORMANCE --config CFG --spec-dir DIR --work-dir DIR
#          (--venue HFT_VENUE | --peer QF_PEER) -- RUNNER_ARGS... SCRIPTS...
#
# --venue runs libhft (hft-venue --conformance --config), --peer QuickFIX
# (qf-peer initiator). CFG may use ${PORT} and ${SPEC_DIR}. The exit code is
# the runner's; the engine is always stopped.
set -uo pipefail

runner="" config="" spec_dir="" work_dir="" venue="" peer=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runner) runner=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --spec-dir) spec_dir=$2; shift 2 ;;
    --work-dir) work_dir=$2; shift 2 ;;
    --venue) venue=$2; shift 2 ;;
    --peer) peer=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_initiator_suite.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in runner config spec_dir work_dir; do
  [ -n "${!v}" ] || { echo "run_initiator_suite.sh: --${v//_/-} is required" >&2; exit 2; }
done
if [ -z "$venue" ] && [ -z "$peer" ]; then
  echo "run_initiator_suite.sh: --venue or --peer is required" >&2
  exit 2
fi

mkdir -p "$work_dir"
rm -f "$work_dir/port" "$work_dir/port.tmp"
"$runner" --listen 0 --port-file "$work_dir/port" "$@" >"$work_dir/runner.out" 2>&1 &
runner_pid=$!
engine_pid=""
stop_all() {
  for pid in $engine_pid $runner_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL "$pid" 2>/dev/null
    fi
  done
}
trap stop_all EXIT
trap 'exit 130' INT TERM

for _ in $(seq 300); do
  [ -s "$work_dir/port" ] && break
  kill -0 "$runner_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$work_dir/port" ]; then
  echo "run_initiator_suite.sh: the runner did not start listening" >&2
  cat "$work_dir/runner.out" >&2
  exit 2
fi
port=$(cat "$work_dir/port")
sed -e "s|\${PORT}|$port|g" -e "s|\${SPEC_DIR}|$spec_dir|g" "$config" >"$work_dir/initiator.cfg"

if [ -n "$venue" ]; then
  "$venue" --conformance --config "$work_dir/initiator.cfg" --log-level info >"$work_dir/engine.out" 2>&1 &
else
  mkdir -p "$work_dir/log"
  "$peer" initiator --config "$work_dir/initiator.cfg" --port "$port" --spec-dir "$spec_dir" \
    --log-dir "$work_dir/log" --exit-with-parent >"$work_dir/engine.out" 2>&1 &
fi
engine_pid=$!

wait "$runner_pid"
rc=$?
cat "$work_dir/runner.out"
if [ "$rc" -ne 0 ]; then
  echo "--- engine output (last 40 lines): $work_dir/engine.out"
  tail -n 40 "$work_dir/engine.out"
fi
exit "$rc"
