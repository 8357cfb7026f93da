#!/usr/bin/env bash
# Starts qf-peer as the conformance acceptor on a free port, runs
# hft-conformance against it with the arguments after "--", and always stops
# the peer again (trap on exit; the peer also dies with this shell through
# --exit-with-parent, should the shell itself be killed).
#
# usage: run_against_qf_peer.sh --peer QF_PEER --runner HFT_CONFORMANCE
#          --spec-dir DIR --work-dir DIR [--sessions TW44,...]
#          [--expect-failures FILE] -- RUNNER_ARGS...
#
# Without --expect-failures the exit code is the runner's. With it, every
# line "script.def:LINE|reason text" of FILE must appear as a failure at that
# line with that text, and no script may pass (for the runner's negative
# scripts, which prove that it detects differences).
set -uo pipefail

peer="" runner="" spec_dir="" work_dir="" sessions="" expect_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --peer) peer=$2; shift 2 ;;
    --runner) runner=$2; shift 2 ;;
    --spec-dir) spec_dir=$2; shift 2 ;;
    --work-dir) work_dir=$2; shift 2 ;;
    --sessions) sessions=$2; shift 2 ;;
    --expect-failures) expect_file=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_against_qf_peer.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in peer runner spec_dir work_dir; do
  [ -n "${!v}" ] || { echo "run_against_qf_peer.sh: --${v//_/-} is required" >&2; exit 2; }
done

mkdir -p "$work_dir"
rm -rf "$work_dir/log" "$work_dir/port" "$work_dir/port.tmp"
mkdir -p "$work_dir/log"

peer_args=(acceptor --spec-dir "$spec_dir" --port 0 --port-file "$work_dir/port" --log-dir "$work_dir/log"
           --exit-with-parent)
[ -n "$sessions" ] && peer_args+=(--sessions "$sessions")
"$peer" "${peer_args[@]}" >"$work_dir/peer.out" 2>&1 &
peer_pid=$!

stop_peer() {
  if kill -0 "$peer_pid" 2>/dev/null; then
    kill -TERM "$peer_pid" 2>/dev/null
    for _ in $(seq 100); do
      kill -0 "$peer_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$peer_pid" 2>/dev/null
  fi
  wait "$peer_pid" 2>/dev/null
}
trap stop_peer EXIT
trap 'exit 130' INT TERM

# Loading dictionaries under the sanitizers takes a while (FIX50SP2 ~30 s).
for _ in $(seq 1200); do
  [ -s "$work_dir/port" ] && break
  if ! kill -0 "$peer_pid" 2>/dev/null; then
    echo "qf-peer exited before listening:" >&2
    cat "$work_dir/peer.out" >&2
    exit 1
  fi
  sleep 0.1
done
[ -s "$work_dir/port" ] || { echo "qf-peer did not report its port within 120 s" >&2; exit 1; }
port=$(cat "$work_dir/port")

"$runner" --port "$port" "$@" | tee "$work_dir/runner.out"
rc=${PIPESTATUS[0]}

if [ -n "$expect_file" ]; then
  rc=0
  if ! grep -q '^0 passed, ' "$work_dir/runner.out"; then
    echo "negative check: some script passed but every one must fail" >&2
    rc=1
  fi
  while IFS= read -r entry; do
    case "$entry" in ''|'#'*) continue ;; esac
    where=${entry%%|*}
    reason=${entry#*|}
    if ! grep -F -A1 "/$where " "$work_dir/runner.out" | grep -q -F -- "$reason"; then
      echo "negative check: expected a failure at $where with: $reason" >&2
      rc=1
    fi
  done <"$expect_file"
  [ $rc -eq 0 ] && echo "negative check: every script failed where and as expected"
fi
exit $rc
