// One journal shared by many sessions: each session's SharedStore sees only
// its own stream (claim/commit, replay, inbound, epochs), and reopening the
// journal gives every session back its numbers and messages, through
// damaged tails and seqnums.dat files that lag, are missing or are ahead.
#include "hft/store/shared_journal.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "hft/store/format.hpp"
#include "hft/store/seqnum_store.hpp"
#include "store/store_test_util.hpp"
#include "support/alloc_counter.hpp"

namespace hft::store {
namespace {

using test::message_for;
using test::TempDir;

constexpr std::size_t kSeg = 64 * 1024;
constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();

std::string journal_dir(const TempDir& dir) {
  return dir.sub("journal");
}

SharedJournalConfig journal_config(const TempDir& dir) {
  SharedJournalConfig c;
  c.journal = test::small_config(journal_dir(dir), kSeg);
  return c;
}

SharedJournal::StoreConfig store_config(const TempDir& dir, const std::string& name,
                                        std::uint64_t identity = 0, bool journal_inbound = true) {
  SharedJournal::StoreConfig c;
  c.directory = dir.sub("sessions/" + name);
  c.name = name;
  c.session_identity = identity;
  c.journal_inbound = journal_inbound;
  c.sync_new_files = false;
  return c;
}

std::string seqnums_path(const TempDir& dir, const std::string& name) {
  return dir.sub("sessions/" + name + "/seqnums.dat");
}

/// Opens the shared journal (a test failure, and null, if it does not open).
std::unique_ptr<SharedJournal> open_journal(const TempDir& dir) {
  auto j = SharedJournal::open(journal_config(dir));
  if (!j) {
    ADD_FAILURE() << "SharedJournal::open: " << j.error().message;
    return nullptr;
  }
  return std::move(*j);
}

std::unique_ptr<SharedStore> open_store(SharedJournal& j, const SharedJournal::StoreConfig& c,
                                        std::int64_t now_ns = 1000) {
  auto s = j.open_store(c, now_ns);
  if (!s) {
    ADD_FAILURE() << "open_store(" << c.name << "): " << s.error().message;
    return nullptr;
  }
  return std::move(*s);
}

/// A message of session `who` with MsgSeqNum `seq`: distinct per session.
std::string body(const std::string& who, std::uint64_t seq, std::size_t size = 120) {
  return "49=" + who + "\x01" + message_for(seq, size);
}

std::int64_t ts_of(const std::string& who, std::uint64_t seq) {
  return static_cast<std::int64_t>(seq) * 1000 + static_cast<std::int64_t>(who[0]);
}

/// Sends like a session: claim, encode right-aligned, commit at the offset.
StoreStatus send(MessageStore& store, const std::string& who, std::uint64_t seq, std::size_t size = 120,
                 std::uint8_t flags = 0) {
  const std::string m = body(who, seq, size);
  std::span<char> room = store.claim(m.size() + 40);
  if (room.empty()) return store.last_status();
  const std::size_t offset = 40 - (seq % 7);
  std::memcpy(room.data() + offset, m.data(), m.size());
  return store.commit(seq, ts_of(who, seq), offset, m.size(), flags);
}

struct Got {
  std::vector<std::uint64_t> seqs;
  std::vector<std::string> bytes;
  std::vector<std::int64_t> ts;
  std::vector<std::uint8_t> flags;
};

ReplayResult collect(MessageStore& store, std::uint64_t begin, std::uint64_t end, Got& out,
                     std::size_t max = 1'000'000) {
  return store.replay(begin, end, max, [&](const StoredMessage& m) {
    out.seqs.push_back(m.seq);
    out.bytes.emplace_back(m.bytes.data(), m.bytes.size());
    out.ts.push_back(m.timestamp_ns);
    out.flags.push_back(m.flags);
    return true;
  });
}

Got replay_range(MessageStore& store, std::uint64_t begin, std::uint64_t end) {
  Got got;
  (void)collect(store, begin, end, got);
  return got;
}

std::vector<std::uint64_t> seq_range(std::uint64_t first, std::uint64_t last) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = first; s <= last; ++s) v.push_back(s);
  return v;
}

/// Every replayed message is exactly what `who` sent with that seq.
void expect_bodies(const Got& got, const std::string& who, std::size_t size = 120) {
  for (std::size_t i = 0; i < got.seqs.size(); ++i)
    EXPECT_EQ(got.bytes[i], body(who, got.seqs[i], size)) << who << " seq " << got.seqs[i];
}

/// One record of the shared journal as written (header parsed).
struct Raw {
  std::uint64_t record = 0;
  StreamHeader h;
  std::string body;
};

std::vector<Raw> raw_records(SharedJournal& j) {
  std::vector<Raw> out;
  (void)j.journal().replay_each(1, kAll, 10'000'000, [&](const StoredMessage& m) {
    Raw r;
    r.record = m.seq;
    if (!StreamHeader::read(m.bytes, r.h)) r.h = StreamHeader{};
    if (m.bytes.size() >= StreamHeader::kSize)
      r.body.assign(m.bytes.data() + StreamHeader::kSize, m.bytes.size() - StreamHeader::kSize);
    out.push_back(std::move(r));
    return true;
  });
  return out;
}

bool has_line(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

/// Offsets of the data records of one segment file, from its bytes (as recovery_test).
std::vector<std::size_t> data_record_offsets(const std::vector<char>& file) {
  std::vector<std::size_t> out;
  std::size_t off = kSegmentHeaderSize;
  while (off + kRecordHeaderSize <= file.size()) {
    RecordHeader h;
    std::memcpy(&h, file.data() + off, sizeof(h));
    if (h.size == 0) break;
    if ((h.flags & kRecordControl) == 0) out.push_back(off);
    off = align_up(off + h.size, 8);
  }
  return out;
}

/// The stream header of the data record at `off` of a segment file.
StreamHeader header_at(const std::vector<char>& file, std::size_t off) {
  RecordHeader rh;
  std::memcpy(&rh, file.data() + off, sizeof(rh));
  const std::size_t payload = off + kRecordHeaderSize + rh.gap;
  StreamHeader h;
  if (!StreamHeader::read({file.data() + payload, rh.size - kRecordHeaderSize - rh.gap}, h)) return {};
  return h;
}

/// Garbles 20 bytes of the message of the data record at `off` (its CRC fails).
void garble_record(std::vector<char>& file, std::size_t off) {
  RecordHeader rh;
  std::memcpy(&rh, file.data() + off, sizeof(rh));
  const std::size_t payload = off + kRecordHeaderSize + rh.gap;
  ASSERT_GE(rh.size, kRecordHeaderSize + rh.gap + 40);
  for (std::size_t i = 20; i < 40; ++i) file[payload + i] = static_cast<char>(file[payload + i] ^ 0x5A);
}

// ---------------------------------------------------------------------------
// Several sessions on one journal

TEST(SharedJournal, each_store_replays_only_its_own_messages_in_ascending_order_as_committed) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  auto c = open_store(*j, store_config(dir, "C"));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->stream(), 1u);
  EXPECT_EQ(b->stream(), 2u);
  EXPECT_EQ(c->stream(), 3u);
  EXPECT_EQ(j->streams(), 3u);
  // Interleaved: the same seqs in every stream, the records one after the other.
  for (std::uint64_t i = 1; i <= 60; ++i) {
    ASSERT_EQ(send(*a, "A", i, 120, static_cast<std::uint8_t>(i)), StoreStatus::kOk);
    if (i % 2 == 0) {
      ASSERT_EQ(send(*b, "B", i / 2, 90), StoreStatus::kOk);
    }
    if (i % 3 == 0) {
      ASSERT_EQ(send(*c, "C", i / 3, 200), StoreStatus::kOk);
    }
  }
  EXPECT_EQ(a->next_sender_seq(), 61u);
  EXPECT_EQ(b->next_sender_seq(), 31u);
  EXPECT_EQ(c->next_sender_seq(), 21u);

  Got ga;
  const ReplayResult ra = collect(*a, 1, 100, ga);
  EXPECT_EQ(ra.status, ReplayStatus::kComplete);
  EXPECT_EQ(ra.delivered, 60u);
  EXPECT_EQ(ga.seqs, seq_range(1, 60));
  expect_bodies(ga, "A", 120);
  for (std::size_t i = 0; i < ga.seqs.size(); ++i) {
    EXPECT_EQ(ga.ts[i], ts_of("A", ga.seqs[i]));
    EXPECT_EQ(ga.flags[i], static_cast<std::uint8_t>(ga.seqs[i]));
  }
  const Got gb = replay_range(*b, 1, 100);
  EXPECT_EQ(gb.seqs, seq_range(1, 30));
  expect_bodies(gb, "B", 90);
  const Got gc = replay_range(*c, 1, 100);
  EXPECT_EQ(gc.seqs, seq_range(1, 20));
  expect_bodies(gc, "C", 200);

  // Each store counts its own records.
  EXPECT_EQ(a->stats().outbound.appends, 60u);
  EXPECT_EQ(a->stats().outbound.last_seq, 60u);
  EXPECT_EQ(b->stats().outbound.appends, 30u);
  EXPECT_EQ(c->stats().outbound.last_seq, 20u);
  EXPECT_EQ(a->flush(), StoreStatus::kOk);
}

