// Consumer of an installed libhft: encodes and frames a Heartbeat.
#include <cstdio>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"

int main() {
  hft::codec::HeaderTemplate header;
  if (!header.init("FIX.4.4", "A", "B")) return 1;
  hft::codec::TimestampFormatter ts;
  char buf[256];
  hft::codec::MessageWriter w(buf);
  w.start(header, "0", 1, 0, hft::codec::TimePrecision::kMillis, ts);
  const auto r = w.finish();
  if (!r.ok()) return 1;
  const auto f = hft::codec::frame({r.message.data(), r.message.size()});
  if (f.status != hft::codec::FrameStatus::kComplete || f.size != r.message.size()) return 1;
  std::printf("consumer ok: %zu bytes\n", f.size);
  return 0;
}
