// A file system that refuses space, and a write-back that fails: what the
// journal and the store report, and that nothing half-recorded is left.
//
// posix_fallocate and msync are interposed (this executable defines them;
// the store library, linked statically, calls these): a switch makes them
// fail with a chosen errno, as a full disk or a failing device would. The
// end-to-end test on a real full tmpfs is tests/recovery/full_disk_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "hft/store/journal.hpp"
#include "hft/store/message_store.hpp"
#include "store/store_test_util.hpp"

namespace {
std::atomic<int> g_fallocate_errno{0};
std::atomic<int> g_msync_errno{0};
}  // namespace

extern "C" int posix_fallocate(int fd, off_t offset, off_t len) {
  if (const int err = g_fallocate_errno.load(); err != 0) return err;
  return ::fallocate(fd, 0, offset, len) == 0 ? 0 : errno;
}

extern "C" int msync(void* addr, size_t length, int flags) {
  if (const int err = g_msync_errno.load(); err != 0) {
    errno = err;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_msync, addr, length, flags));
}

namespace hft::store {
namespace {

using test::message_for;
using test::segment_files;
using test::TempDir;

/// Space refused from construction to destruction.
struct DiskFull {
  explicit DiskFull(int err = ENOSPC) { g_fallocate_errno.store(err); }
  ~DiskFull() { g_fallocate_errno.store(0); }
  void space_returns() { g_fallocate_errno.store(0); }
};

/// Appends 200-byte messages from `seq` on until one fails; returns its status.
StoreStatus fill(Journal& j, std::uint64_t& seq) {
  for (;;) {
    const std::string m = message_for(seq, 200);
    const StoreStatus st = j.append(seq, 0, {m.data(), m.size()});
    if (st != StoreStatus::kOk) return st;
    ++seq;
  }
}

std::vector<std::uint64_t> replayed(Journal& j) {
  std::vector<std::uint64_t> seqs;
  (void)j.replay_each(1, ~std::uint64_t{0} - 1, 1'000'000, [&](const StoredMessage& m) {
    seqs.push_back(m.seq);
    return true;
  });
  return seqs;
}

TEST(FullDisk, claim_reports_no_space_with_the_errno_and_leaves_no_file_behind) {
  TempDir dir;
  auto j = Journal::open(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j) << j.error().message;
  DiskFull full;
  std::uint64_t seq = 1;
  EXPECT_EQ(fill(**j, seq), StoreStatus::kNoSpace);
  EXPECT_TRUE((*j)->claim(200).empty());
  EXPECT_EQ((*j)->last_status(), StoreStatus::kNoSpace);
  EXPECT_EQ((*j)->stats().last_errno, ENOSPC);
  EXPECT_GE((*j)->stats().failed_claims, 2u);
  EXPECT_EQ(segment_files(dir.path()), std::vector<std::string>{"00000001.seg"})
      << "a failed creation is undone";

  full.space_returns();
  const std::string m = message_for(seq, 200);
  ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk) << "the next claim rotates";
  EXPECT_EQ((*j)->active_segment(), 2u) << "numbers of failed creations are given back";
  EXPECT_EQ(replayed(**j).size(), seq);
}

TEST(FullDisk, other_errors_are_io_errors_with_their_errno) {
  TempDir dir;
  auto j = Journal::open(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j) << j.error().message;
  DiskFull broken(EIO);
  std::uint64_t seq = 1;
  EXPECT_EQ(fill(**j, seq), StoreStatus::kIoError);
  EXPECT_EQ((*j)->stats().last_errno, EIO);
}

TEST(FullDisk, a_spare_that_failed_for_lack_of_space_is_prepared_once_space_returns) {
  TempDir dir;
  auto j = Journal::open(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j) << j.error().message;
  DiskFull full;
  std::int64_t now = 1'000'000'000;
  (void)(*j)->maintain(now);
  EXPECT_FALSE((*j)->spare_ready());
  EXPECT_EQ((*j)->stats().spare_errno, ENOSPC) << "reported while it lasts";
  EXPECT_EQ((*j)->stats().service_errors, 1u);
  (void)(*j)->maintain(now + 10'000'000);
  EXPECT_EQ((*j)->stats().service_errors, 1u) << "retried after a pause, not in a tight loop";
  (void)(*j)->maintain(now + 150'000'000);
  EXPECT_EQ((*j)->stats().service_errors, 2u) << "and retried again";

  full.space_returns();
  now += 300'000'000;
  for (int cycle = 0; cycle < 1000 && !(*j)->spare_ready(); ++cycle) (void)(*j)->maintain(now);
  ASSERT_TRUE((*j)->spare_ready()) << "never given up";
  EXPECT_EQ((*j)->stats().spare_errno, 0);
  std::uint64_t seq = 1;
  for (int i = 0; i < 200 && (*j)->stats().rotations == 0; ++i) {
    const std::string m = message_for(seq, 200);
    ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
    ++seq;
  }
  const JournalStats st = (*j)->stats();
  EXPECT_EQ(st.spare_misses, 0u) << "the rotation took the spare";
  EXPECT_EQ(st.active_segment, 2u) << "no numbers lost to the failed attempts";
}

TEST(FullDisk, claim_reserve_records_a_last_message_when_no_segment_can_be_created) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 16 * 1024);
  c.reserve_bytes = 1024;
  std::uint64_t seq = 1;
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    DiskFull full;
    EXPECT_EQ(fill(**j, seq), StoreStatus::kNoSpace);
    const std::string last = message_for(seq, 300);
    std::span<char> room = (*j)->claim_reserve(last.size());
    ASSERT_FALSE(room.empty()) << "the room kept back";
    std::memcpy(room.data(), last.data(), last.size());
    ASSERT_EQ((*j)->commit(seq, 0, 0, last.size()), StoreStatus::kOk);
    ++seq;
    EXPECT_TRUE((*j)->claim_reserve(1024).empty()) << "the reserve holds one such message";
    EXPECT_EQ((*j)->last_status(), StoreStatus::kNoSpace);
    EXPECT_TRUE((*j)->claim_reserve(1025).empty()) << "never more than reserve_bytes";

    full.space_returns();
    const std::string m = message_for(seq, 200);
    ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk)
        << "the segment can still be sealed";
    ++seq;
  }
  auto reopened = Journal::open(c);
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_FALSE((*reopened)->recovery().torn);
  const std::vector<std::uint64_t> seqs = replayed(**reopened);
  ASSERT_EQ(seqs.size(), seq - 1);
  for (std::size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i + 1);
}

