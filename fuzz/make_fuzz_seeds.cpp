// Writes the seed corpora that are made rather than written by hand:
// fuzz/corpus/session (operation scripts, see fuzz_session.cpp) and
// fuzz/corpus/journal_recovery + journal_reader (session stores written by
// the real JournalStore, in the compact form of journal_files.hpp).
//
//   make_fuzz_seeds <fuzz/corpus directory>
//
// Run by hand after a change of either input format; the files are committed.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "hft/store/message_store.hpp"
#include "journal_files.hpp"
#include "support/fix_text.hpp"

using namespace hft;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---------------------------------------------------------------- session

// "8=<begin>^9=<n>^<fields>10=<ck>^", '|' in `fields` standing for SOH.
std::string framed(std::string_view begin, std::string_view fields) {
  return hft::test::with_trailer(begin, hft::test::soh(fields));
}

// Operations of fuzz_session.cpp.
struct Script {
  std::string bytes;
  explicit Script(std::uint8_t config) { bytes += static_cast<char>(config); }
  Script& connect() { return op(0); }
  Script& disconnect() { return op(1); }
  Script& ticks(std::uint8_t n) { return op(2).raw_byte(n); }
  // type index: A 0, 0 1, 1 2, 2 3, 3 4, 4 5, 5 6, D 7, 8 8, j 9; delta -2..3.
  Script& msg(std::uint8_t type, int delta, std::uint8_t flags, const std::string& body) {
    op(3).raw_byte(type).raw_byte(static_cast<std::uint8_t>(delta + 2)).raw_byte(flags);
    return raw_byte(static_cast<std::uint8_t>(body.size())).text(body);
  }
  Script& split(std::uint8_t type, std::uint8_t flags, const std::string& body, std::uint8_t cut) {
    op(6).raw_byte(type).raw_byte(2).raw_byte(flags).raw_byte(static_cast<std::uint8_t>(body.size()));
    return text(body).raw_byte(cut);
  }
  Script& raw(const std::string& b) { return op(4).raw_byte(static_cast<std::uint8_t>(b.size())).text(b); }
  Script& app_send() { return op(5); }
  Script& logout() { return op(7); }

 private:
  Script& op(std::uint8_t o) { return raw_byte(o); }
  Script& raw_byte(std::uint8_t b) {
    bytes += static_cast<char>(b);
    return *this;
  }
  Script& text(const std::string& t) {
    bytes += t;
    return *this;
  }
};

const std::string kOrder = "11=A|21=1|55=IBM|54=1|60=20240315-12:00:00|40=1|";

void session_seeds(const fs::path& dir) {
  const std::string head = "49=TW|52=20240315-12:00:00.000|56=ISLD|";
  write_file(dir / "logon_order_logout", Script(0)
                                             .connect()
                                             .msg(0, 0, 0, "")
                                             .msg(1, 0, 0, "")
                                             .msg(2, 0, 0, "112=PING|")
                                             .msg(7, 0, 0, kOrder)
                                             .app_send()
                                             .ticks(100)
                                             .msg(6, 0, 0, "")
                                             .bytes);
  write_file(dir / "gap_resend_gap_fill", Script(0)
                                              .connect()
                                              .msg(0, 0, 0, "")
                                              .app_send()
                                              .app_send()
                                              .msg(7, 2, 0, kOrder)
                                              .msg(3, 0, 0, "7=1|16=0|")
                                              .msg(5, 0, 5, "36=6|")
                                              .msg(7, 0, 1, kOrder)
                                              .msg(2, 0, 0, "112=X|")
                                              .bytes);
  write_file(dir / "reset_on_logon_possdup", Script(2 | 4)
                                                 .connect()
                                                 .msg(0, 0, 2, "")
                                                 .msg(7, -1, 1, kOrder)
                                                 .msg(5, 0, 0, "36=20|")
                                                 .msg(4, 0, 0, "45=2|58=bad|")
                                                 .logout()
                                                 .msg(6, 0, 0, "")
                                                 .bytes);
  write_file(dir / "garbage_and_split", Script(0)
                                            .connect()
                                            .split(0, 0, "", 17)
                                            .raw("8=FIX.4.4\x01"
                                                 "9=99999999\x01"
                                                 "junk")
                                            .split(7, 0, kOrder, 40)
                                            .raw(framed("FIX.4.4", "35=1|" + head + "112=nosequence|"))
                                            .bytes);
  write_file(dir / "malformed_fields", Script(8)
                                           .connect()
                                           .msg(0, 0, 0, "")
                                           .raw(framed("FIX.4.4", "35=1|34=-1|" + head + "112=x|"))
                                           .msg(7, 0, 0, kOrder + "11garbled2=G|")
                                           .msg(7, 0, 0, kOrder + "0=x|")
                                           .msg(2, 0, 0, "112=|")
                                           .bytes);
  std::string many;
  for (int i = 0; i < 40; ++i) many += "58=x|";
  write_file(dir / "too_many_fields",
             Script(16).connect().msg(0, 0, 0, "").msg(7, 0, 0, kOrder + many).bytes);
  write_file(dir / "initiator_heartbeat_timeout", Script(32 | 1)
                                                      .connect()
                                                      .msg(0, 0, 0, "98=0|108=1|")
                                                      .ticks(30)
                                                      .msg(1, 0, 0, "")
                                                      .ticks(40)
                                                      .disconnect()
                                                      .connect()
                                                      .bytes);
  write_file(dir / "negative_heartbeat", Script(0).connect().msg(0, 0, 0, "98=0|108=-10|").bytes);
}

