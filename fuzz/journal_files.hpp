// The fuzz input of the journal targets: the files of a session store,
// written compactly so that a seed stays a few hundred bytes although a
// segment file is at least 16 KiB.
//
// The input is a series of chunks, each "HFTFILE" + a kind byte + a file
// byte, then the content up to the next "HFTFILE" (or the end):
//
//   kind 'S'        seqnums.dat (file byte ignored)
//   kind 'O' / 'I'  head of outbound/ or inbound/ segment number <file byte
//                   % 8 + 1>: written at offset 0; the file is then extended
//                   with zeros to the segment_size of its header when that is
//                   at most 1 MiB (so a segment can be written as its records
//                   alone)
//   kind 'o' / 'i'  tail of that segment: written so that it ends at the
//                   file's end (the index slots live there)
//
// write_store() lays the files out under a fresh directory and returns it.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

namespace hft::fuzz {

inline constexpr std::string_view kChunkMarker = "HFTFILE";

/// A scratch directory for this process, on tmpfs when there is one,
/// removed at exit. Never destroyed: the exit handler still reads it.
inline const std::string& scratch_root() {
  static const std::string* root = [] {
    const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    auto* templ = new std::string(std::string(base) + "/hft-fuzz-XXXXXX");
    if (::mkdtemp(templ->data()) == nullptr) std::abort();
    std::atexit([] { std::filesystem::remove_all(scratch_root()); });
    return templ;
  }();
  return *root;
}

inline std::string segment_name(unsigned number) {
  char name[32];
  std::snprintf(name, sizeof name, "%08u.seg", number);
  return name;
}

inline void write_at(const std::string& path, std::string_view bytes, bool at_end) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0) return;
  off_t offset = 0;
  if (at_end) {
    const off_t size = ::lseek(fd, 0, SEEK_END);
    offset = size > static_cast<off_t>(bytes.size()) ? size - static_cast<off_t>(bytes.size()) : 0;
  }
  (void)!::pwrite(fd, bytes.data(), bytes.size(), offset);
  if (!at_end && bytes.size() >= 40) {
    std::uint64_t declared = 0;
    std::memcpy(&declared, bytes.data() + 32, sizeof declared);
    if (declared > bytes.size() && declared <= (1u << 20))
      (void)!::ftruncate(fd, static_cast<off_t>(declared));
  }
  ::close(fd);
}

/// Writes the store the input describes into a fresh directory.
inline std::string write_store(std::string_view input) {
  const std::string dir = scratch_root() + "/store";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/outbound");
  std::filesystem::create_directories(dir + "/inbound");
  std::size_t at = input.find(kChunkMarker);
  while (at != std::string_view::npos && at + kChunkMarker.size() + 2 <= input.size()) {
    const char kind = input[at + kChunkMarker.size()];
    const unsigned number = static_cast<unsigned char>(input[at + kChunkMarker.size() + 1]) % 8 + 1;
    const std::size_t begin = at + kChunkMarker.size() + 2;
    const std::size_t next = input.find(kChunkMarker, begin);
    const std::string_view content =
        input.substr(begin, next == std::string_view::npos ? next : next - begin);
    switch (kind) {
      case 'S':
        write_at(dir + "/seqnums.dat", content, false);
        break;
      case 'O':
        write_at(dir + "/outbound/" + segment_name(number), content, false);
        break;
      case 'o':
        write_at(dir + "/outbound/" + segment_name(number), content, true);
        break;
      case 'I':
        write_at(dir + "/inbound/" + segment_name(number), content, false);
        break;
      case 'i':
        write_at(dir + "/inbound/" + segment_name(number), content, true);
        break;
      default:
        break;
    }
    at = next;
  }
  return dir;
}

}  // namespace hft::fuzz