TEST(SharedJournal, each_record_carries_the_stream_header_of_the_store_that_wrote_it) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A", 77));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
  ASSERT_EQ(send(*b, "B", 1), StoreStatus::kOk);
  ASSERT_EQ(b->store_inbound(4, 5, {"in", 2}), StoreStatus::kOk);
  const std::vector<Raw> raw = raw_records(*j);
  ASSERT_EQ(raw.size(), 5u);
  EXPECT_EQ(raw[0].h.stream, 1u);
  EXPECT_EQ(raw[0].h.kind, StreamHeader::kStreamName);
  EXPECT_EQ(raw[0].h.value, 77u);
  EXPECT_EQ(raw[0].body, "A");
  EXPECT_EQ(raw[1].h.stream, 2u);
  EXPECT_EQ(raw[1].h.kind, StreamHeader::kStreamName);
  EXPECT_EQ(raw[1].body, "B");
  EXPECT_EQ(raw[2].h.stream, 1u);
  EXPECT_EQ(raw[2].h.kind, StreamHeader::kOutbound);
  EXPECT_EQ(raw[2].h.value, 1u);
  EXPECT_EQ(raw[2].body, body("A", 1));
  EXPECT_EQ(raw[3].h.stream, 2u);
  EXPECT_EQ(raw[3].body, body("B", 1));
  EXPECT_EQ(raw[4].h.stream, 2u);
  EXPECT_EQ(raw[4].h.kind, StreamHeader::kInbound);
  EXPECT_EQ(raw[4].h.value, 4u);
  EXPECT_EQ(raw[4].body, "in");
  for (std::size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i].record, i + 1) << "one record number each";
}

// ---------------------------------------------------------------------------
// Replay windows

TEST(SharedJournal, replay_from_the_middle_delivers_that_window_only) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  for (std::uint64_t i = 1; i <= 50; ++i) {
    ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
  }
  Got got;
  const ReplayResult r = collect(*a, 20, 30, got);
  EXPECT_EQ(r.status, ReplayStatus::kComplete);
  EXPECT_EQ(r.next_seq, 31u);
  EXPECT_EQ(r.delivered, 11u);
  EXPECT_EQ(got.seqs, seq_range(20, 30));
  expect_bodies(got, "A");
  const Got last = replay_range(*b, 50, 50);
  EXPECT_EQ(last.seqs, seq_range(50, 50));
  expect_bodies(last, "B");
}

TEST(SharedJournal, replay_in_batches_resumes_at_next_seq_and_delivers_each_message_once) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  for (std::uint64_t i = 1; i <= 100; ++i) {
    ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    if (i % 3 != 0) {
      ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
    }
  }
  Got got;
  std::uint64_t next = 10;
  int calls = 0;
  for (;;) {
    const std::size_t before = got.seqs.size();
    const ReplayResult r = collect(*a, next, kAll - 1, got, 7);
    ++calls;
    ASSERT_LE(got.seqs.size() - before, 7u);
    if (r.status == ReplayStatus::kComplete) break;
    ASSERT_EQ(r.status, ReplayStatus::kLimit);
    ASSERT_EQ(r.delivered, 7u);
    ASSERT_EQ(r.next_seq, got.seqs.back() + 1) << "resumes right after the last delivered";
    next = r.next_seq;
    ASSERT_LT(calls, 100);
  }
  EXPECT_EQ(got.seqs, seq_range(10, 100));
  expect_bodies(got, "A");
  EXPECT_EQ(calls, 13);  // 91 messages, 7 a call
}

TEST(SharedJournal, replay_of_seqs_the_store_never_sent_is_complete_with_nothing) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
  // B's messages fill the seqs A skips.
  for (std::uint64_t i = 1; i <= 45; ++i) ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
  a->set_next_sender_seq(50);
  for (std::uint64_t i = 50; i <= 60; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);

  Got gap;
  const ReplayResult r = collect(*a, 20, 40, gap);
  EXPECT_EQ(r.status, ReplayStatus::kComplete);
  EXPECT_EQ(r.next_seq, 41u);
  EXPECT_EQ(r.delivered, 0u);
  EXPECT_TRUE(gap.seqs.empty());

  Got beyond;
  const ReplayResult r2 = collect(*a, 100, 200, beyond);
  EXPECT_EQ(r2.status, ReplayStatus::kComplete);
  EXPECT_EQ(r2.next_seq, 201u);
  EXPECT_TRUE(beyond.seqs.empty());

  const Got across = replay_range(*a, 5, 55);
  std::vector<std::uint64_t> want = seq_range(5, 10);
  for (std::uint64_t s = 50; s <= 55; ++s) want.push_back(s);
  EXPECT_EQ(across.seqs, want);
  expect_bodies(across, "A");
}

TEST(SharedJournal, replay_stops_where_the_visitor_says_and_resumes_after_it) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
  std::vector<std::uint64_t> seen;
  const ReplayResult r = a->replay(1, 10, 100, [&](const StoredMessage& m) {
    seen.push_back(m.seq);
    return m.seq < 4;
  });
  EXPECT_EQ(r.status, ReplayStatus::kStopped);
  EXPECT_EQ(r.next_seq, 5u);
  EXPECT_EQ(seen, seq_range(1, 4));
  EXPECT_EQ(replay_range(*a, r.next_seq, 10).seqs, seq_range(5, 10));
}