TEST(FullDisk, a_sync_commit_whose_msync_fails_is_taken_back) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 64 * 1024);
  c.durability = Durability::kSync;
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    for (std::uint64_t s = 1; s <= 3; ++s) {
      const std::string m = message_for(s);
      ASSERT_EQ((*j)->append(s, 0, {m.data(), m.size()}), StoreStatus::kOk);
    }
    const std::string m4 = message_for(4);
    g_msync_errno.store(EIO);
    const StoreStatus st = (*j)->append(4, 0, {m4.data(), m4.size()});
    g_msync_errno.store(0);
    EXPECT_EQ(st, StoreStatus::kIoError);
    EXPECT_EQ((*j)->stats().last_errno, EIO);
    EXPECT_EQ((*j)->last_seq(), 3u) << "seq 4 is not indexed";
    EXPECT_EQ((*j)->stats().appends, 3u);
    EXPECT_EQ(replayed(**j), (std::vector<std::uint64_t>{1, 2, 3}));
    const std::string again = message_for(4, 150);
    ASSERT_EQ((*j)->append(4, 0, {again.data(), again.size()}), StoreStatus::kOk) << "seq 4 is free again";
  }
  auto reopened = Journal::open(c);
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_FALSE((*reopened)->recovery().torn) << "nothing of the taken-back record is left";
  std::vector<std::size_t> sizes;
  (void)(*reopened)->replay_each(1, 10, 100, [&](const StoredMessage& m) {
    sizes.push_back(m.bytes.size());
    return true;
  });
  ASSERT_EQ(sizes.size(), 4u);
  EXPECT_EQ(sizes[3], message_for(4, 150).size());
}

