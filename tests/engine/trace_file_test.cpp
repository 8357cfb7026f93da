// Trace files: what hft-venue --trace-file writes and the lab reads.
#include "hft/engine/trace_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "hft/core/cpu.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

TEST(TraceFile, writes_the_drained_records_with_thread_names_and_reads_them_back) {
  test::TempDir dir;
  ASSERT_TRUE(core::trace::enable(256));
  core::trace::emit(core::TraceKind::kRotate, 1000, 2500, 3, 64 << 20);
  std::thread named([] {
    core::name_current_thread("hft-journal");
    core::trace::emit(core::TraceKind::kPrefault, 1200, 1300, 4, 2 << 20);
    // Written while the thread is alive: its name is read from /proc.
  });
  named.join();
  std::thread alive([&] {
    core::name_current_thread("x,y");
    core::trace::emit_point(core::TraceKind::kSpareMissing, 9);
    const auto written = write_trace_file(dir.sub("venue.trace"));
    ASSERT_TRUE(written) << written.error().message;
    EXPECT_EQ(*written, 3u);
  });
  alive.join();
  core::trace::disable();
  auto f = read_trace_file(dir.sub("venue.trace"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->dropped, 0u);
  EXPECT_GE(f->recorded, 3u);
  ASSERT_EQ(f->records.size(), 3u);
  EXPECT_EQ(f->records[0].record.kind, core::TraceKind::kRotate);
  EXPECT_EQ(f->records[0].record.begin, 1000u);
  EXPECT_EQ(f->records[0].record.end, 2500u);
  EXPECT_EQ(f->records[0].record.a, 3u);
  EXPECT_EQ(f->records[0].record.b, 64u << 20);
  EXPECT_FALSE(f->records[0].thread.empty()) << "this thread is alive: named";
  EXPECT_EQ(f->records[1].record.kind, core::TraceKind::kPrefault);
  EXPECT_EQ(f->records[1].thread, "") << "that thread had gone when the file was written";
  EXPECT_EQ(f->records[2].thread, "x_y") << "a comma in a name would break the columns";
}

TEST(TraceFile, a_damaged_file_is_an_error_naming_the_line) {
  test::TempDir dir;
  const std::string path = dir.sub("t.trace");
  std::ofstream(path) << "# hft-trace 1\n# recorded 1 dropped 0\nkind,tid,thread,begin_tsc,end_tsc,a,b\n"
                         "rotation,1,t,1,2,0,0\n";
  auto f = read_trace_file(path);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("t.trace:4: unknown kind 'rotation'"), std::string::npos)
      << f.error().message;
  std::ofstream(path) << "# hft-trace 1\nkind,tid,thread,begin_tsc,end_tsc,a,b\nrotate,1,t,5,2,0,0\n";
  f = read_trace_file(path);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find(":3: end_tsc before begin_tsc"), std::string::npos) << f.error().message;
  std::ofstream(path) << "hello\n";
  EXPECT_FALSE(read_trace_file(path));
  EXPECT_FALSE(read_trace_file(dir.sub("none")));
}

}  // namespace
}  // namespace hft::engine
