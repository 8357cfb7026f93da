#!/usr/bin/env python3
"""Reproductions (not CTest tests) of two transport/engine issues seen in the
interop tests.

1. libhft closes a logged-on session when its counterparty reads slowly, and
logs it as if the counterparty had left.

Starts hft-venue (FIX.4.4, default SendBufferSize=64K), logs on over a raw
socket, sends N NewOrderSingles without reading the ExecutionReports, waits,
then reads: the venue has closed the connection (EOF/RST after some reports)
although the client never disconnected. The venue's log says "Disconnected by
the counterparty" and nothing about the overflow. With --send-buffer 16M
(SendBufferSize in the venue's config) the session stays up.

    repro_slow_reader.py --venue build/x/apps/hft-venue/hft-venue [--orders 20000] [--send-buffer 16M]

2. --logout (with --send-buffer 16M): the client, still not reading, sends a
Logout. The venue logs "Sending logout response" and "Disconnecting: logout
complete", but the Logout answer (and every report still queued in the
engine's outbound buffer) never reaches the client: Connection::close drops
the queued bytes, although session::Output promises to close "after the
bytes already given to send()".

    repro_slow_reader.py --venue ... --orders 20000 --send-buffer 16M --logout
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

SOH = "\x01"


def fix(body_fields, seq):
    now = time.strftime("%Y%m%d-%H:%M:%S.000", time.gmtime())
    body = f"35={body_fields[0]}{SOH}34={seq}{SOH}49=CLIENT{SOH}52={now}{SOH}56=VENUE{SOH}" + "".join(
        f"{f}{SOH}" for f in body_fields[1:])
    head = f"8=FIX.4.4{SOH}9={len(body)}{SOH}"
    msg = head + body
    return (msg + f"10={sum(msg.encode()) % 256:03d}{SOH}").encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venue", required=True)
    ap.add_argument("--orders", type=int, default=20000)
    ap.add_argument("--send-buffer", default="")
    ap.add_argument("--logout", action="store_true", help="send a Logout before reading")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="slow_reader_")
    cfg = os.path.join(work, "venue.cfg")
    with open(cfg, "w") as f:
        f.write("[DEFAULT]\nConnectionType=acceptor\nNonStopSession=Y\nSocketAcceptPort=0\nUseDataDictionary=N\n")
        if a.send_buffer:
            f.write(f"SendBufferSize={a.send_buffer}\n")
        f.write("\n[SESSION]\nBeginString=FIX.4.4\nSenderCompID=VENUE\nTargetCompID=CLIENT\n")
    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "venue.log"), "w")
    venue = subprocess.Popen([a.venue, "--config", cfg, "--port-file", port_file], stdout=log, stderr=log)
    try:
        for _ in range(300):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        port = int(open(port_file).read())
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(fix(["A", "98=0", "108=30"], 1))
        time.sleep(0.5)
        # Small receive buffer on our side: the venue's reports pile up in its own buffers.
        batch = b"".join(
            fix(["D", f"11={i}", "21=1", "55=X", "54=1", "60=20250101-00:00:00", "38=10", "40=2", "44=10"], i + 1)
            for i in range(1, a.orders + 1))
        s.sendall(batch)
        time.sleep(3)
        if a.logout:
            s.sendall(fix(["5"], a.orders + 2))
            time.sleep(1)
        received = b""
        s.settimeout(2)
        try:
            while True:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                received += chunk
        except socket.timeout:
            pass
        except ConnectionResetError:
            print("client: connection reset by the venue")
        reports = received.count(b"\x0135=8\x01")
        closed = reports < 2 * a.orders
        print(f"client: sent {a.orders} orders without reading, then read {reports} ExecutionReports "
              f"(expected {2 * a.orders}); venue closed the session: {'yes' if closed else 'no'}")
        if a.logout:
            answered = b"\x0135=5\x01" in received
            print(f"client: Logout answer received: {'yes' if answered else 'NO'}")
    finally:
        venue.terminate()
        venue.wait(timeout=10)
        log.close()
    print("venue log:")
    sys.stdout.write(open(os.path.join(work, "venue.log")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