// ---- the store over the journals ----

JournalStoreConfig store_config(const std::string& dir) {
  JournalStoreConfig c;
  c.directory = dir;
  c.journal = test::small_config("", 16 * 1024);
  return c;
}

StoreStatus send(MessageStore& store, std::uint64_t seq, std::size_t size = 200) {
  const std::string body = message_for(seq, size);
  std::span<char> room = store.claim(body.size());
  if (room.empty()) return store.last_status();
  std::memcpy(room.data(), body.data(), body.size());
  return store.commit(seq, 0, 0, body.size());
}

TEST(FullDiskStore, a_commit_that_fails_uses_no_sequence_number) {
  TempDir dir;
  JournalStoreConfig c = store_config(dir.path());
  c.journal.durability = Durability::kSync;
  auto s = JournalStore::open(c);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(send(**s, 1), StoreStatus::kOk);
  EXPECT_EQ((*s)->next_sender_seq(), 2u);
  g_msync_errno.store(EIO);
  const StoreStatus st = send(**s, 2);
  g_msync_errno.store(0);
  EXPECT_EQ(st, StoreStatus::kIoError);
  EXPECT_EQ((*s)->next_sender_seq(), 2u) << "seq 2 was not recorded, so it is not used";
  char what[256];
  const std::string text(what, (*s)->describe_failure(what));
  EXPECT_NE(text.find(dir.path() + "/outbound"), std::string::npos) << text;
  EXPECT_NE(text.find(std::strerror(EIO)), std::string::npos) << text;
}

TEST(FullDiskStore, no_space_names_the_journal_and_the_errno_in_both_directions) {
  TempDir dir;
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s) << s.error().message;
  DiskFull full;
  std::uint64_t seq = 1;
  while (send(**s, seq) == StoreStatus::kOk) ++seq;
  EXPECT_EQ((*s)->last_status(), StoreStatus::kNoSpace);
  EXPECT_EQ((*s)->next_sender_seq(), seq);
  char what[256];
  std::string text(what, (*s)->describe_failure(what));
  EXPECT_NE(text.find(dir.path() + "/outbound: no space on the file system"), std::string::npos) << text;
  EXPECT_NE(text.find(std::strerror(ENOSPC)), std::string::npos) << text;
  EXPECT_EQ((*s)->check_room(200), StoreStatus::kNoSpace);

  // The store keeps room for a Logout in every outbound segment.
  std::span<char> room = (*s)->claim_reserve(kReserveMessageSize);
  ASSERT_FALSE(room.empty());
  const std::string logout = message_for(seq, 400);
  std::memcpy(room.data(), logout.data(), logout.size());
  ASSERT_EQ((*s)->commit(seq, 0, 0, logout.size()), StoreStatus::kOk);
  EXPECT_EQ((*s)->next_sender_seq(), seq + 1);

  std::uint64_t in = 1;
  StoreStatus st = StoreStatus::kOk;
  while (st == StoreStatus::kOk) {
    const std::string m = message_for(in, 200);
    st = (*s)->store_inbound(in++, 0, {m.data(), m.size()});
  }
  EXPECT_EQ(st, StoreStatus::kNoSpace);
  text.assign(what, (*s)->describe_failure(what));
  EXPECT_NE(text.find(dir.path() + "/inbound: no space"), std::string::npos) << text;

  full.space_returns();
  EXPECT_EQ((*s)->check_room(200), StoreStatus::kOk) << "both journals move on once space returns";
  EXPECT_EQ(send(**s, seq + 1), StoreStatus::kOk);
}

}  // namespace
}  // namespace hft::store
