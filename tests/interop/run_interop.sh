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
#   --scenario tls-reject   (with --tls) the handshake must fail, fast, and nobody logs on:
#                           hft-to-qf: the QuickFIX venue presents untrusted.pem (signed by
#                           other-ca.pem), which hft-trader must refuse (certificate verify
#                           failed); qf-to-hft: the QuickFIX trader presents the expired
#                           client certificate expired.pem, which hft-venue must refuse
#   --tls                   the session runs over TLS with mutual authentication: the
#                           certificates are made into the work dir (--certs-tool, RSA
#                           keys: QuickFIX 1.15 configures no EC key); both acceptors
#                           present server.pem and require a client certificate signed by
#                           ca.pem (CertificateVerifyLevel=1), both initiators present
#                           client.pem and verify the acceptor against ca.pem. libhft:
#                           SocketUseSSL=Y; QuickFIX: qf-peer --tls (SSLSocketAcceptor/
#                           SSLSocketInitiator). Checked besides the counts: QuickFIX's
#                           event log shows its SSL side at work, libhft logged no TLS failure
#   --resend-chunk N        (netdrop, hft-to-qf) hft-trader asks for its gap in
#                           ResendRequests of at most N messages (ResendRequestChunkSize),
#                           each answered by QuickFIX, and the gap is still recovered
#                           (QuickFIX 1.15 has no such setting, so qf-to-hft cannot)
#
# usage: run_interop.sh --direction D --version V --scenario S --orders N
#          [--disconnect-after K] [--idle S] [--resend-chunk N] [--proxy EXE] [--tls --certs-tool EXE] --hft-venue EXE --hft-trader EXE --qf-peer EXE
#          --spec-dir DIR --data-dir DIR --work-dir DIR
set -uo pipefail

direction="" version="" scenario="" orders="" disconnect_after="" idle=5 chunk=0
hft_venue="" hft_trader="" qf_peer="" proxy="" spec_dir="" data_dir="" work_dir="" tls=0 certs_tool=""
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
    --tls) tls=1; shift ;;
    --certs-tool) certs_tool=$2; shift 2 ;;
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
  tls-reject) heartbeat=30; [ "$tls" = 1 ] || { echo "tls-reject needs --tls" >&2; exit 2; } ;;
  *) echo "run_interop.sh: --scenario flow|reconnect|netdrop|heartbeat|tls-reject" >&2; exit 2 ;;
esac
case "$direction" in qf-to-hft|hft-to-qf) ;; *) echo "run_interop.sh: bad --direction" >&2; exit 2 ;; esac
if [ "$chunk" -gt 0 ] && { [ "$direction" != hft-to-qf ] || [ "$scenario" != netdrop ]; }; then
  echo "run_interop.sh: --resend-chunk is for --direction hft-to-qf --scenario netdrop" >&2
  exit 2
fi
if [ "$tls" = 1 ] && [ -z "$certs_tool" ]; then
  echo "run_interop.sh: --tls needs --certs-tool" >&2
  exit 2
fi

rm -rf "$work_dir"
mkdir -p "$work_dir/acceptor_log" "$work_dir/initiator_log" "$work_dir/acceptor_store" "$work_dir/initiator_store"
started=$(date +%s.%N)
elapsed() { printf '%.1f' "$(echo "$(date +%s.%N) - $started" | bc)"; }

# ---- TLS settings ---------------------------------------------------------
# The keys both engines read (QuickFIX's names), one KEY=VALUE a line:
# acceptor_tls for either acceptor's [DEFAULT], initiator_tls for either
# initiator (QuickFIX's [DEFAULT], hft-trader's --set).
acceptor_tls="" initiator_tls="" qf_tls=() qf_env=()
initiator_timeout=60
if [ "$tls" = 1 ]; then
  certs=$work_dir/certs
  "$certs_tool" "$certs" || { echo "run_interop.sh: $certs_tool failed" >&2; exit 1; }
  server_cert=server client_cert=client
  if [ "$scenario" = tls-reject ]; then
    # Fails at the first handshake; the deadline only bounds a hang.
    initiator_timeout=5
    if [ "$direction" = hft-to-qf ]; then server_cert=untrusted; else client_cert=expired; fi
  fi
  acceptor_tls="ServerCertificateFile=$certs/$server_cert.pem
