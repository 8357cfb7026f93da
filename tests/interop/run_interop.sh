#!/usr/bin/env bash
# One interop scenario between libhft and QuickFIX 1.15 over loopback TCP:
# starts the acceptor on a free port, runs the initiator, always stops the
# acceptor, then checks the counts both sides print (key=value lines).
#
#   --direction qf-to-hft   qf-peer trader (QuickFIX initiator) -> hft-venue (libhft acceptor)
#   --direction hft-to-qf   hft-trader (libhft initiator) -> qf-peer venue (QuickFIX acceptor)
#   --version fix44|fixt    FIX.4.4, or FIXT.1.1 with FIX.5.0SP2
#   --scenario flow         N orders: one logon, N acks and N fills, no resend, clean logout
#   --scenario reconnect    the initiator drops its TCP connection (no Logout) after
#                           order K, reconnects with sequence numbers continued (no
#                           reset) and the gaps are recovered by ResendRequest: still
#                           exactly one ack and one fill per order, none lost
#   --scenario netdrop      the link fails instead (interop-proxy in between): after the
#                           client's order K, every byte both ways is lost for a while,
#                           then both connections are reset; both sides have gaps to
#                           recover, so each one answers a ResendRequest
#   --scenario heartbeat    HeartBtInt=1 and an idle period before the orders: heartbeats
#                           flow both ways and the session stays up
#   --resend-chunk N        (netdrop, hft-to-qf) hft-trader asks for its gap in
#                           ResendRequests of at most N messages (ResendRequestChunkSize),
#                           each answered by QuickFIX, and the gap is still recovered
#                           (QuickFIX 1.15 has no such setting, so qf-to-hft cannot)
#
# usage: run_interop.sh --direction D --version V --scenario S --orders N
#          [--disconnect-after K] [--idle S] [--resend-chunk N] [--proxy EXE] --hft-venue EXE --hft-trader EXE --qf-peer EXE
#          --spec-dir DIR --data-dir DIR --work-dir DIR
set -uo pipefail

direction="" version="" scenario="" orders="" disconnect_after="" idle=5 chunk=0
hft_venue="" hft_trader="" qf_peer="" proxy="" spec_dir="" data_dir="" work_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --direction) direction=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --scenario) scenario=$2; shift 2 ;;
    --orders) orders=$2; shift 2 ;;
    --disconnect-after) disconnect_after=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --resend-chunk) chunk=$2; shift 2 ;;
    --hft-venue) hft_venue=$2; shift 2 ;;
    --hft-trader) hft_trader=$2; shift 2 ;;
    --qf-peer) qf_peer=$2; shift 2 ;;
    --proxy) proxy=$2; shift 2 ;;
    --spec-dir) spec_dir=$2; shift 2 ;;
    --data-dir) data_dir=$2; shift 2 ;;
    --work-dir) work_dir=$2; shift 2 ;;
    *) echo "run_interop.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in direction version scenario orders hft_venue hft_trader qf_peer spec_dir data_dir work_dir; do
  [ -n "${!v}" ] || { echo "run_interop.sh: --${v//_/-} is required" >&2; exit 2; }
done
case "$version" in
  fix44) begin=FIX.4.4 qf_id=QF44 hft_id=HFT44 ;;
  fixt) begin=FIXT.1.1 qf_id=QF50SP2 hft_id=HFT50SP2 ;;
  *) echo "run_interop.sh: --version fix44|fixt" >&2; exit 2 ;;
esac
case "$scenario" in
  flow) heartbeat=30 ;;
  reconnect) heartbeat=30; [ -n "$disconnect_after" ] || { echo "reconnect needs --disconnect-after" >&2; exit 2; } ;;
  netdrop) heartbeat=30
    [ -n "$disconnect_after" ] && [ -n "$proxy" ] || { echo "netdrop needs --disconnect-after and --proxy" >&2; exit 2; } ;;
  heartbeat) heartbeat=1 ;;
  *) echo "run_interop.sh: --scenario flow|reconnect|netdrop|heartbeat" >&2; exit 2 ;;
esac
case "$direction" in qf-to-hft|hft-to-qf) ;; *) echo "run_interop.sh: bad --direction" >&2; exit 2 ;; esac
if [ "$chunk" -gt 0 ] && { [ "$direction" != hft-to-qf ] || [ "$scenario" != netdrop ]; }; then
  echo "run_interop.sh: --resend-chunk is for --direction hft-to-qf --scenario netdrop" >&2
  exit 2
