#!/usr/bin/env bash
# The hello examples on loopback: the acceptor on a free port, the initiator
# sends one typed NewOrderSingle and must get its ExecutionReport; both must
# exit 0.  run_hello.sh <hello_acceptor> <hello_initiator>
set -euo pipefail
out=$(mktemp)
trap 'rm -f "$out"; [ -n "${acceptor:-}" ] && kill "$acceptor" 2>/dev/null || true' EXIT
"$1" 0 20 >"$out" &
acceptor=$!
port=""
for _ in $(seq 1 200); do
  kill -0 "$acceptor" 2>/dev/null || break
  port=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$out")
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "acceptor did not start"; cat "$out"; exit 1; }
report=$("$2" "$port")
echo "$report"
grep -q "^ExecutionReport ORD1: ExecType F$" <<<"$report"
wait "$acceptor"
acceptor=""
cat "$out"
grep -q "^orders answered: 1$" "$out"