ServerCertificateKeyFile=$certs/$server_cert-key.pem
CertificationAuthoritiesFile=$certs/ca.pem
CertificateVerifyLevel=1"
  initiator_tls="ClientCertificateFile=$certs/$client_cert.pem
ClientCertificateKeyFile=$certs/$client_cert-key.pem
CertificationAuthoritiesFile=$certs/ca.pem"
  qf_tls=(--tls)
  # QuickFIX 1.15's SSL classes do not free all of their OpenSSL objects
  # (LeakSanitizer at exit, every stack ending in libcrypto: e.g. 2 objects
  # per failed handshake on the acceptor, some at each side's stop). qf-peer
  # makes no OpenSSL call of its own, so these are QuickFIX's, not for its
  # exit status to report; every other leak still is.
  echo "leak:libcrypto.so" >"$work_dir/qf_lsan.supp"
  qf_env=("LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$work_dir/qf_lsan.supp")
fi
with_tls() { # with_tls SETTINGS < CONFIG: CONFIG with SETTINGS added to its [DEFAULT]
  awk -v add="$1" '{ print } /^\[DEFAULT\]/ && add != "" { print add }'
}

# ---- acceptor -------------------------------------------------------------
if [ "$direction" = qf-to-hft ]; then
  hft_tls=""
  [ "$tls" = 1 ] && hft_tls="SocketUseSSL=Y
$acceptor_tls"
  sed -e "s|\${SPEC_DIR}|$spec_dir|g" -e "s|\${STORE_DIR}|$work_dir/acceptor_store|g" \
    "$data_dir/hft_venue_$version.cfg" | with_tls "$hft_tls" >"$work_dir/hft_venue.cfg"
  "$hft_venue" --config "$work_dir/hft_venue.cfg" --port-file "$work_dir/port" --log-level info \
    >"$work_dir/acceptor.out" 2>&1 &
else
  with_tls "$acceptor_tls" <"$data_dir/qf_venue.cfg" >"$work_dir/qf_venue.cfg"
  env "${qf_env[@]}" "$qf_peer" venue "${qf_tls[@]}" --config "$work_dir/qf_venue.cfg" --spec-dir "$spec_dir" --port 0 --port-file "$work_dir/port" \
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
  with_tls "$initiator_tls" <"$data_dir/qf_trader_$version.cfg" >"$work_dir/qf_trader.cfg"
  args=(trader "${qf_tls[@]}" --config "$work_dir/qf_trader.cfg" --spec-dir "$spec_dir" --host 127.0.0.1 --port "$port"
        --set "HEARTBTINT=$heartbeat" --orders "$orders" --require-fills --timeout-ms "$((initiator_timeout * 1000))"
        --log-dir "$work_dir/initiator_log")
  [ "$scenario" = reconnect ] && args+=(--disconnect-after "$disconnect_after")
  [ "$scenario" = heartbeat ] && args+=(--idle-ms "$((idle * 1000))")
  env "${qf_env[@]}" "$qf_peer" "${args[@]}" >"$work_dir/initiator.out" 2>&1 &
else
  # SendBufferSize: QuickFIX reads slowly while it works through a resend;
  # with the default 64K the engine would close the connection (see
  # hft_venue_fix44.cfg).
  args=(--port "$port" --begin-string "$begin" --sender "$hft_id" --target VENUE --spec-dir "$spec_dir"
        --orders "$orders" --rate 20000 --require-fills --show 0 --timeout "$initiator_timeout" --heartbeat "$heartbeat"
        --store "$work_dir/initiator_store" --set JournalSegmentSize=4M --set SendBufferSize=16M --log-level info)
  [ "$scenario" = reconnect ] && args+=(--disconnect-after "$disconnect_after")
  [ "$scenario" = heartbeat ] && args+=(--idle "$idle")
  [ "$chunk" -gt 0 ] && args+=(--set "ResendRequestChunkSize=$chunk")
  if [ "$tls" = 1 ]; then
    args+=(--set SocketUseSSL=Y)
    while read -r kv; do args+=(--set "$kv"); done <<<"$initiator_tls"
  fi
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
finish() {
  echo "total $(elapsed) s (initiator ${initiator_secs} s)"
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed; logs in $work_dir" >&2
    exit 1
  fi
  # The journals are several MB per run; the logs and outputs stay.
  rm -rf "$work_dir/acceptor_store" "$work_dir/initiator_store"
  exit 0
}
if [ "$direction" = hft-to-qf ]; then
  qf_events=$work_dir/acceptor_log/GLOBAL.event.current.log hft_out=$work_dir/initiator.out
