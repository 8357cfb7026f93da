#!/usr/bin/env bash
# Smoke test of qf-peer's order-flow modes against each other: starts the
# venue on a free port, runs the trader with N orders, requires every order
# acknowledged and filled, and always stops the venue.
#
# usage: run_qf_peer_order_flow.sh --peer QF_PEER --spec-dir DIR --data-dir DIR
#          --work-dir DIR --orders N --session TRADER44|TRADER50SP2
set -uo pipefail

peer="" spec_dir="" data_dir="" work_dir="" orders="" session=""
while [ $# -gt 0 ]; do
  case "$1" in
    --peer) peer=$2; shift 2 ;;
    --spec-dir) spec_dir=$2; shift 2 ;;
    --data-dir) data_dir=$2; shift 2 ;;
    --work-dir) work_dir=$2; shift 2 ;;
    --orders) orders=$2; shift 2 ;;
    --session) session=$2; shift 2 ;;
    *) echo "run_qf_peer_order_flow.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in peer spec_dir data_dir work_dir orders session; do
  [ -n "${!v}" ] || { echo "run_qf_peer_order_flow.sh: --${v//_/-} is required" >&2; exit 2; }
done
case "$session" in
  TRADER44) trader_cfg=$data_dir/qf_trader_fix44.cfg ;;
  TRADER50SP2) trader_cfg=$data_dir/qf_trader_fixt.cfg ;;
  *) echo "run_qf_peer_order_flow.sh: unknown session $session" >&2; exit 2 ;;
esac

mkdir -p "$work_dir"
rm -rf "$work_dir/venue_log" "$work_dir/trader_log" "$work_dir/port" "$work_dir/port.tmp"
mkdir -p "$work_dir/venue_log" "$work_dir/trader_log"

"$peer" venue --config "$data_dir/qf_venue.cfg" --spec-dir "$spec_dir" --port 0 --port-file "$work_dir/port" \
  --log-dir "$work_dir/venue_log" --sessions "$session" --exit-with-parent >"$work_dir/venue.out" 2>&1 &
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
    echo "qf-peer venue exited before listening:" >&2
    cat "$work_dir/venue.out" >&2
    exit 1
  fi
  sleep 0.1
done
[ -s "$work_dir/port" ] || { echo "qf-peer venue did not report its port within 120 s" >&2; exit 1; }

"$peer" trader --config "$trader_cfg" --spec-dir "$spec_dir" --host 127.0.0.1 --port "$(cat "$work_dir/port")" \
  --orders "$orders" --require-fills --timeout-ms 60000 --log-dir "$work_dir/trader_log"
