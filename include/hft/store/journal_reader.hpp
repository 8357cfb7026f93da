// Sequential, read-only reader of a journal directory, for tools
// (hft-journal), audits and tests. It never writes: unlike Journal::open it
// neither cuts torn tails nor removes spares; it reports them.
//
// Records come in file order across all segments and epochs, control
// records included (RecordView::control()). A record whose framing or CRC
// fails ends that segment (kCorrupt, with where()); the next call continues
// with the next segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/store/format.hpp"

namespace hft::store {

struct RecordView {
  std::uint64_t segment = 0;      ///< segment file number
  std::size_t offset = 0;         ///< byte offset of the record in the file
  std::uint64_t seq = 0;
  std::int64_t timestamp_ns = 0;
  std::uint16_t flags = 0;        ///< RecordFlag bits | caller flags << 8
  std::span<const char> bytes;    ///< payload; valid until the next call
  [[nodiscard]] bool control() const noexcept { return (flags & kRecordControl) != 0; }
  [[nodiscard]] std::uint8_t caller_flags() const noexcept { return static_cast<std::uint8_t>(flags >> 8); }
};

class JournalReader {
 public:
  enum class Next : std::int8_t {
    kRecord = 0,   ///< `out` holds the next record
    kEnd = 1,      ///< no more records
    kCorrupt = -1, ///< a record failed its checks; where() names it
  };

  /// Lists and checks every segment header (same refusals as Journal::open:
  /// bad magic, header CRC, newer version), mapping nothing yet.
  [[nodiscard]] static Expected<JournalReader> open(const std::string& directory);

  JournalReader(JournalReader&& other) noexcept;
  JournalReader& operator=(JournalReader&& other) noexcept;
  JournalReader(const JournalReader&) = delete;
  JournalReader& operator=(const JournalReader&) = delete;
  ~JournalReader();

  /// Advances to the next record.
  [[nodiscard]] Next next(RecordView& out) noexcept;

  /// Continues with the first record of segments()[index] (index past the
  /// end: kEnd). Lets a tool read the tail without the segments before it.
  void seek_segment(std::size_t index) noexcept {
    close_segment();
    index_ = index;
  }

  /// Segment numbers found, ascending.
  [[nodiscard]] const std::vector<std::uint64_t>& segments() const noexcept { return numbers_; }
  /// "path@offset" of the last record or corruption.
  [[nodiscard]] std::string where() const;

 private:
  JournalReader() = default;
  bool open_segment(std::size_t index) noexcept;
  void close_segment() noexcept;

  std::string directory_;
  std::vector<std::uint64_t> numbers_;
  std::size_t index_ = 0;      ///< segment being read
  const char* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t offset_ = 0;     ///< next record
  std::size_t last_offset_ = 0;
  bool opened_ = false;
  bool sealed_ = false;  ///< the last record read was its segment's seal
};

}  // namespace hft::store
