// Helpers shared by the store tests.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "hft/store/journal.hpp"
#include "support/temp_dir.hpp"

namespace hft::store::test {

/// A fresh directory under /tmp, removed with everything in it.
using TempDir = hft::test::TempDir;

inline JournalConfig small_config(const std::string& dir, std::size_t segment_size = 64 * 1024) {
  JournalConfig c;
  c.directory = dir;
  c.segment_size = segment_size;
  c.durability = Durability::kNone;
  c.rewarm_window = 0;
  return c;
}

/// Polls `cond` (an atomic read) until true or 10 s: a bounded wait on a
/// state change of another thread, not a sleep standing in for sync.
template <typename F>
bool wait_for(F cond) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

/// A deterministic FIX-looking message for `seq` of roughly `size` bytes.
inline std::string message_for(std::uint64_t seq, std::size_t size = 120) {
  std::string m = "8=FIX.4.4\x01" "35=D\x01" "34=" + std::to_string(seq) + "\x01" "11=ORD" + std::to_string(seq) + "\x01";
  while (m.size() + 7 < size) m += static_cast<char>('a' + static_cast<char>((seq + m.size()) % 26));
  m += "\x01" "10=000\x01";
  return m;
}

inline std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<std::string> segment_files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() == 12 && name.ends_with(".seg")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Collects replayed messages.
struct Collected {
  std::vector<std::uint64_t> seqs;
  std::vector<std::string> bytes;
  std::vector<std::uint8_t> flags;
};

inline ReplayResult replay_all(Journal& j, std::uint64_t begin, std::uint64_t end, Collected& out,
                               std::size_t max = 1'000'000) {
  return j.replay_each(begin, end, max, [&](const StoredMessage& m) {
    out.seqs.push_back(m.seq);
    out.bytes.emplace_back(m.bytes.data(), m.bytes.size());
    out.flags.push_back(m.flags);
    return true;
  });
}

/// Runs the journal's service duty cycles at time `now` until one does no
/// work (each cycle does a bounded piece: one zero-fill chunk, one unmap
/// chunk, ...). Returns the cycles that did work.
inline int settle(Journal& j, std::int64_t now) {
  int cycles = 0;
  while (cycles < 1'000'000 && j.maintain(now) > 0) ++cycles;
  return cycles;
}

/// Appends messages first..last (inclusive) with message_for().
inline void append_range(Journal& j, std::uint64_t first, std::uint64_t last, std::size_t size = 120) {
  for (std::uint64_t s = first; s <= last; ++s) {
    const std::string m = message_for(s, size);
    const StoreStatus st = j.append(s, static_cast<std::int64_t>(s) * 1000, {m.data(), m.size()});
    if (st != StoreStatus::kOk) std::abort();
  }
}

}  // namespace hft::store::test