TEST(SharedJournal, old_messages_beyond_the_recent_and_sparse_index_replay_with_their_bytes) {
  // 2,000 messages of A between 2,000 of B over many segments: A's first
  // messages are older than its 256 recent marks, and those around 1,000
  // are found through the sparse marks (one every 64 seqs).
  TempDir dir;
  constexpr std::uint64_t kN = 2000;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    ASSERT_TRUE(a && b);
    for (std::uint64_t i = 1; i <= kN; ++i) {
      ASSERT_EQ(send(*a, "A", i, 100), StoreStatus::kOk);
      ASSERT_EQ(send(*b, "B", i, 60), StoreStatus::kOk);
    }
    ASSERT_GE(test::segment_files(journal_dir(dir)).size(), 5u) << "several segments";
    const auto check = [&] {
      const Got first = replay_range(*a, 1, 10);
      EXPECT_EQ(first.seqs, seq_range(1, 10));
      expect_bodies(first, "A", 100);
      const Got middle = replay_range(*a, 1000, 1010);
      EXPECT_EQ(middle.seqs, seq_range(1000, 1010));
      expect_bodies(middle, "A", 100);
      // From the sparse marks into the recent ones (the oldest recent is 1,745).
      const Got crossing = replay_range(*a, 1700, 1800);
      EXPECT_EQ(crossing.seqs, seq_range(1700, 1800));
      expect_bodies(crossing, "A", 100);
      const Got all = replay_range(*a, 1, kN);
      EXPECT_EQ(all.seqs, seq_range(1, kN));
      expect_bodies(all, "A", 100);
      const Got b_old = replay_range(*b, 3, 5);
      EXPECT_EQ(b_old.seqs, seq_range(3, 5));
      expect_bodies(b_old, "B", 60);
    };
    {
      SCOPED_TRACE("as written");
      check();
    }
  }
  // The same after reopening: the scan rebuilds the marks.
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->next_sender_seq(), kN + 1);
  SCOPED_TRACE("reopened");
  const Got first = replay_range(*a, 1, 10);
  EXPECT_EQ(first.seqs, seq_range(1, 10));
  expect_bodies(first, "A", 100);
  const Got middle = replay_range(*a, 1000, 1010);
  EXPECT_EQ(middle.seqs, seq_range(1000, 1010));
  expect_bodies(middle, "A", 100);
  const Got all_b = replay_range(*b, 1, kN);
  EXPECT_EQ(all_b.seqs, seq_range(1, kN));
  expect_bodies(all_b, "B", 60);
}

TEST(SharedJournal, messages_older_than_the_sparse_index_replay_from_the_epoch_start) {
  // 512 sparse marks one every 64 seqs cover 32,768 seqs: 40,000 messages
  // leave the first ones to a read from the start of the epoch, which is
  // where A's reset was (the messages of epoch 1 before it, with the same
  // seqs, are not the ones replayed).
  TempDir dir;
  constexpr std::uint64_t kN = 40'000;
  const auto check = [&](SharedStore& a, SharedStore& b) {
    EXPECT_EQ(a.epoch(), 2u);
    const Got first = replay_range(a, 1, 10);
    EXPECT_EQ(first.seqs, seq_range(1, 10));
    expect_bodies(first, "A2", 40);
    const Got early = replay_range(a, 5000, 5005);
    EXPECT_EQ(early.seqs, seq_range(5000, 5005));
    expect_bodies(early, "A2", 40);
    const Got late = replay_range(a, 39'990, kN);
    EXPECT_EQ(late.seqs, seq_range(39'990, kN));
    expect_bodies(late, "A2", 40);
    const Got theirs = replay_range(b, 1, 3);
    EXPECT_EQ(theirs.seqs, seq_range(1, 3));
    expect_bodies(theirs, "B", 40);
  };
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    ASSERT_TRUE(a && b);
    for (std::uint64_t i = 1; i <= 20; ++i) ASSERT_EQ(send(*a, "A", i, 40), StoreStatus::kOk);
    ASSERT_EQ(a->reset(5000), StoreStatus::kOk);
    for (std::uint64_t i = 1; i <= kN; ++i) {
      ASSERT_EQ(send(*a, "A2", i, 40), StoreStatus::kOk);
      if (i % 100 == 0) {
        ASSERT_EQ(send(*b, "B", i / 100, 40), StoreStatus::kOk);
      }
      // No service thread: finish the full segments as the service would.
      if (i % 500 == 0) test::settle(j->journal(), static_cast<std::int64_t>(i) * 1'000'000'000);
    }
    ASSERT_GE(j->journal().stats().rotations, 40u);
    SCOPED_TRACE("as written");
    check(*a, *b);
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->next_sender_seq(), kN + 1);
  SCOPED_TRACE("reopened");
  check(*a, *b);
}

TEST(SharedJournal, a_message_resent_with_an_old_seq_neither_replaces_nor_hides_the_original) {
  // A SequenceReset-GapFill sent during a resend carries an old seq: kept,
  // not replayable, as with JournalStore.
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    const std::string reset = "35=4|123=Y|36=11";
    std::span<char> room = a->claim(reset.size());
    ASSERT_FALSE(room.empty());
    std::memcpy(room.data(), reset.data(), reset.size());
    ASSERT_EQ(a->commit(5, 1, 0, reset.size()), StoreStatus::kOk);
    EXPECT_EQ(a->next_sender_seq(), 11u);
    EXPECT_EQ(replay_range(*a, 1, 20).seqs, seq_range(1, 10));
    ASSERT_EQ(send(*a, "A", 11), StoreStatus::kOk);
    EXPECT_EQ(replay_range(*a, 8, 20).seqs, seq_range(8, 11));
    EXPECT_EQ(a->next_sender_seq(), 12u);
    const Got got = replay_range(*a, 1, 20);
    EXPECT_EQ(got.seqs, seq_range(1, 11));
    expect_bodies(got, "A");
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->next_sender_seq(), 12u);
  const Got got = replay_range(*a, 5, 20);
  EXPECT_EQ(got.seqs, seq_range(5, 11));
  expect_bodies(got, "A");
}

// ---------------------------------------------------------------------------
// Claims

TEST(SharedJournal, a_claim_taken_over_by_another_store_s_claim_commits_nothing) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  const std::uint64_t records_before = raw_records(*j).size();
  const std::string ma = body("A", 1), mb = body("B", 1);
  std::span<char> ra = a->claim(ma.size());
  ASSERT_FALSE(ra.empty());
  std::memcpy(ra.data(), ma.data(), ma.size());
  std::span<char> rb = b->claim(mb.size());
  ASSERT_FALSE(rb.empty());
  std::memcpy(rb.data(), mb.data(), mb.size());
  EXPECT_EQ(a->commit(1, 1, 0, ma.size()), StoreStatus::kNoClaim);
  EXPECT_EQ(a->next_sender_seq(), 1u);
  ASSERT_EQ(b->commit(1, 1, 0, mb.size()), StoreStatus::kOk);
  EXPECT_EQ(b->next_sender_seq(), 2u);

  EXPECT_TRUE(replay_range(*a, 1, 10).seqs.empty());
  const Got got = replay_range(*b, 1, 10);
  ASSERT_EQ(got.seqs, seq_range(1, 1));
  EXPECT_EQ(got.bytes[0], mb);
  const std::vector<Raw> raw = raw_records(*j);
  ASSERT_EQ(raw.size(), records_before + 1);
  EXPECT_EQ(raw.back().h.stream, b->stream());
  // A's next claim is its own again.
  ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
  const Got mine = replay_range(*a, 1, 10);
  ASSERT_EQ(mine.seqs, seq_range(1, 1));
  EXPECT_EQ(mine.bytes[0], ma);
}

TEST(SharedJournal, any_write_of_another_store_between_a_claim_and_its_commit_abandons_the_claim) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  const std::string m = body("A", 1);
  const auto claim_a = [&] {
    std::span<char> room = a->claim(m.size());
    ASSERT_FALSE(room.empty());
    std::memcpy(room.data(), m.data(), m.size());
  };
  claim_a();
  ASSERT_EQ(b->store_inbound(1, 1, {"in", 2}), StoreStatus::kOk);
  EXPECT_EQ(a->commit(1, 1, 0, m.size()), StoreStatus::kNoClaim) << "after B's store_inbound";
  claim_a();
  EXPECT_EQ(b->check_room(500), StoreStatus::kOk);
  EXPECT_EQ(a->commit(1, 1, 0, m.size()), StoreStatus::kNoClaim) << "after B's check_room";
  claim_a();
  ASSERT_EQ(b->reset(5000), StoreStatus::kOk);
  EXPECT_EQ(a->commit(1, 1, 0, m.size()), StoreStatus::kNoClaim) << "after B's reset";
  claim_a();
  ASSERT_EQ(send(*b, "B", 1), StoreStatus::kOk);
  EXPECT_EQ(a->commit(1, 1, 0, m.size()), StoreStatus::kNoClaim) << "after B's claim and commit";
  EXPECT_EQ(a->next_sender_seq(), 1u);
  EXPECT_TRUE(replay_range(*a, 1, 10).seqs.empty());
  // Nothing of A's was written, into its own record or into B's.
  std::vector<Raw> of_b;
  for (const Raw& r : raw_records(*j)) {
    EXPECT_FALSE(r.h.stream == a->stream() && r.h.kind == StreamHeader::kOutbound) << "record " << r.record;
    if (r.h.stream == b->stream() && r.h.kind != StreamHeader::kStreamName) of_b.push_back(r);
  }
  ASSERT_EQ(of_b.size(), 3u);
  EXPECT_EQ(of_b[0].h.kind, StreamHeader::kInbound);
  EXPECT_EQ(of_b[0].h.value, 1u);
  EXPECT_EQ(of_b[0].body, "in");
  EXPECT_EQ(of_b[1].h.kind, StreamHeader::kEpochStart);
  EXPECT_EQ(of_b[1].h.value, 2u);
  EXPECT_EQ(of_b[2].h.kind, StreamHeader::kOutbound);
  EXPECT_EQ(of_b[2].body, body("B", 1));
  EXPECT_EQ(replay_range(*b, 1, 10).seqs, seq_range(1, 1));
  // A commit needs a claim, once.
  EXPECT_EQ(a->commit(1, 1, 0, m.size()), StoreStatus::kNoClaim);
  claim_a();
  ASSERT_EQ(a->commit(1, 1, 0, m.size()), StoreStatus::kOk);
  EXPECT_EQ(a->commit(2, 1, 0, m.size()), StoreStatus::kNoClaim);
  EXPECT_EQ(replay_range(*a, 1, 10).seqs, seq_range(1, 1));
}

