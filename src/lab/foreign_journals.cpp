#include "hft/lab/foreign_journals.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "hft/codec/parser.hpp"
#include "hft/lab/reference_order.hpp"
#include "text.hpp"

namespace hft::lab {

namespace fs = std::filesystem;

namespace {

/// A whole file mapped read-only (llfix files are up to the segment size,
/// hundreds of MiB: not copied into memory).
class MappedFile {
 public:
  static Expected<MappedFile> open(const fs::path& path) {
    MappedFile m;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{path.string() + ": cannot open (" + std::strerror(errno) + ")"};
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return Error{path.string() + ": cannot stat (" + std::strerror(errno) + ")"};
    }
    m.size_ = static_cast<std::size_t>(st.st_size);
    if (m.size_ != 0) {
      void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        return Error{path.string() + ": cannot map (" + std::strerror(errno) + ")"};
      }
      m.data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return m;
  }
  MappedFile() = default;
  MappedFile(MappedFile&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  [[nodiscard]] std::string_view bytes() const noexcept { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

std::uint64_t load_u64(std::string_view bytes, std::uint64_t offset) noexcept {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

// "<digits>.bin" -> its number, else 0.
std::uint64_t llfix_file_number(const fs::path& p) {
  if (p.extension() != ".bin") return 0;
  const std::string stem = p.stem().string();
  if (stem.empty() || stem.size() > 9 ||
      !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  return std::stoull(stem);
}

}  // namespace

// ------------------------------------------------------- MessageAudit ---

void MessageAudit::fail(const std::string& why) {
  ++failures_;
  if (first_failure_.empty()) first_failure_ = why;
}

void MessageAudit::sequence(std::uint64_t seq, const std::string& where) {
  if (first_seq_ == 0) first_seq_ = seq;
  if (last_seq_ != 0 && seq != last_seq_ + 1) {
    fail(where + "seq " + std::to_string(seq) + " follows " + std::to_string(last_seq_) + " (not contiguous)");
  }
  last_seq_ = seq;
}

void MessageAudit::check(std::string_view message, std::uint64_t stored_seq, const std::string& where) {
  ++records_;
  if (stored_seq != 0) sequence(stored_seq, where);
  const codec::FrameResult fr = codec::frame(message);
  if (fr.status != codec::FrameStatus::kComplete || fr.size != message.size()) {
    const std::string why = fr.status == codec::FrameStatus::kComplete
                                ? std::to_string(message.size() - fr.size) + " bytes after the message's CheckSum"
                                : std::string(codec::to_string(fr.error));
    fail(where + "framing/BodyLength/CheckSum: " + why);
    return;
  }
  codec::MessageView view;
  if (view.parse(message) != codec::ParseStatus::kOk) {
    fail(where + "does not parse");
    return;
  }
  std::uint64_t msg_seq = 0;
  if (!view.get_uint(codec::tag::kMsgSeqNum, msg_seq)) {
    fail(where + "no numeric 34 (MsgSeqNum)");
  } else if (stored_seq != 0 && msg_seq != stored_seq) {
    fail(where + "34=" + std::to_string(msg_seq) + " differs from the stored seq " + std::to_string(stored_seq));
  } else if (stored_seq == 0) {
    sequence(msg_seq, where);
  }
  const std::string type(view.msg_type());
  ++per_type_[type];
  if (type == counted_type_) ++orders_;
  if (type == "D") {
    if (view.get(453) != "2" || view.get(codec::tag::kSymbol) != ref::kSymbol) {
      fail(where + "seq " + std::to_string(msg_seq) + ": order fields (55, 453) are not the reference order's");
    }
  }
}

AuditResult MessageAudit::finish(const std::string& what, const std::string& checked,
                                 std::uint64_t expected_orders) const {
  AuditResult out;
  out.checked = records_;
  std::string detail = what + ": " + std::to_string(records_) + " messages (" +
                       detail::per_type_text(per_type_) + "), seqs " + std::to_string(first_seq_) + ".." +
                       std::to_string(last_seq_) + "; " + checked + " checked";
  if (failures_ != 0) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(failures_) + " failure(s), first: " + first_failure_;
  } else if (orders_ != expected_orders) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(orders_) + " 35=" + counted_type_ + " messages, expected " +
              std::to_string(expected_orders);
  } else {
    out.status = AuditResult::Status::kPass;
    detail += "; 35=" + counted_type_ + " count " + std::to_string(orders_) + " == expected";
  }
  out.detail = std::move(detail);
  return out;
}

// --------------------------------------------------- QuickFIX FileStore ---

AuditResult audit_quickfix_store(const fs::path& header_file, std::uint64_t expected_orders) {
  fs::path body_file = header_file;
  body_file.replace_extension(".body");
  std::ifstream hf(header_file);
  std::ifstream bf(body_file, std::ios::binary);
  if (!hf || !bf) {
    return AuditResult{AuditResult::Status::kFail, 0,
                       "QuickFIX FileStore " + header_file.string() + ": cannot read it or its .body"};
  }
  const std::string body((std::istreambuf_iterator<char>(bf)), std::istreambuf_iterator<char>());
  MessageAudit audit;
  std::string entry;
  while (hf >> entry) {
    std::uint64_t seq = 0, offset = 0, size = 0;
    if (std::sscanf(entry.c_str(), "%lu,%lu,%lu", &seq, &offset, &size) != 3) {
      audit.fail("header entry '" + entry + "' is not seq,offset,size");
      continue;
    }
    if (offset + size > body.size()) {
      audit.fail("seq " + std::to_string(seq) + ": record beyond the end of the body file");
      continue;
    }
    audit.check(std::string_view(body.data() + offset, size), seq, "seq " + std::to_string(seq) + ": ");
  }
  return audit.finish("QuickFIX FileStore " + header_file.string(), "framing/CheckSum, MsgSeqNum, contiguity",
                      expected_orders);
}

// ---------------------------------------------------------------- llfix ---

Expected<LlfixFileSummary> read_llfix_file(std::string_view bytes,
                                           const std::function<void(const LlfixRecord&)>& visit) {
  constexpr std::uint64_t kCount = 8;
  constexpr std::uint64_t kRecordHeader = 17;  // timestamp 8, success 1, msglen 8
  LlfixFileSummary s;
  s.size = bytes.size();
  if (s.size < kCount) {
    return Error{std::to_string(s.size) + " bytes: shorter than the 8-byte message count (truncated)"};
  }
  const std::uint64_t count = load_u64(bytes, 0);
  std::uint64_t at = kCount;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::string rec = "record " + std::to_string(k + 1) + " of " + std::to_string(count) + " at offset " +
                            std::to_string(at);
    if (s.size - at < kRecordHeader) {
      return Error{rec + ": its header runs past the end of the file (" + std::to_string(s.size) +
                   " bytes; truncated)"};
    }
    LlfixRecord r;
    r.offset = at;
    r.timestamp_ns = load_u64(bytes, at);
    r.success = static_cast<std::uint8_t>(bytes[at + 8]);
    const std::uint64_t length = load_u64(bytes, at + 9);
    if (length == 0 || length > s.size - at - kRecordHeader) {
      return Error{rec + ": message length " + std::to_string(length) + " runs past the end of the file (" +
                   std::to_string(s.size) + " bytes; truncated or a damaged length)"};
    }
    r.message = bytes.substr(at + kRecordHeader, length);
    visit(r);
    at += kRecordHeader + length;
    ++s.records;
  }
  s.used = at;
  // The writer appends a record, then raises the count: a record header
  // after the last counted one is a record the count does not cover.
  const std::uint64_t tail = std::min<std::uint64_t>(kRecordHeader, s.size - at);
  for (std::uint64_t i = 0; i < tail; ++i) {
    if (bytes[at + i] != 0) {
      return Error{"non-zero bytes at offset " + std::to_string(at) + ", after the last of the " +
                   std::to_string(count) + " counted records (a record the message count does not cover)"};
    }
  }
  return s;
}

bool is_llfix_journal(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (llfix_file_number(entry.path()) != 0) return true;
  }
  return false;
}

AuditResult audit_llfix_journal(const fs::path& dir, std::uint64_t expected_orders, const std::string& counted_type) {
  const std::string what = "llfix journal " + dir.string();
  std::vector<std::pair<std::uint64_t, fs::path>> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (const std::uint64_t n = llfix_file_number(entry.path()); n != 0) files.emplace_back(n, entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return AuditResult{AuditResult::Status::kFail, 0, what + ": no <n>.bin files"};

  MessageAudit audit(counted_type);
  std::uint64_t file_size = 0;
  std::uint64_t previous_ts = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [number, path] = files[i];
    const std::string name = path.filename().string();
    if (number != i + 1) {
      audit.fail(name + ": file " + std::to_string(i + 1) + ".bin is missing (files are numbered from 1, no gaps)");
      break;
    }
    auto mapped = MappedFile::open(path);
    if (!mapped) {
      audit.fail(mapped.error().message);
      continue;
    }
    const std::string_view bytes = mapped->bytes();
    if (i == 0) file_size = bytes.size();
    // The writer creates every file at the full size: any difference is
    // truncation or another writer's file.
    if (bytes.size() != file_size) {
      audit.fail(name + ": " + std::to_string(bytes.size()) + " bytes, " + files[0].second.filename().string() +
                 " has " + std::to_string(file_size) + " (every file is created at max_serialised_file_size)");
    }
    std::uint64_t k = 0;
    auto read = read_llfix_file(bytes, [&](const LlfixRecord& r) {
      ++k;
      const std::string where = name + " record " + std::to_string(k) + " (offset " + std::to_string(r.offset) + "): ";
      if (r.success != 1) {
        audit.fail(where + (r.success == 0 ? "llfix recorded its send() as failed"
                                           : "success byte " + std::to_string(r.success) + " is neither 0 nor 1"));
      }
      if (r.timestamp_ns == 0 || r.timestamp_ns < previous_ts) {
        audit.fail(where + "timestamp " + std::to_string(r.timestamp_ns) + " is zero or before the previous record's");
      }
      previous_ts = r.timestamp_ns;
      audit.check(r.message, 0, where);
    });
    if (!read) audit.fail(name + ": " + read.error().message);
  }
  return audit.finish(what + " (" + std::to_string(files.size()) + " file(s) of " + std::to_string(file_size) +
                          " bytes)",
                      "file numbering and size, record layout and zero tail, success byte, timestamp order, "
                      "framing/BodyLength/CheckSum, MsgSeqNum contiguity",
                      expected_orders);
}

}  // namespace hft::lab