else
  qf_events=$work_dir/initiator_log/GLOBAL.event.current.log hft_out=$work_dir/acceptor.out
fi

if [ "$scenario" = tls-reject ]; then
  check "acceptor stopped cleanly on SIGTERM (exit $acceptor_rc)" eq "$acceptor_rc" 0
  check "the initiator failed (exit $initiator_rc)" eq "$initiator_rc" 1
  check "within its ${initiator_timeout} s deadline (${initiator_secs} s)" \
    test "$(echo "$initiator_secs < $initiator_timeout + 5" | bc)" = 1
  if [ "$direction" = hft-to-qf ]; then
    check "hft-trader named the certificate failure" \
      grep -q "TLS connection to 127.0.0.1:$port failed: certificate verify failed: " "$hft_out"
    grep -o "TLS connection to .*" "$hft_out" | head -n 1 | sed 's/^/info: /'
    check "hft-trader reported that it never logged on" grep -q "hft-trader: no logon from" "$hft_out"
    check "QuickFIX venue printed its counts" test -n "$venue_report"
    check "QuickFIX venue saw no logon ($(value logons "$venue_report"))" eq "$(value logons "$venue_report")" 0
  else
    check "hft-venue named the certificate failure" \
      grep -q "closing connection: TLS handshake failed: .*certificate has expired" "$hft_out"
    grep -o "closing connection: TLS handshake failed: .*" "$hft_out" | head -n 1 | sed 's/^/info: /'
    check "qf-peer trader reported that it never logged on" grep -q "qf-peer: no logon within" "$work_dir/initiator.out"
    hft_orders=$(sed -n 's/^hft-venue: \([0-9]*\) orders.*/\1/p' "$hft_out" | tail -n 1)
    check "hft-venue received no order (${hft_orders:-?})" eq "$hft_orders" 0
  fi
  finish
fi

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
        # What QuickFIX asked of libhft: only what libhft sent while the
        # connection went down (reports, its Logout), and only if any was lost.
        qf_asked=$(cat "$work_dir"/initiator_log/*.messages.current.log 2>/dev/null |
          grep -a $'\00135=2\001' | grep -ac $'\00149='"$qf_id"$'\001' || true)
        if [ "${qf_asked:-0}" -ge 1 ]; then
          check "QuickFIX's $qf_asked ResendRequest(s) to libhft answered (PossDup $(value possdup_received), SequenceReset $(value sequence_resets_received))" \
            ge "$(( $(value possdup_received) + $(value sequence_resets_received) ))" 1
        else
          echo "info: QuickFIX lost nothing of libhft's at the drop (it sent no ResendRequest)"
        fi
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
  # The gap is what the link lost on its way to the initiator (how many
  # reports were in flight when it went dark): several chunks when it is
  # wider than one, else one request.
  gap=$(sed -n 's/.*MsgSeqNum too high, expecting \([0-9]*\) but received \([0-9]*\).*/\1 \2/p' \
    "$work_dir/initiator.out" | head -n 1 | awk '{ print $2 - $1 }')
  if [ "${gap:-0}" -gt "$chunk" ]; then
    check "the initiator's gap of $gap took several chunked ResendRequests ($n_requests)" ge "$n_requests" 2
  else
    check "the initiator's gap of ${gap:-?} (at most $chunk) took one ResendRequest ($n_requests)" eq "$n_requests" 1
  fi
  check "each covered at most $chunk messages (widest: $widest)" test "$widest" -le "$chunk"
fi
if [ "$tls" = 1 ]; then
  # The logons above went through TLS ports both ways; these show each
  # engine's TLS side was the one at work.
  check "libhft logged no TLS failure" bash -c '! grep -q "TLS connection to\|TLS handshake failed" "$1"' _ "$hft_out"
  if [ "$direction" = hft-to-qf ]; then
    check "QuickFIX accepted an SSL connection (its event log)" grep -q "Accepted SSL connection from" "$qf_events"
  else
    check "QuickFIX's SSL initiator loaded its client certificate (its event log)" \
      grep -q "Configuring RSA client certificate" "$qf_events"
  fi
fi
finish