TEST(SharedJournal, max_claim_leaves_room_for_the_stream_header) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  const std::size_t m = a->max_claim();
  ASSERT_GT(m, 1000u);
  EXPECT_EQ(m + StreamHeader::kSize, j->journal().max_claim());
  EXPECT_FALSE(a->claim(m).empty());
  EXPECT_TRUE(a->claim(m + 1).empty());
  EXPECT_EQ(a->last_status(), StoreStatus::kTooLarge);
  EXPECT_EQ(a->commit(1, 1, 0, 10), StoreStatus::kNoClaim);
}

TEST(SharedJournal, a_commit_past_its_claim_is_refused_and_writes_nothing_outside_the_claim) {
  // An offset past the claim is the caller's error: refused with
  // kInvalidArgument (as JournalStore), and nothing outside the claim is
  // touched. Two places past it: the free space right after the claim, and
  // the last 16 bytes of the segment (where the journal keeps the index of
  // the segment's records: Journal::write_position() gives the claim's
  // offset in the segment).
  for (const bool to_segment_end : {false, true}) {
    SCOPED_TRACE(to_segment_end ? "offset to the segment's end" : "offset just past the claim");
    TempDir dir;
    {
      auto j = open_journal(dir);
      ASSERT_NE(j, nullptr);
      auto a = open_store(*j, store_config(dir, "A"));
      ASSERT_NE(a, nullptr);
      ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
      ASSERT_EQ(send(*a, "A", 2), StoreStatus::kOk);
      std::span<char> room = a->claim(100);
      ASSERT_FALSE(room.empty());
      std::memset(room.data(), 'x', room.size());
      const std::size_t record = j->journal().write_position() & 0xFFFF'FFFFu;  // the claim's record
      const std::size_t user_room =
          record + kRecordHeaderSize + StreamHeader::kSize;  // room.data() in the segment
      ASSERT_LT(user_room + room.size() + 64, kSeg);
      const std::size_t offset = to_segment_end ? kSeg - user_room : room.size() + 64;
      EXPECT_EQ(a->commit(3, 1, offset, 10), StoreStatus::kInvalidArgument);
      EXPECT_EQ(a->next_sender_seq(), 3u);
      const Got got = replay_range(*a, 1, 10);
      EXPECT_EQ(got.seqs, seq_range(1, 2)) << "the messages sent before are replayable as they were";
      expect_bodies(got, "A");
      ASSERT_EQ(send(*a, "A", 3), StoreStatus::kOk);
      EXPECT_EQ(replay_range(*a, 1, 10).seqs, seq_range(1, 3));
    }
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    EXPECT_FALSE(j->recovery().torn);
    EXPECT_TRUE(j->recovery().repairs.empty()) << ::testing::PrintToString(j->recovery().repairs);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->next_sender_seq(), 4u);
    EXPECT_EQ(replay_range(*a, 1, 10).seqs, seq_range(1, 3));
  }
}

// ---------------------------------------------------------------------------
// Inbound

TEST(SharedJournal, inbound_messages_are_journaled_in_the_store_s_stream_and_never_replayed) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  for (std::uint64_t i = 1; i <= 10; ++i) {
    const std::string in = body("peer", i);
    ASSERT_EQ(a->store_inbound(i, ts_of("peer", i), {in.data(), in.size()}), StoreStatus::kOk);
    if (i <= 3) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    }
    ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
  }
  EXPECT_EQ(a->next_target_seq(), 1u) << "accepting is the session's call";
  EXPECT_EQ(a->next_sender_seq(), 4u);
  const Got got = replay_range(*a, 1, 100);
  EXPECT_EQ(got.seqs, seq_range(1, 3));
  expect_bodies(got, "A");
  EXPECT_EQ(replay_range(*b, 1, 100).seqs, seq_range(1, 10));

  std::uint64_t inbound = 0;
  for (const Raw& r : raw_records(*j)) {
    if (r.h.kind != StreamHeader::kInbound) continue;
    EXPECT_EQ(r.h.stream, a->stream());
    ++inbound;
    EXPECT_EQ(r.h.value, inbound);
    EXPECT_EQ(r.body, body("peer", inbound));
  }
  EXPECT_EQ(inbound, 10u);
}

TEST(SharedJournal, store_inbound_writes_nothing_when_inbound_journaling_is_off) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A", 0, false));
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
  const std::size_t records = raw_records(*j).size();
  const std::uint64_t appends = j->journal().stats().appends;
  for (std::uint64_t i = 1; i <= 5; ++i) EXPECT_EQ(a->store_inbound(i, 0, {"in", 2}), StoreStatus::kOk);
  EXPECT_EQ(raw_records(*j).size(), records);
  EXPECT_EQ(j->journal().stats().appends, appends);
  EXPECT_EQ(a->next_target_seq(), 1u);
}

