#!/usr/bin/env bash
# The examples on loopback: the acceptor on a free port, the initiator sends
# typed NewOrderSingles and must get their ExecutionReports; both must exit 0.
#
#   run_hello.sh <hello_acceptor> <initiator> [<line the initiator prints> <orders answered> [initiator args]]
#
# Defaults: hello_initiator's one order ("ExecutionReport ORD1: ExecType F", 1).
set -euo pipefail
expect_line=${3:-"ExecutionReport ORD1: ExecType F"}
expect_answered=${4:-1}
out=$(mktemp)
trap 'rm -f "$out"; [ -n "${acceptor:-}" ] && kill "$acceptor" 2>/dev/null || true' EXIT
"$1" 0 30 >"$out" &
acceptor=$!
port=""
for _ in $(seq 1 200); do
  kill -0 "$acceptor" 2>/dev/null || break
  port=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$out")
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "acceptor did not start"; cat "$out"; exit 1; }
report=$("$2" "$port" "${@:5}")
echo "$report"
grep -qxF "$expect_line" <<<"$report"
wait "$acceptor"
acceptor=""
cat "$out"
grep -qxF "orders answered: $expect_answered" "$out"
