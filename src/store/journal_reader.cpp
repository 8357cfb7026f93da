#include "hft/store/journal_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "store/segment.hpp"

namespace hft::store {

Expected<JournalReader> JournalReader::open(const std::string& directory) {
  JournalReader reader;
  reader.directory_ = directory;
  DIR* d = ::opendir(directory.c_str());
  if (d == nullptr) return Error{directory + ": cannot read journal directory: " + std::strerror(errno)};
  while (dirent* e = ::readdir(d)) {
    std::uint64_t number = 0;
    if (detail::parse_segment_name(e->d_name, number)) reader.numbers_.push_back(number);
  }
  ::closedir(d);
  std::sort(reader.numbers_.begin(), reader.numbers_.end());
  char path[detail::kPathMax];
  for (std::uint64_t number : reader.numbers_) {
    detail::format_segment_path(path, sizeof(path), directory, number);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{std::string(path) + ": cannot open: " + std::strerror(errno)};
    struct stat st {};
    ::fstat(fd, &st);
    SegmentHeader h{};
    const ssize_t got = ::pread(fd, &h, sizeof(h), 0);
    ::close(fd);
    if (got != static_cast<ssize_t>(sizeof(h))) return Error{std::string(path) + ": shorter than a segment header"};
    if (std::string why = detail::check_header(h, path, number, static_cast<std::size_t>(st.st_size)); !why.empty())
      return Error{why};
  }
  return reader;
}

JournalReader::JournalReader(JournalReader&& other) noexcept
    : directory_(std::move(other.directory_)),
      numbers_(std::move(other.numbers_)),
      index_(other.index_),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      offset_(other.offset_),
      last_offset_(other.last_offset_),
      opened_(std::exchange(other.opened_, false)),
      sealed_(std::exchange(other.sealed_, false)) {}

JournalReader& JournalReader::operator=(JournalReader&& other) noexcept {
  if (this != &other) {
    close_segment();
    directory_ = std::move(other.directory_);
    numbers_ = std::move(other.numbers_);
    index_ = other.index_;
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    offset_ = other.offset_;
    last_offset_ = other.last_offset_;
    opened_ = std::exchange(other.opened_, false);
    sealed_ = std::exchange(other.sealed_, false);
  }
  return *this;
}

JournalReader::~JournalReader() { close_segment(); }

void JournalReader::close_segment() noexcept {
  detail::ReadView v{base_, size_};
  detail::unmap_readonly(v);
  base_ = nullptr;
  size_ = 0;
  opened_ = false;
  sealed_ = false;
}

bool JournalReader::open_segment(std::size_t index) noexcept {
  close_segment();
  char path[detail::kPathMax];
  detail::ReadView v;
  if (!detail::format_segment_path(path, sizeof(path), directory_, numbers_[index]) ||
      detail::map_readonly(path, v) != 0)
    return false;
  base_ = v.base;
  size_ = v.size;
  offset_ = kSegmentHeaderSize;
  opened_ = true;
  return true;
}

JournalReader::Next JournalReader::next(RecordView& out) noexcept {
  for (;;) {
    if (!opened_) {
      if (index_ >= numbers_.size()) return Next::kEnd;
      if (!open_segment(index_)) {
        last_offset_ = 0;
        ++index_;
        return Next::kCorrupt;
      }
    }
    RecordHeader h;
    std::uint32_t size_field = 0;
    if (!sealed_ && offset_ + kRecordHeaderSize <= size_)
      std::memcpy(&size_field, base_ + offset_, sizeof(size_field));
    if (size_field == 0) {
      // End of this segment's records: zeros, or the seal. Nothing follows a
      // seal; in a segment filled to the brim its end is where the index
      // slots begin, which are not records.
      close_segment();
      ++index_;
      continue;
    }
    last_offset_ = offset_;
    if (!detail::read_record(base_, size_ - kSlotSize, offset_, h)) {
      close_segment();
      ++index_;
      return Next::kCorrupt;
    }
    out.segment = numbers_[index_];
    out.offset = offset_;
    out.seq = h.seq;
    out.timestamp_ns = h.timestamp_ns;
    out.flags = h.flags;
    out.bytes = {base_ + offset_ + kRecordHeaderSize + h.gap, h.size - kRecordHeaderSize - h.gap};
    SegmentHeader sh;
    std::memcpy(&sh, base_, sizeof(sh));
    offset_ = align_up(offset_ + h.size, sh.record_alignment);
    sealed_ = (h.flags & kRecordSegmentSeal) != 0;
    return Next::kRecord;
  }
}

std::string JournalReader::where() const {
  const std::size_t i = index_ < numbers_.size() && opened_ ? index_ : (index_ == 0 ? 0 : index_ - 1);
  if (numbers_.empty()) return directory_;
  char path[detail::kPathMax];
  detail::format_segment_path(path, sizeof(path), directory_, numbers_[std::min(i, numbers_.size() - 1)]);
  return std::string(path) + "@" + std::to_string(last_offset_);
}

}  // namespace hft::store