fi

rm -rf "$work_dir"
mkdir -p "$work_dir/acceptor_log" "$work_dir/initiator_log" "$work_dir/acceptor_store" "$work_dir/initiator_store"
started=$(date +%s.%N)
elapsed() { printf '%.1f' "$(echo "$(date +%s.%N) - $started" | bc)"; }

# ---- acceptor -------------------------------------------------------------
if [ "$direction" = qf-to-hft ]; then
  sed -e "s|\${SPEC_DIR}|$spec_dir|g" -e "s|\${STORE_DIR}|$work_dir/acceptor_store|g" \
    "$data_dir/hft_venue_$version.cfg" >"$work_dir/hft_venue.cfg"
  "$hft_venue" --config "$work_dir/hft_venue.cfg" --port-file "$work_dir/port" --log-level info \
    >"$work_dir/acceptor.out" 2>&1 &
else
  "$qf_peer" venue --config "$data_dir/qf_venue.cfg" --spec-dir "$spec_dir" --port 0 --port-file "$work_dir/port" \
    --log-dir "$work_dir/acceptor_log" --sessions "$hft_id" --exit-with-parent >"$work_dir/acceptor.out" 2>&1 &
fi
acceptor_pid=$!
# Stops PID once this script is gone, even killed with SIGKILL (a CTest
# timeout), so that no acceptor or proxy outlives the test.
watchdog() {
  local pid=$1 script=$$
  (while kill -0 "$script" 2>/dev/null; do sleep 1; done; kill -TERM "$pid" 2>/dev/null) >/dev/null 2>&1 &
}
watchdog "$acceptor_pid"
proxy_pid=""
acceptor_rc=""
stop_pid() { # stop_pid PID: SIGTERM, up to 10 s, then SIGKILL; returns the exit status
  local pid=$1
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
}
stop_acceptor() {
  stop_pid "$proxy_pid"
  proxy_pid=""
  if [ -n "$acceptor_pid" ]; then
    stop_pid "$acceptor_pid"
    acceptor_rc=$?
    acceptor_pid=""
  fi
}
trap stop_acceptor EXIT
trap 'exit 130' INT TERM

# Dictionaries load slowly under the sanitizers (FIX50SP2: tens of seconds).
for _ in $(seq 900); do
  [ -s "$work_dir/port" ] && break
  if ! kill -0 "$acceptor_pid" 2>/dev/null; then
    echo "the acceptor exited before listening:" >&2
    cat "$work_dir/acceptor.out" >&2
    exit 1
  fi
  sleep 0.1
done
[ -s "$work_dir/port" ] || { echo "the acceptor did not report its port within 90 s" >&2; exit 1; }
port=$(cat "$work_dir/port")
echo "acceptor listening on $port after $(elapsed) s"
if [ "$scenario" = netdrop ]; then
  "$proxy" --target-port "$port" --port-file "$work_dir/proxy_port" --fail-after-orders "$disconnect_after" \
    --blackhole-ms 300 >"$work_dir/proxy.out" 2>&1 &
  proxy_pid=$!
  watchdog "$proxy_pid"
  for _ in $(seq 100); do
    [ -s "$work_dir/proxy_port" ] && break
    sleep 0.1
  done
  [ -s "$work_dir/proxy_port" ] || { echo "interop-proxy did not start" >&2; cat "$work_dir/proxy.out" >&2; exit 1; }
  port=$(cat "$work_dir/proxy_port")
  echo "proxy listening on $port"
fi

# ---- initiator ------------------------------------------------------------
t_initiator=$(date +%s.%N)
if [ "$direction" = qf-to-hft ]; then
  args=(trader --config "$data_dir/qf_trader_$version.cfg" --spec-dir "$spec_dir" --host 127.0.0.1 --port "$port"
        --set "HEARTBTINT=$heartbeat" --orders "$orders" --require-fills --timeout-ms 60000
        --log-dir "$work_dir/initiator_log")
  [ "$scenario" = reconnect ] && args+=(--disconnect-after "$disconnect_after")
  [ "$scenario" = heartbeat ] && args+=(--idle-ms "$((idle * 1000))")
  "$qf_peer" "${args[@]}" >"$work_dir/initiator.out" 2>&1 &