// ---------------------------------------------------------------------------
// Reopening

TEST(SharedJournal, streams_numbers_and_messages_survive_reopening_the_journal) {
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A", 11));
    auto b = open_store(*j, store_config(dir, "B", 22));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->recovery().stream_created);
    EXPECT_TRUE(a->recovery().seqnums_created);
    for (std::uint64_t i = 1; i <= 300; ++i) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
      if (i <= 40) {
        ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
      }
    }
    a->set_next_target_seq(41);
    b->set_next_target_seq(7);
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->streams(), 2u);
  EXPECT_TRUE(j->warnings().empty()) << ::testing::PrintToString(j->warnings());
  auto b = open_store(*j, store_config(dir, "B", 22));  // in another order
  auto a = open_store(*j, store_config(dir, "A", 11));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->stream(), 1u);
  EXPECT_EQ(b->stream(), 2u);
  EXPECT_FALSE(a->recovery().stream_created);
  EXPECT_FALSE(a->recovery().seqnums_created);
  EXPECT_FALSE(a->recovery().seqnums_recovered);
  EXPECT_TRUE(a->recovery().warnings.empty()) << ::testing::PrintToString(a->recovery().warnings);
  EXPECT_EQ(a->next_sender_seq(), 301u);
  EXPECT_EQ(a->next_target_seq(), 41u);
  EXPECT_EQ(b->next_sender_seq(), 41u);
  EXPECT_EQ(b->next_target_seq(), 7u);
  EXPECT_EQ(a->epoch(), 1u);
  EXPECT_EQ(a->creation_time(), 1000);
  const Got ga = replay_range(*a, 1, 300);
  EXPECT_EQ(ga.seqs, seq_range(1, 300));
  expect_bodies(ga, "A");
  const Got gb = replay_range(*b, 1, 300);
  EXPECT_EQ(gb.seqs, seq_range(1, 40));
  expect_bodies(gb, "B");

  // A new name is a new stream; the old ones go on where they were.
  auto c = open_store(*j, store_config(dir, "C"));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->stream(), 3u);
  EXPECT_TRUE(c->recovery().stream_created);
  EXPECT_EQ(c->next_sender_seq(), 1u);
  EXPECT_EQ(j->streams(), 3u);
  ASSERT_EQ(send(*a, "A", 301), StoreStatus::kOk);
  ASSERT_EQ(send(*c, "C", 1), StoreStatus::kOk);
  EXPECT_EQ(replay_range(*a, 299, 400).seqs, seq_range(299, 301));
  EXPECT_EQ(replay_range(*c, 1, 400).seqs, seq_range(1, 1));
  c.reset();
  a.reset();
  b.reset();
  j.reset();

  auto again = open_journal(dir);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->streams(), 3u);
  auto c2 = open_store(*again, store_config(dir, "C"));
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(c2->stream(), 3u);
  EXPECT_EQ(c2->next_sender_seq(), 2u);
}

TEST(SharedJournal, a_store_closed_and_opened_again_on_the_same_journal_goes_on_where_it_was) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_NE(b, nullptr);
  {
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    for (std::uint64_t i = 1; i <= 20; ++i) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
      ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
      if (i <= 8) {
        ASSERT_EQ(a->store_inbound(i, 0, {"in", 2}), StoreStatus::kOk);
        a->set_next_target_seq(i + 1);
      }
    }
  }
  ASSERT_EQ(send(*b, "B", 21), StoreStatus::kOk);
  {
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->stream(), 2u);
    EXPECT_FALSE(a->recovery().stream_created);
    EXPECT_EQ(a->next_sender_seq(), 21u);
    EXPECT_EQ(a->next_target_seq(), 9u);
    const Got got = replay_range(*a, 1, 100);
    EXPECT_EQ(got.seqs, seq_range(1, 20));
    expect_bodies(got, "A");
    EXPECT_EQ(j->streams(), 2u);
  }
  // What the open journal knows of the stream is what a scan would find:
  // without the file, the numbers come from it.
  ASSERT_TRUE(std::filesystem::remove(seqnums_path(dir, "A")));
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->recovery().seqnums_recovered);
  EXPECT_EQ(a->next_sender_seq(), 21u);
  EXPECT_EQ(a->next_target_seq(), 9u);
}

// ---------------------------------------------------------------------------
// seqnums.dat reconciled with the journal

/// A sent 1..10 and received 1..6 (next target 7), B sent 1..5; closed.
void fill(const TempDir& dir, bool journal_inbound = true) {
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A", 0, journal_inbound));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  for (std::uint64_t i = 1; i <= 10; ++i) {
    ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    if (i <= 6) {
      ASSERT_EQ(a->store_inbound(i, 0, {"in", 2}), StoreStatus::kOk);
      a->set_next_target_seq(i + 1);
    }
    if (i <= 5) {
      ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
    }
  }
}

void set_file(const TempDir& dir, const std::string& name, std::uint64_t sender, std::uint64_t target) {
  auto f = SeqNumStore::open(seqnums_path(dir, name), 0, false);
  ASSERT_TRUE(f) << f.error().message;
  f->set(sender, target);
}

TEST(SharedJournal, a_seqnum_file_one_message_behind_the_journal_is_raised_past_its_last_outbound_seq) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(fill(dir));
  // As if the process died right after journaling outbound 10 and inbound 6.
  ASSERT_NO_FATAL_FAILURE(set_file(dir, "A", 10, 6));
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->next_sender_seq(), 11u);
  EXPECT_EQ(a->next_target_seq(), 6u) << "inbound 6 may not have been processed: the peer resends it";
  EXPECT_FALSE(a->recovery().seqnums_recovered);
  EXPECT_EQ(a->recovery().next_sender, 11u);
  EXPECT_FALSE(a->recovery().warnings.empty());
  EXPECT_TRUE(has_line(a->recovery().warnings, "next sender seq raised from 10 to 11"))
      << ::testing::PrintToString(a->recovery().warnings);
  EXPECT_TRUE(b->recovery().warnings.empty()) << ::testing::PrintToString(b->recovery().warnings);
  EXPECT_EQ(b->next_sender_seq(), 6u);
}

TEST(SharedJournal, a_seqnum_file_older_than_the_journal_is_recovered_from_it) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(fill(dir));
  ASSERT_NO_FATAL_FAILURE(set_file(dir, "A", 4, 2));  // an old copy of the file
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->next_sender_seq(), 11u);
  EXPECT_EQ(a->next_target_seq(), 7u);
  EXPECT_TRUE(a->recovery().seqnums_recovered);
  EXPECT_TRUE(has_line(a->recovery().warnings, seqnums_path(dir, "A") + ": older than the journals"))
      << ::testing::PrintToString(a->recovery().warnings);
}

TEST(SharedJournal, a_missing_seqnum_file_is_recovered_from_the_journal) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(fill(dir));
  ASSERT_TRUE(std::filesystem::remove(seqnums_path(dir, "A")));
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->recovery().seqnums_created);
  EXPECT_TRUE(a->recovery().seqnums_recovered);
  EXPECT_FALSE(a->recovery().stream_created);
  EXPECT_EQ(a->next_sender_seq(), 11u) << "last outbound + 1";
  EXPECT_EQ(a->next_target_seq(), 7u) << "last inbound + 1";
  EXPECT_TRUE(
      has_line(a->recovery().warnings, seqnums_path(dir, "A") + ": missing, recovered from the journals"))
      << ::testing::PrintToString(a->recovery().warnings);
  const Got got = replay_range(*a, 1, 10);
  EXPECT_EQ(got.seqs, seq_range(1, 10));
  expect_bodies(got, "A");
  EXPECT_TRUE(std::filesystem::exists(seqnums_path(dir, "A")));
}

