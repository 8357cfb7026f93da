#include "hft/store/seqnum_store.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "hft/store/crc32c.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using test::TempDir;

TEST(SeqNumStore, a_new_store_starts_at_one_in_epoch_one) {
  TempDir dir;
  auto s = SeqNumStore::open(dir.sub("seqnums.dat"), 42);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->next_sender_seq(), 1u);
  EXPECT_EQ(s->next_target_seq(), 1u);
  EXPECT_EQ(s->epoch(), 1u);
  EXPECT_EQ(s->epoch_created_ns(), 42);
}

TEST(SeqNumStore, values_survive_reopening) {
  TempDir dir;
  {
    auto s = SeqNumStore::open(dir.sub("seqnums.dat"), 1);
    ASSERT_TRUE(s);
    s->set_next_sender_seq(1000);
    s->set_next_target_seq(77);
    s->set_next_sender_seq(1001);
  }
  auto s = SeqNumStore::open(dir.sub("seqnums.dat"), 999);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->next_sender_seq(), 1001u);
  EXPECT_EQ(s->next_target_seq(), 77u);
  EXPECT_EQ(s->epoch_created_ns(), 1) << "existing file: now_ns is not used";
  s->reset(2, 500);
  EXPECT_EQ(s->next_sender_seq(), 1u);
  EXPECT_EQ(s->epoch(), 2u);
  EXPECT_EQ(s->flush(), StoreStatus::kOk);
}

TEST(SeqNumStore, a_torn_newest_slot_falls_back_to_the_previous_values) {
  TempDir dir;
  const std::string path = dir.sub("seqnums.dat");
  std::uint64_t newest_gen = 0;
  {
    auto s = SeqNumStore::open(path, 1);
    ASSERT_TRUE(s);
    s->set(10, 20);
    s->set(11, 21);
    newest_gen = s->generation();
  }
  std::vector<char> file = test::read_file(path);
  // Find the slot with the newest generation and damage it.
  for (std::size_t slot = 0; slot < 2; ++slot) {
    SeqNumSlot v;
    std::memcpy(&v, file.data() + 64 + 64 * slot, sizeof(v));
    if (v.generation == newest_gen) file[64 + 64 * slot + 12] ^= 0x7F;
  }
  test::write_file(path, file);
  auto s = SeqNumStore::open(path, 1);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->next_sender_seq(), 10u);
  EXPECT_EQ(s->next_target_seq(), 20u);
}

TEST(SeqNumStore, both_slots_corrupt_is_a_clear_error_and_the_file_is_kept) {
  TempDir dir;
  const std::string path = dir.sub("seqnums.dat");
  { ASSERT_TRUE(SeqNumStore::open(path, 1)); }
  std::vector<char> file = test::read_file(path);
  file[64 + 8] ^= 1;
  file[128 + 60] ^= 1;
  test::write_file(path, file);
  auto s = SeqNumStore::open(path, 1);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(path), std::string::npos);
  EXPECT_NE(s.error().message.find("corrupt"), std::string::npos);
  EXPECT_EQ(test::read_file(path), file);
}

TEST(SeqNumStore, refuses_bad_magic_newer_versions_damaged_headers_and_wrong_sizes) {
  TempDir dir;
  const std::string path = dir.sub("seqnums.dat");
  { ASSERT_TRUE(SeqNumStore::open(path, 1)); }
  const std::vector<char> pristine = test::read_file(path);
  auto expect_refused = [&](const std::vector<char>& bytes, const char* why) {
    test::write_file(path, bytes);
    auto s = SeqNumStore::open(path, 1);
    ASSERT_FALSE(s) << why;
    EXPECT_NE(s.error().message.find(path), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find(why), std::string::npos) << s.error().message;
    EXPECT_EQ(test::read_file(path), bytes);
  };
  std::vector<char> magic = pristine;
  magic[0] = 'X';
  expect_refused(magic, "magic");
  std::vector<char> version = pristine;
  SeqNumHeader h;
  std::memcpy(&h, version.data(), sizeof(h));
  h.format_version = kSeqNumFormatVersion + 1;
  h.header_crc = crc32c(&h, offsetof(SeqNumHeader, header_crc));
  std::memcpy(version.data(), &h, sizeof(h));
  expect_refused(version, "newer");
  std::vector<char> header = pristine;
  header[20] ^= 1;
  expect_refused(header, "CRC");
  std::vector<char> small(pristine.begin(), pristine.begin() + 100);
  expect_refused(small, "bytes");
}

TEST(SeqNumStore, a_missing_file_is_an_error_when_creation_is_off) {
  TempDir dir;
  auto s = SeqNumStore::open(dir.sub("nope.dat"), 1, false);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(dir.sub("nope.dat")), std::string::npos);
}

}  // namespace
}  // namespace hft::store
