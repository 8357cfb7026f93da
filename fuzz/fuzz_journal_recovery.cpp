// libFuzzer target for store recovery: a session store (outbound and inbound
// journal segments, seqnums.dat) with damaged files (journal_files.hpp says
// how the input describes them) opened with JournalStore::open, as a
// restarting engine does. Invariants:
// - open either refuses with an Error naming what is wrong, or recovers;
// - a recovered store replays its outbound messages in strictly ascending
//   seq, and next_sender_seq is past the last of them;
// - what is stored after recovery survives: the store reopens without
//   cutting anything, replays the new message with the same bytes, and
//   keeps the sequence numbers set.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "hft/store/message_store.hpp"
#include "journal_files.hpp"

using namespace hft;

namespace {

inline void expect(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr std::int64_t kNow = 1'710'504'000'000'000'000;

store::JournalStoreConfig config(const std::string& dir) {
  store::JournalStoreConfig c;
  c.directory = dir;
  c.journal.segment_size = store::kMinSegmentSize;
  c.journal.rewarm_window = 0;
  c.journal.durability = store::Durability::kNone;
  c.journal_inbound = true;
  return c;
}

// Replays every outbound message; returns the last seq (0: none).
std::uint64_t replay_all(store::JournalStore& s) {
  std::uint64_t last = 0;
  for (std::uint64_t from = 1;;) {
    const store::ReplayResult r = s.replay(from, UINT64_MAX, 64, [&](const store::StoredMessage& m) {
      expect(m.seq > last);
      last = m.seq;
      return true;
    });
    if (r.status != store::ReplayStatus::kLimit || r.next_seq <= from) break;
    from = r.next_seq;
  }
  return last;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = fuzz::write_store({reinterpret_cast<const char*>(data), size});
  std::uint64_t seq = 0, target = 0;
  const std::string message =
      "8=FIX.4.4\x01"
      "9=5\x01"
      "35=0\x01"
      "10=000\x01";
  {
    auto opened = store::JournalStore::open(config(dir), nullptr, kNow);
    if (!opened) {
      expect(!opened.error().message.empty());
      return 0;
    }
    store::JournalStore& s = **opened;
    const std::uint64_t last = replay_all(s);
    expect(s.next_sender_seq() > last);
    seq = s.next_sender_seq();
    const std::span<char> room = s.claim(message.size());
    if (room.empty()) return 0;  // a full or failing store says so; nothing more to check
    std::memcpy(room.data(), message.data(), message.size());
    if (s.commit(seq, kNow, 0, message.size()) != store::StoreStatus::kOk) return 0;
    target = s.next_target_seq() + 1;
    s.set_next_target_seq(target);
    if (s.store_inbound(target - 1, kNow, {message.data(), message.size()}) != store::StoreStatus::kOk)
      return 0;
  }
  auto reopened = store::JournalStore::open(config(dir), nullptr, kNow);
  expect(reopened.ok());
  store::JournalStore& s = **reopened;
  expect(!s.outbound().recovery().torn);
  expect(s.next_sender_seq() > seq && s.next_target_seq() == target);
  bool found = false;
  (void)s.replay(seq, seq, 1, [&](const store::StoredMessage& m) {
    found = m.seq == seq && std::string_view(m.bytes.data(), m.bytes.size()) == message;
    return true;
  });
  expect(found);
  return 0;
}
