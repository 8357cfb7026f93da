// Builds real journals for the journal audit and hft-journal tests: FIX
// messages encoded with codec::MessageWriter + HeaderTemplate, written in
// place (claim, encode, commit) or appended as bytes the test has bent.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/store/journal.hpp"
#include "support/temp_dir.hpp"
#include "hft/store/message_store.hpp"

namespace hft::audit::test {

/// 2026-01-01T00:00:00Z in ns.
inline constexpr std::int64_t kT0 = 1'767'225'600'000'000'000;
inline constexpr std::int64_t kMs = 1'000'000;

using TempDir = hft::test::TempDir;

using Body = std::vector<std::pair<int, std::string>>;

inline Body logon_body() { return {{98, "0"}, {108, "30"}}; }

inline Body order_body(std::uint64_t n) {
  return {{11, "ORD" + std::to_string(n)}, {55, "EUR/USD"}, {54, "1"}, {60, "20260101-00:00:00.000"},
          {38, "100"},                     {40, "2"},       {44, "1.2345"}};
}

inline Body execution_body(std::uint64_t n) {
  return {{37, "O" + std::to_string(n)}, {17, "E" + std::to_string(n)}, {150, "0"}, {39, "0"}, {55, "EUR/USD"},
          {54, "1"},                     {151, "100"},                    {14, "0"},  {6, "0"}};
}

/// Encodes messages of one session direction.
class FixBuilder {
 public:
  explicit FixBuilder(std::string_view begin_string = "FIX.4.4", std::string_view sender = "CLIENT",
                      std::string_view target = "VENUE") {
    ok_ = header_.init(begin_string, sender, target);
  }
  [[nodiscard]] bool ok() const { return ok_; }

  /// Encodes into `room`; returns the message span (empty on failure).
  std::span<char> encode(std::span<char> room, std::string_view type, std::uint64_t seq, std::int64_t ts,
                         const Body& body, bool poss_dup = false) {
    codec::MessageWriter w(room);
    if (poss_dup) {
      codec::HeaderExtras extras;
      extras.poss_dup = true;
      extras.orig_sending_time = "20260101-00:00:00.000";
      w.start(header_, type, seq, ts, codec::TimePrecision::kMillis, formatter_, extras);
    } else {
      w.start(header_, type, seq, ts, codec::TimePrecision::kMillis, formatter_);
    }
    for (const auto& [tag, value] : body) w.add(tag, value);
    const auto r = w.finish();
    return r.ok() ? r.message : std::span<char>{};
  }

  /// The message as a string (to bend before appending).
  std::string text(std::string_view type, std::uint64_t seq, std::int64_t ts, const Body& body,
                   bool poss_dup = false) {
    std::vector<char> buf(4096);
    const std::span<char> m = encode(buf, type, seq, ts, body, poss_dup);
    return {m.data(), m.size()};
  }

  /// claim + encode in place + commit, as the session sends. `Store` is a
  /// store::Journal or a store::MessageStore.
  template <typename Store>
  bool write(Store& store, std::string_view type, std::uint64_t seq, std::int64_t ts, const Body& body) {
    const std::span<char> room = store.claim(1024);
    if (room.empty()) return false;
    const std::span<char> m = encode(room, type, seq, ts, body);
    if (m.empty()) return false;
    return store.commit(seq, ts, static_cast<std::size_t>(m.data() - room.data()), m.size()) == store::StoreStatus::kOk;
  }

 private:
  codec::HeaderTemplate header_;
  codec::TimestampFormatter formatter_;
  bool ok_ = false;
};

/// Small segments, nothing flushed, no background service.
inline store::JournalConfig journal_config(const std::string& dir, std::size_t segment_size = store::kMinSegmentSize) {
  store::JournalConfig c;
  c.directory = dir;
  c.segment_size = segment_size;
  c.durability = store::Durability::kNone;
  c.rewarm_window = 0;
  return c;
}

inline std::unique_ptr<store::Journal> open_journal(const std::string& dir,
                                                    std::size_t segment_size = store::kMinSegmentSize) {
  auto j = store::Journal::open(journal_config(dir, segment_size));
  return j ? std::move(*j) : nullptr;
}

inline std::unique_ptr<store::JournalStore> open_store(const std::string& dir) {
  store::JournalStoreConfig c;
  c.directory = dir;
  c.journal = journal_config(dir);
  auto s = store::JournalStore::open(c, nullptr, kT0);
  return s ? std::move(*s) : nullptr;
}

/// Appends an arbitrary (possibly bent) message: the record CRC is right.
inline bool append(store::Journal& j, std::uint64_t seq, std::int64_t ts, const std::string& bytes) {
  return j.append(seq, ts, {bytes.data(), bytes.size()}) == store::StoreStatus::kOk;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A session store with a short conversation: outbound Logon + 3 orders,
/// inbound Logon + 3 execution reports, interleaved 1 ms apart.
inline bool write_conversation(const std::string& dir) {
  auto store = open_store(dir);
  if (!store) return false;
  FixBuilder out("FIX.4.4", "CLIENT", "VENUE");
  FixBuilder in("FIX.4.4", "VENUE", "CLIENT");
  std::int64_t t = kT0;
  if (!out.write(*store, "A", 1, t, logon_body())) return false;
  std::string m = in.text("A", 1, t += kMs, logon_body());
  if (store->store_inbound(1, t, {m.data(), m.size()}) != store::StoreStatus::kOk) return false;
  for (std::uint64_t i = 2; i <= 4; ++i) {
    if (!out.write(*store, "D", i, t += kMs, order_body(i))) return false;
    m = in.text("8", i, t += kMs, execution_body(i));
    if (store->store_inbound(i, t, {m.data(), m.size()}) != store::StoreStatus::kOk) return false;
  }
  return true;
}

}  // namespace hft::audit::test