TEST(SharedJournal, a_missing_seqnum_file_without_inbound_journaling_is_refused_naming_it) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(fill(dir, false));
  ASSERT_TRUE(std::filesystem::remove(seqnums_path(dir, "A")));
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = j->open_store(store_config(dir, "A", 0, false), 1000);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find(seqnums_path(dir, "A") + ": missing"), std::string::npos)
      << a.error().message;
  EXPECT_FALSE(std::filesystem::exists(seqnums_path(dir, "A"))) << "nothing is created on refusal";
  // The refusal leaves the stream free for a later open (the file restored).
  ASSERT_NO_FATAL_FAILURE([&] {
    auto f = SeqNumStore::open(seqnums_path(dir, "A"), 1000, true);
    ASSERT_TRUE(f);
    f->set(11, 7);
  }());
  auto again = open_store(*j, store_config(dir, "A", 0, false));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->next_sender_seq(), 11u);
}

// ---------------------------------------------------------------------------
// Epochs

TEST(SharedJournal, a_reset_starts_a_new_epoch_for_that_store_only) {
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    ASSERT_TRUE(a && b);
    for (std::uint64_t i = 1; i <= 10; ++i) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
      ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
    }
    a->set_next_target_seq(5);
    b->set_next_target_seq(8);
    ASSERT_EQ(a->reset(5000), StoreStatus::kOk);
    EXPECT_EQ(a->epoch(), 2u);
    EXPECT_EQ(a->creation_time(), 5000);
    EXPECT_EQ(a->next_sender_seq(), 1u);
    EXPECT_EQ(a->next_target_seq(), 1u);
    EXPECT_EQ(a->stats().outbound.epoch, 2u);
    EXPECT_TRUE(replay_range(*a, 1, 100).seqs.empty()) << "the old epoch's messages are not replayable";
    // B did not reset.
    EXPECT_EQ(b->epoch(), 1u);
    EXPECT_EQ(b->creation_time(), 1000);
    EXPECT_EQ(b->next_sender_seq(), 11u);
    EXPECT_EQ(b->next_target_seq(), 8u);
    EXPECT_EQ(replay_range(*b, 1, 100).seqs, seq_range(1, 10));
    // The new day: fewer messages than the old, so old seqs 4..10 would show.
    for (std::uint64_t i = 1; i <= 3; ++i) ASSERT_EQ(send(*a, "A2", i), StoreStatus::kOk);
    ASSERT_EQ(send(*b, "B", 11), StoreStatus::kOk);
    const Got ga = replay_range(*a, 1, 100);
    EXPECT_EQ(ga.seqs, seq_range(1, 3));
    expect_bodies(ga, "A2");
    const Got gb = replay_range(*b, 1, 100);
    EXPECT_EQ(gb.seqs, seq_range(1, 11));
    expect_bodies(gb, "B");
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"), 999'999);
  auto b = open_store(*j, store_config(dir, "B"), 999'999);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->epoch(), 2u);
  EXPECT_EQ(a->creation_time(), 5000);
  EXPECT_EQ(a->next_sender_seq(), 4u);
  EXPECT_EQ(a->next_target_seq(), 1u);
  EXPECT_TRUE(a->recovery().warnings.empty()) << ::testing::PrintToString(a->recovery().warnings);
  const Got ga = replay_range(*a, 1, 100);
  EXPECT_EQ(ga.seqs, seq_range(1, 3)) << "the old epoch's seqs 4..10 stay unreplayable";
  expect_bodies(ga, "A2");
  EXPECT_EQ(b->epoch(), 1u);
  EXPECT_EQ(b->creation_time(), 1000);
  EXPECT_EQ(b->next_sender_seq(), 12u);
  const Got gb = replay_range(*b, 1, 100);
  EXPECT_EQ(gb.seqs, seq_range(1, 11));
  expect_bodies(gb, "B");
}

TEST(SharedJournal, a_reset_with_nothing_sent_after_it_survives_reopening) {
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    ASSERT_EQ(a->reset(5000), StoreStatus::kOk);
    ASSERT_EQ(a->reset(6000), StoreStatus::kOk);
    EXPECT_EQ(a->epoch(), 3u);
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"), 999'999);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->epoch(), 3u);
  EXPECT_EQ(a->creation_time(), 6000);
  EXPECT_EQ(a->next_sender_seq(), 1u);
  EXPECT_EQ(a->next_target_seq(), 1u);
  EXPECT_TRUE(replay_range(*a, 1, 100).seqs.empty());
}

TEST(SharedJournal, a_reset_the_journal_recorded_but_the_seqnum_file_missed_is_completed_on_open) {
  // reset() writes the journal first: a crash before the file was written.
  TempDir dir;
  std::vector<char> before_reset;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    a->set_next_target_seq(4);
    ASSERT_EQ(a->flush(), StoreStatus::kOk);
    before_reset = test::read_file(seqnums_path(dir, "A"));
    ASSERT_EQ(a->reset(9999), StoreStatus::kOk);
  }
  test::write_file(seqnums_path(dir, "A"), before_reset);
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"), 999'999);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->epoch(), 2u);
  EXPECT_EQ(a->creation_time(), 9999);
  EXPECT_EQ(a->next_sender_seq(), 1u);
  EXPECT_EQ(a->next_target_seq(), 1u);
  EXPECT_TRUE(replay_range(*a, 1, 100).seqs.empty());
}

TEST(SharedJournal, a_reset_the_journal_lost_but_the_seqnum_file_holds_is_followed_by_the_stream) {
  // The kEpochStart record is the torn tail: the file (epoch 2) is ahead of
  // the journal (epoch 1); the old epoch's messages must not come back.
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
    ASSERT_EQ(a->reset(7000), StoreStatus::kOk);
  }
  const auto files = test::segment_files(journal_dir(dir));
  ASSERT_FALSE(files.empty());
  const std::string seg = journal_dir(dir) + "/" + files.back();
  std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  ASSERT_FALSE(offsets.empty());
  const StreamHeader last = header_at(file, offsets.back());
  ASSERT_EQ(last.kind, StreamHeader::kEpochStart);
  // The record is short (16 + 8 bytes): zero its body and part of its header.
  RecordHeader rh;
  std::memcpy(&rh, file.data() + offsets.back(), sizeof(rh));
  std::memset(file.data() + offsets.back() + kRecordHeaderSize + rh.gap + 4, 0, 20);
  test::write_file(seg, file);

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "reopened after the cut" : "reopened again");
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    if (round == 0) {
      EXPECT_TRUE(j->recovery().torn);
    }
    auto a = open_store(*j, store_config(dir, "A"), 999'999);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->epoch(), 2u);
    EXPECT_EQ(a->creation_time(), 7000);
    EXPECT_EQ(a->next_sender_seq(), 1u);
    EXPECT_TRUE(replay_range(*a, 1, 100).seqs.empty()) << "the old epoch's messages";
  }
}

