// The sequence-number store: a small mapped file (layout in format.hpp)
// holding the next sender and target MsgSeqNum and the session epoch.
//
// Updates write the slot holding the older generation and leave the other
// intact, so a crash in the middle of an update falls back to the previous
// values instead of a corrupt file. Updates are plain stores into the
// mapping (no system call); the file survives a process crash as soon as
// the call returns. flush() makes it survive power loss.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hft/core/expected.hpp"
#include "hft/store/format.hpp"
#include "hft/store/types.hpp"

namespace hft::store {

class SeqNumStore {
 public:
  /// Opens `path`, or creates it (next seqs 1/1, epoch 1 created at now_ns)
  /// when it does not exist and `create` is true. Errors name the path: bad
  /// magic, newer format version, header CRC mismatch, wrong size, both
  /// slots corrupt, I/O errors, and (with a non-zero `session_identity`) a
  /// file that records another session's identity. A file in error is never
  /// rewritten. A file created here records `session_identity`, and is
  /// fsync'd before it is renamed into place unless `sync_created` is false
  /// (the caller then makes it durable, e.g. with syncfs()).
  [[nodiscard]] static Expected<SeqNumStore> open(const std::string& path, std::int64_t now_ns,
                                                  bool create = true, std::uint64_t session_identity = 0,
                                                  bool sync_created = true);

  SeqNumStore(SeqNumStore&& other) noexcept;
  SeqNumStore& operator=(SeqNumStore&& other) noexcept;
  SeqNumStore(const SeqNumStore&) = delete;
  SeqNumStore& operator=(const SeqNumStore&) = delete;
  ~SeqNumStore();

  [[nodiscard]] std::uint64_t next_sender_seq() const noexcept { return current_.next_sender_seq; }
  [[nodiscard]] std::uint64_t next_target_seq() const noexcept { return current_.next_target_seq; }
  [[nodiscard]] std::uint64_t epoch() const noexcept { return current_.epoch; }
  [[nodiscard]] std::int64_t epoch_created_ns() const noexcept { return current_.epoch_created_ns; }
  /// Update generation (grows by one per write).
  [[nodiscard]] std::uint64_t generation() const noexcept { return current_.generation; }
  /// session_identity() the file records (0: not recorded, a version-1 file).
  [[nodiscard]] std::uint64_t session_identity() const noexcept { return identity_; }

  void set_next_sender_seq(std::uint64_t seq) noexcept;
  void set_next_target_seq(std::uint64_t seq) noexcept;
  /// Both at once (one slot write).
  void set(std::uint64_t next_sender, std::uint64_t next_target) noexcept;
  /// New epoch: next seqs back to 1.
  void reset(std::uint64_t epoch, std::int64_t created_ns) noexcept;

  /// msync(MS_SYNC) of the file. kIoError if it failed.
  [[nodiscard]] StoreStatus flush() noexcept;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The mapping (for a journal's companion flush).
  [[nodiscard]] void* mapping() const noexcept { return base_; }
  [[nodiscard]] static constexpr std::size_t mapping_size() noexcept { return kSeqNumFileSize; }

 private:
  SeqNumStore() = default;
  void write() noexcept;

  char* base_ = nullptr;
  int fd_ = -1;
  unsigned active_slot_ = 0;
  SeqNumSlot current_{};
  std::uint64_t identity_ = 0;
  std::string path_;
};

}  // namespace hft::store
