// The floor lane: the wire floor of this host, measured in the same run as
// the engine lanes.
//
// Boundary: a client thread sends a message of the reference order's size
// (230 bytes by default) over loopback TCP (TCP_NODELAY on both ends) to an
// echo thread, and the time from just before send() to the last echoed byte
// received is one sample. No FIX engine, no parsing, no journal. Both threads
// are pinned to the given cores.
//
// Variants:
//   busy-closed      non-blocking sockets, both sides spin on recv; one in flight
//   blocking-closed  blocking send/recv on both sides; one in flight
//   busy-paced       spinning, open loop at --rate with up to --window in flight
//   blocking-paced   blocking echo side; the client waits in ppoll() (timer
//                    slack 1 ns) until the next planned arrival or a reply
//
// Closed variants record one series, "rtt" (TSC ticks, with each call's start
// offset). Paced variants record the pacer's three series: "service" (round
// trip from the actual send), "response" (from the planned arrival) and
// "scheduler_delay" (actual send - planned). Warm-up calls run closed-loop
// before the measured phase and are not recorded. Every echoed message is
// compared with the bytes sent (the call index is stamped in bytes 0-7); the
// run's audit passes when every echo matched and their count equals the
// calls made.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hft/core/expected.hpp"
#include "hft/lab/lane.hpp"

namespace hft::lab {

/// The LAB.md reference NewOrderSingle (SOH-delimited, 230 bytes).
inline constexpr std::string_view kReferenceOrder =
    "8=FIXT.1.1\x01" "9=206\x01" "35=D\x01" "34=2\x01" "49=CLIENT1\x01" "52=20261130-14:36:30.691\x01"
    "56=EXECUTOR\x01" "50=SNDR_SUB\x01" "57=SRVR_SUB\x01" "11=1\x01" "55=NOKIA.HE\x01" "54=1\x01" "38=10\x01"
    "44=10000\x01" "40=2\x01" "59=0\x01" "453=2\x01" "448=PARTY1\x01" "447=D\x01" "452=1\x01" "448=PARTY2\x01"
    "447=D\x01" "452=3\x01" "60=20261130-14:36:30.691\x01" "10=110\x01";
static_assert(kReferenceOrder.size() == 230, "the LAB.md reference order is 230 bytes");

/// The floor payload of `size` bytes: the reference order, cut or repeated
/// to size. size must be >= 8 (the call index is stamped in bytes 0-7).
[[nodiscard]] std::string floor_message(std::size_t size);

/// Runs one floor measurement (see the file comment). Errors name the
/// failing step (bind, connect, pin, ...) and the variant.
[[nodiscard]] Expected<RunResult> run_floor(const LaneConfig& config, RunContext& context);

/// The floor lane for the registry.
[[nodiscard]] Lane make_floor_lane();

}  // namespace hft::lab