TEST(SharedJournal, a_seqnum_file_lost_after_a_reset_is_recovered_in_the_new_epoch) {
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    for (std::uint64_t i = 1; i <= 10; ++i) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
      ASSERT_EQ(a->store_inbound(i, 0, {"old", 3}), StoreStatus::kOk);
    }
    ASSERT_EQ(a->reset(5000), StoreStatus::kOk);
    for (std::uint64_t i = 1; i <= 4; ++i) {
      ASSERT_EQ(send(*a, "A2", i), StoreStatus::kOk);
      ASSERT_EQ(a->store_inbound(i, 0, {"in", 2}), StoreStatus::kOk);
    }
  }
  ASSERT_TRUE(std::filesystem::remove(seqnums_path(dir, "A")));
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"), 999'999);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->epoch(), 2u);
  EXPECT_EQ(a->creation_time(), 5000);
  EXPECT_EQ(a->next_sender_seq(), 5u);
  EXPECT_EQ(a->next_target_seq(), 5u);
  const Got got = replay_range(*a, 1, 100);
  EXPECT_EQ(got.seqs, seq_range(1, 4));
  expect_bodies(got, "A2");
}

// ---------------------------------------------------------------------------
// One store per stream

TEST(SharedJournal, a_stream_open_in_one_store_cannot_be_opened_by_another) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "SESSION_A"));
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
  auto twice = j->open_store(store_config(dir, "SESSION_A"), 1000);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("SESSION_A"), std::string::npos) << twice.error().message;
  EXPECT_NE(twice.error().message.find("stream 1"), std::string::npos) << twice.error().message;
  EXPECT_EQ(j->streams(), 1u);
  // The open store is untouched, and once closed its stream opens again.
  ASSERT_EQ(send(*a, "A", 2), StoreStatus::kOk);
  a.reset();
  auto again = open_store(*j, store_config(dir, "SESSION_A"));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->stream(), 1u);
  EXPECT_EQ(again->next_sender_seq(), 3u);
  EXPECT_EQ(replay_range(*again, 1, 10).seqs, seq_range(1, 2));
}

TEST(SharedJournal, a_stream_recorded_with_another_session_identity_is_refused) {
  TempDir dir;
  const std::uint64_t ours = session_identity("FIX.4.4:VENUE->CLIENT");
  const std::uint64_t theirs = session_identity("FIX.4.4:VENUE->OTHER");
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "CLIENT", ours));
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
    a.reset();
    auto other = j->open_store(store_config(dir, "CLIENT", theirs), 1000);
    ASSERT_FALSE(other);
    EXPECT_NE(other.error().message.find("stream 1 (CLIENT)"), std::string::npos) << other.error().message;
    EXPECT_EQ(j->streams(), 1u);
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto other = j->open_store(store_config(dir, "CLIENT", theirs), 1000);
  ASSERT_FALSE(other) << "after reopening too";
  EXPECT_NE(other.error().message.find("stream 1 (CLIENT)"), std::string::npos) << other.error().message;
  auto a = open_store(*j, store_config(dir, "CLIENT", ours));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->next_sender_seq(), 2u);
  EXPECT_EQ(j->streams(), 1u);
}

// ---------------------------------------------------------------------------
// Damage

TEST(SharedJournal, a_torn_last_record_is_cut_on_open_and_every_earlier_message_survives) {
  TempDir dir;
  constexpr std::uint64_t kN = 400;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    ASSERT_TRUE(a && b);
    for (std::uint64_t i = 1; i <= kN; ++i) {
      ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
      ASSERT_EQ(b->store_inbound(i, 0, {"in", 2}), StoreStatus::kOk);
      b->set_next_target_seq(i + 1);
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);  // the last record: A's kN
    }
  }
  const auto files = test::segment_files(journal_dir(dir));
  ASSERT_GE(files.size(), 3u);
  const std::string seg = journal_dir(dir) + "/" + files.back();
  std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  ASSERT_FALSE(offsets.empty());
  const StreamHeader last = header_at(file, offsets.back());
  ASSERT_EQ(last.stream, 1u);
  ASSERT_EQ(last.kind, StreamHeader::kOutbound);
  ASSERT_EQ(last.value, kN);
  ASSERT_NO_FATAL_FAILURE(garble_record(file, offsets.back()));
  test::write_file(seg, file);

  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    EXPECT_TRUE(j->recovery().torn);
    EXPECT_FALSE(j->recovery().repairs.empty());
    EXPECT_EQ(j->recovery().cut_offset, offsets.back());
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    ASSERT_TRUE(a && b);
    // A seq is never used twice: the file's next sender stands, the lost one is said.
    EXPECT_EQ(a->next_sender_seq(), kN + 1);
    EXPECT_TRUE(has_line(a->recovery().warnings,
                         "seqs " + std::to_string(kN) + ".." + std::to_string(kN) + " (1 messages) are lost"))
        << ::testing::PrintToString(a->recovery().warnings);
    const Got ga = replay_range(*a, 1, kN);
    EXPECT_EQ(ga.seqs, seq_range(1, kN - 1));
    expect_bodies(ga, "A");
    // B lost nothing.
    EXPECT_TRUE(b->recovery().warnings.empty()) << ::testing::PrintToString(b->recovery().warnings);
    EXPECT_EQ(b->next_sender_seq(), kN + 1);
    EXPECT_EQ(b->next_target_seq(), kN + 1);
    const Got gb = replay_range(*b, 1, kN);
    EXPECT_EQ(gb.seqs, seq_range(1, kN));
    expect_bodies(gb, "B");
    // Sending goes on after the cut.
    ASSERT_EQ(send(*a, "A", kN + 1), StoreStatus::kOk);
    const Got tail = replay_range(*a, kN - 2, kN + 1);
    std::vector<std::uint64_t> want = seq_range(kN - 2, kN - 1);
    want.push_back(kN + 1);
    EXPECT_EQ(tail.seqs, want);
    expect_bodies(tail, "A");
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  EXPECT_FALSE(j->recovery().torn) << "clean once repaired";
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->next_sender_seq(), kN + 2);
  EXPECT_EQ(replay_range(*a, 1, kN + 1).seqs.size(), static_cast<std::size_t>(kN));
}

TEST(SharedJournal, a_damaged_message_in_a_finished_segment_is_skipped_and_said) {
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    ASSERT_TRUE(a && b);
    for (std::uint64_t i = 1; i <= 600; ++i) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
      ASSERT_EQ(send(*b, "B", i), StoreStatus::kOk);
    }
  }
  const auto files = test::segment_files(journal_dir(dir));
  ASSERT_GE(files.size(), 3u);
  const std::string seg = journal_dir(dir) + "/" + files.front();
  std::vector<char> file = test::read_file(seg);
  std::size_t at = 0;
  for (const std::size_t off : data_record_offsets(file)) {
    const StreamHeader h = header_at(file, off);
    if (h.stream == 1 && h.kind == StreamHeader::kOutbound && h.value == 10) at = off;
  }
  ASSERT_NE(at, 0u);
  ASSERT_NO_FATAL_FAILURE(garble_record(file, at));
  test::write_file(seg, file);

  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  EXPECT_TRUE(has_line(j->warnings(), "corrupt record(s) skipped"))
      << ::testing::PrintToString(j->warnings());
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->next_sender_seq(), 601u);
  Got ga;
  const ReplayResult r = collect(*a, 1, 600, ga);
  EXPECT_EQ(r.corrupt, 1u);
  std::vector<std::uint64_t> want = seq_range(1, 9);
  for (std::uint64_t s = 11; s <= 600; ++s) want.push_back(s);
  EXPECT_EQ(ga.seqs, want) << "seq 10 alone is missing (gap-filled on resend)";
  expect_bodies(ga, "A");
  // A resend of recent messages starts near them (the index the scan
  // rebuilt), not at the journal's start: it never meets the damage.
  Got recent;
  const ReplayResult rr = collect(*a, 500, 600, recent);
  EXPECT_EQ(recent.seqs, seq_range(500, 600));
  EXPECT_EQ(rr.corrupt, 0u);
  const Got gb = replay_range(*b, 1, 600);
  EXPECT_EQ(gb.seqs, seq_range(1, 600));
  expect_bodies(gb, "B");
}