// ---------------------------------------------------------------- journals

// A file in the compact form: its head up to the run of zeros between the
// records and the index slots, and its tail (the slots) after that run.
std::string compact(char head_kind, char tail_kind, unsigned number, const std::string& file) {
  constexpr std::size_t kRun = 256;
  std::size_t run = file.find(std::string(kRun, '\0'));
  if (run == std::string::npos) run = file.size();
  std::size_t tail = run;
  while (tail < file.size() && file[tail] == '\0') ++tail;
  const char n = static_cast<char>(number - 1);
  std::string out = std::string(fuzz::kChunkMarker) + head_kind + n + file.substr(0, run);
  if (tail < file.size()) out += std::string(fuzz::kChunkMarker) + tail_kind + n + file.substr(tail);
  return out;
}

std::string compact_store(const fs::path& dir) {
  std::string out = std::string(fuzz::kChunkMarker) + "S" + '\0' + read_file(dir / "seqnums.dat");
  for (const auto& [sub, head, tail] : {std::tuple{"outbound", 'O', 'o'}, std::tuple{"inbound", 'I', 'i'}}) {
    for (unsigned n = 1; n <= 8; ++n) {
      const fs::path seg = dir / sub / fuzz::segment_name(n);
      if (fs::exists(seg)) out += compact(head, tail, n, read_file(seg));
    }
  }
  return out;
}

void store_seed(const fs::path& out, int messages, bool reset, bool torn) {
  const fs::path dir = fs::path(fuzz::scratch_root()) / "seed";
  fs::remove_all(dir);
  store::JournalStoreConfig c;
  c.directory = dir.string();
  c.journal.segment_size = store::kMinSegmentSize;
  c.journal.rewarm_window = 0;
  {
    auto s = store::JournalStore::open(c, nullptr, 1'710'504'000'000'000'000);
    if (!s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      std::exit(1);
    }
    for (int i = 0; i < messages; ++i) {
      if (reset && i == messages / 2) (void)(*s)->reset(1'710'504'100'000'000'000);
      const std::uint64_t seq = (*s)->next_sender_seq();
      const std::string m = framed(
          "FIX.4.4", "35=D|34=" + std::to_string(seq) + "|49=ISLD|52=20240315-12:00:00.000|56=TW|" + kOrder);
      const std::span<char> room = (*s)->claim(m.size());
      std::memcpy(room.data(), m.data(), m.size());
      (void)(*s)->commit(seq, 1'710'504'000'000'000'000 + i, 0, m.size());
      const std::uint64_t in = (*s)->next_target_seq();
      const std::string r =
          framed("FIX.4.4", "35=0|34=" + std::to_string(in) + "|49=TW|52=20240315-12:00:00.000|56=ISLD|");
      (void)(*s)->store_inbound(in, 1'710'504'000'000'000'000 + i, {r.data(), r.size()});
      (*s)->set_next_target_seq(in + 1);
    }
  }
  std::string seed = compact_store(dir);
  if (torn) seed.resize(seed.size() - 40);  // the last record cut short
  write_file(out, seed);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds <fuzz/corpus directory>\n");
    return 2;
  }
  const fs::path corpus = argv[1];
  session_seeds(corpus / "session");
  for (const char* target : {"journal_recovery", "journal_reader"}) {
    store_seed(corpus / target / "store_3_messages", 3, false, false);
    store_seed(corpus / target / "store_with_reset", 6, true, false);
    store_seed(corpus / target / "store_torn_tail", 4, false, true);
  }
  return 0;
}