else
  # SendBufferSize: QuickFIX reads slowly while it works through a resend;
  # with the default 64K the engine would close the connection (see
  # hft_venue_fix44.cfg).
  args=(--port "$port" --begin-string "$begin" --sender "$hft_id" --target VENUE --spec-dir "$spec_dir"
        --orders "$orders" --rate 20000 --require-fills --show 0 --timeout 60 --heartbeat "$heartbeat"
        --store "$work_dir/initiator_store" --set JournalSegmentSize=4M --set SendBufferSize=16M --log-level info)
  [ "$scenario" = reconnect ] && args+=(--disconnect-after "$disconnect_after")
  [ "$scenario" = heartbeat ] && args+=(--idle "$idle")
  [ "$chunk" -gt 0 ] && args+=(--set "ResendRequestChunkSize=$chunk")
  "$hft_trader" "${args[@]}" >"$work_dir/initiator.out" 2>&1 &
fi
initiator_pid=$!
watchdog "$initiator_pid"
wait "$initiator_pid"
initiator_rc=$?
initiator_secs=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t_initiator" | bc)")
stop_acceptor
trap - EXIT

echo "--- initiator ($direction, $version, $scenario), exit $initiator_rc, ${initiator_secs} s:"
grep -v '^$' "$work_dir/initiator.out" | tail -n 15
echo "--- acceptor:"
tail -n 5 "$work_dir/acceptor.out"
if [ "$scenario" = netdrop ]; then
  echo "--- proxy:"
  cat "$work_dir/proxy.out"
fi

# ---- checks ---------------------------------------------------------------
report=$(grep -E '^orders=' "$work_dir/initiator.out" | tail -n 1)
venue_report=$(grep -E '^venue: orders=' "$work_dir/acceptor.out" | tail -n 1)
value() { # value KEY [LINE]: the number after KEY= in the initiator's report (or LINE)
  local line=${2-$report}
  echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}
failures=0
check() { # check DESCRIPTION CONDITION...
  local what=$1
  shift
  if "$@"; then
    echo "ok:   $what"
  else
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}
eq() { [ "${1:-x}" = "$2" ]; }
ge() { [ -n "$1" ] && [ "$1" -ge "$2" ]; }

check "initiator exited 0" eq "$initiator_rc" 0
# A sanitizer report or a crash at shutdown shows in the acceptor's exit status.
check "acceptor stopped cleanly on SIGTERM (exit $acceptor_rc)" eq "$acceptor_rc" 0
check "initiator printed its counts" test -n "$report"
if [ -n "$report" ]; then
  check "every order acknowledged once ($(value acked)/$orders)" eq "$(value acked)" "$orders"
  check "every order filled once ($(value filled)/$orders)" eq "$(value filled)" "$orders"
  check "no report repeated without PossDup ($(value duplicates))" eq "$(value duplicates)" 0
  check "no report for an unknown order" eq "$(value unknown_orders)" 0
  check "no session Reject received" eq "$(value session_rejects)" 0
  check "no BusinessMessageReject received" eq "$(value business_rejects)" 0
  check "Logout answered (clean logout)" ge "$(value logouts_received)" 1
  check "no Logon with ResetSeqNumFlag=Y" eq "$(value reset_logons_received)" 0
  case "$scenario" in
    flow)
      check "one logon" eq "$(value logons)" 1
      check "nothing resent (PossDup received: $(value possdup_received))" eq "$(value possdup_received)" 0
      ;;
    heartbeat)
      check "one logon: the session stayed up while idle" eq "$(value logons)" 1
      check "heartbeats received while idle ($(value heartbeats_received) in ${idle} s at HeartBtInt=1)" \
        ge "$(value heartbeats_received)" "$((idle - 2))"
      echo "info: TestRequests received by the initiator: $(value test_requests_received)"
      ;;
    reconnect)
      check "connection dropped once" eq "$(value drops)" 1
      check "logged on again after the drop" eq "$(value logons)" 2
      check "sequence numbers continued (second Logon MsgSeqNum $(value last_logon_seq) > 1)" \
        ge "$(value last_logon_seq)" 2
      if [ "$direction" = hft-to-qf ]; then
        # The reports QuickFIX sent while the connection was going down are lost:
        # libhft must ask for them and receive them again with PossDupFlag=Y.
        check "libhft sent a ResendRequest ($(value resend_requests_sent))" ge "$(value resend_requests_sent)" 1
        check "QuickFIX resent reports with PossDup ($(value possdup_received))" ge "$(value possdup_received)" 1
      else
        # The orders QuickFIX stored while disconnected reach libhft only by its ResendRequest.
        check "libhft asked QuickFIX for the orders sent while down ($(value resend_requests_received))" \
          ge "$(value resend_requests_received)" 1
        check "QuickFIX took libhft's gap fill over its admin messages ($(value sequence_resets_received))" \
          ge "$(value sequence_resets_received)" 1
      fi
      ;;
    netdrop)
      check "the proxy failed the link once" grep -q "link reset after" "$work_dir/proxy.out"
      check "logged on again after the failure" eq "$(value logons)" 2
      check "sequence numbers continued (second Logon MsgSeqNum $(value last_logon_seq) > 1)" \
        ge "$(value last_logon_seq)" 2
      # Messages were lost both ways: each side asks, each side replays.
      check "the initiator was asked to resend ($(value resend_requests_received))" ge "$(value resend_requests_received)" 1
      check "the initiator received resent reports with PossDup ($(value possdup_received))" ge "$(value possdup_received)" 1
      if [ "$direction" = hft-to-qf ]; then
        check "libhft sent a ResendRequest ($(value resend_requests_sent))" ge "$(value resend_requests_sent)" 1
        check "libhft resent orders ($(value messages_resent))" ge "$(value messages_resent)" 1
      else
        check "QuickFIX took libhft's gap fill over its admin messages ($(value sequence_resets_received))" \
          ge "$(value sequence_resets_received)" 1
      fi
      ;;
  esac