TEST(SharedJournal, a_damaged_stream_name_record_in_a_finished_segment_does_not_stop_the_other_sessions) {
  // One flipped bit in an old record: JournalStore skips a corrupt record
  // of a finished segment and says so; the shared journal holds every
  // session of an engine thread, so the damage of one record must not keep
  // the others from starting. Here B's kStreamName record is damaged: A and
  // C (streams 1 and 3) still open with their numbers and messages.
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    auto b = open_store(*j, store_config(dir, "B"));
    auto c = open_store(*j, store_config(dir, "C"));
    ASSERT_TRUE(a && b && c);
    for (std::uint64_t i = 1; i <= 600; ++i) {
      ASSERT_EQ(send(*a, "A", i), StoreStatus::kOk);
      ASSERT_EQ(send(*c, "C", i), StoreStatus::kOk);
    }
  }
  const auto files = test::segment_files(journal_dir(dir));
  ASSERT_GE(files.size(), 3u);
  const std::string seg = journal_dir(dir) + "/" + files.front();
  std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  ASSERT_GE(offsets.size(), 3u);
  const StreamHeader named = header_at(file, offsets[1]);
  ASSERT_EQ(named.kind, StreamHeader::kStreamName);
  ASSERT_EQ(named.stream, 2u);
  RecordHeader rh;
  std::memcpy(&rh, file.data() + offsets[1], sizeof(rh));
  file[offsets[1] + kRecordHeaderSize + rh.gap + StreamHeader::kSize] ^= 0x01;  // its CRC fails
  test::write_file(seg, file);

  auto j = SharedJournal::open(journal_config(dir));
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_FALSE((*j)->warnings().empty());
  auto a = open_store(**j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->stream(), 1u);
  EXPECT_EQ(a->next_sender_seq(), 601u);
  EXPECT_EQ(replay_range(*a, 1, 600).seqs, seq_range(1, 600));
  auto c = open_store(**j, store_config(dir, "C"));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->stream(), 3u);
  EXPECT_FALSE(c->recovery().stream_created);
  const Got gc = replay_range(*c, 1, 600);
  EXPECT_EQ(gc.seqs, seq_range(1, 600));
  expect_bodies(gc, "C");
}

TEST(SharedJournal, retention_is_refused_naming_it_and_creates_nothing) {
  // The records naming the streams and their epochs would go with the
  // oldest segments (a session would no longer find its stream after a
  // restart): a shared journal refuses retention until it keeps them apart.
  TempDir dir;
  for (int which = 0; which < 2; ++which) {
    SharedJournalConfig cfg = journal_config(dir);
    if (which == 0) cfg.journal.retain_segments = 4;
    if (which == 1) cfg.journal.retain_max_age_ns = 60'000'000'000;
    auto j = SharedJournal::open(cfg);
    ASSERT_FALSE(j);
    EXPECT_NE(j.error().message.find("retention"), std::string::npos) << j.error().message;
    EXPECT_NE(j.error().message.find(cfg.journal.directory), std::string::npos) << j.error().message;
    EXPECT_FALSE(std::filesystem::exists(cfg.journal.directory));
  }
}

TEST(SharedJournal, a_journal_written_without_stream_headers_opens_with_a_warning_naming_it) {
  // A single session's journal in the shared journal's directory: its
  // records are not a shared journal's, skipped and said.
  TempDir dir;
  {
    auto plain = Journal::open(test::small_config(journal_dir(dir), kSeg));
    ASSERT_TRUE(plain) << plain.error().message;
    test::append_range(**plain, 1, 5, 90);
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->streams(), 0u);
  EXPECT_EQ(j->scanned(), 5u);
  EXPECT_TRUE(has_line(j->warnings(), "(first: record 1)")) << ::testing::PrintToString(j->warnings());
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->stream(), 1u);
  ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
  EXPECT_EQ(replay_range(*a, 1, 10).seqs, seq_range(1, 1));
}

TEST(SharedJournal, a_record_naming_an_impossible_stream_is_skipped_not_trusted_to_size_the_streams) {
  // A record with a valid CRC whose header names stream 4,000,000,000 (a
  // damaged or foreign file): the scan must not make four billion streams.
  TempDir dir;
  {
    auto j = open_journal(dir);
    ASSERT_NE(j, nullptr);
    auto a = open_store(*j, store_config(dir, "A"));
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(send(*a, "A", 1), StoreStatus::kOk);
    Journal& raw = j->journal();
    const StreamHeader h{4'000'000'000u, StreamHeader::kOutbound, 7};
    char bytes[StreamHeader::kSize + 4] = {};
    h.write(bytes);
    ASSERT_EQ(raw.append(raw.last_seq() + 1, 1, {bytes, sizeof bytes}), StoreStatus::kOk);
  }
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->streams(), 1u);
  EXPECT_TRUE(has_line(j->warnings(), "without a stream header")) << ::testing::PrintToString(j->warnings());
  auto a = open_store(*j, store_config(dir, "A"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->next_sender_seq(), 2u);
  EXPECT_EQ(replay_range(*a, 1, 10).seqs, seq_range(1, 1));
}

// ---------------------------------------------------------------------------
// The hot path

TEST(SharedJournal, claim_commit_store_inbound_replay_and_reset_allocate_nothing_after_open) {
  TempDir dir;
  auto j = open_journal(dir);
  ASSERT_NE(j, nullptr);
  auto a = open_store(*j, store_config(dir, "A"));
  auto b = open_store(*j, store_config(dir, "B"));
  ASSERT_TRUE(a && b);
  const std::string m = message_for(0, 230);
  const std::uint64_t rotations_before = j->journal().stats().rotations;
  std::uint64_t writes = 0, reads = 0;
  {
    hft::test::AllocationScope scope;
    for (int round = 0; round < 600; ++round) {
      MessageStore& s = round % 2 == 0 ? static_cast<MessageStore&>(*a) : *b;
      const std::uint64_t seq = s.next_sender_seq();
      std::span<char> room = s.claim(512);
      ASSERT_FALSE(room.empty());
      std::memcpy(room.data() + 17, m.data(), m.size());
      ASSERT_EQ(s.commit(seq, round, 17, m.size()), StoreStatus::kOk);
      ASSERT_EQ(s.store_inbound(s.next_target_seq(), round, {m.data(), m.size()}), StoreStatus::kOk);
      s.set_next_target_seq(s.next_target_seq() + 1);
    }
    writes = scope.count();
  }
  EXPECT_EQ(writes, 0u);
  EXPECT_GE(j->journal().stats().rotations, rotations_before + 3) << "across rotations";
  std::size_t n = 0;
  StoreStatus reset = StoreStatus::kClosed;
  {
    hft::test::AllocationScope scope;
    (void)a->replay(1, 300, 1000, [&](const StoredMessage&) { return ++n > 0; });
    (void)b->replay(250, 260, 5, [&](const StoredMessage&) { return ++n > 0; });
    reset = a->reset(12345);
    (void)a->stats();
    reads = scope.count();
  }
  EXPECT_EQ(n, 305u);
  EXPECT_EQ(reset, StoreStatus::kOk);
  EXPECT_EQ(reads, 0u);
}

}  // namespace
}  // namespace hft::store