fi
if [ "$direction" = hft-to-qf ]; then
  check "QuickFIX venue printed its counts" test -n "$venue_report"
  if [ -n "$venue_report" ]; then
    check "QuickFIX venue answered every order once ($(value orders "$venue_report")/$orders)" \
      eq "$(value orders "$venue_report")" "$orders"
    check "QuickFIX venue saw no duplicate order" eq "$(value duplicate_orders "$venue_report")" 0
    check "QuickFIX venue received no session Reject" eq "$(value session_rejects_received "$venue_report")" 0
    if [ "$scenario" = netdrop ]; then
      check "QuickFIX venue got resent orders ($(value possdup_orders "$venue_report"))" \
        ge "$(value possdup_orders "$venue_report")" 1
      check "QuickFIX venue took libhft's gap fill over its admin messages ($(value sequence_resets_received "$venue_report"))" \
        ge "$(value sequence_resets_received "$venue_report")" 1
    fi
    [ "$scenario" = heartbeat ] && check "QuickFIX venue received heartbeats ($(value heartbeats_received "$venue_report"))" \
      ge "$(value heartbeats_received "$venue_report")" "$((idle - 2))"
  fi
else
  hft_orders=$(sed -n 's/^hft-venue: \([0-9]*\) orders.*/\1/p' "$work_dir/acceptor.out" | tail -n 1)
  check "hft-venue answered every order once (${hft_orders:-?}/$orders)" eq "$hft_orders" "$orders"
fi
if [ "$chunk" -gt 0 ]; then
  # hft-trader's requests, as it logged them.
  requests=$(grep -o 'Sent ResendRequest FROM: [0-9]* TO: [0-9]*' "$work_dir/initiator.out")
  n_requests=$(echo "$requests" | grep -c FROM)
  widest=$(echo "$requests" | awk '{ n = ($NF == 0) ? 1e9 : $NF - $(NF-2) + 1; if (n > w) w = n } END { print w + 0 }')
  check "the initiator's gap took several chunked ResendRequests ($n_requests)" ge "$n_requests" 2
  check "each covered at most $chunk messages (widest: $widest)" test "$widest" -le "$chunk"
fi
echo "total $(elapsed) s (initiator ${initiator_secs} s)"
if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed; logs in $work_dir" >&2
  exit 1
fi
# The journals are several MB per run; the logs and outputs stay.
rm -rf "$work_dir/acceptor_store" "$work_dir/initiator_store"
exit 0
