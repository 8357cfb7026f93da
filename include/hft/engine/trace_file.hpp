// Trace files: the records of the event trace (hft/core/trace.hpp) written
// out by a program (hft-venue --trace-file) and read back by the lab.
//
// Text, one record a line, TSC ticks as they were stamped:
//
//   # hft-trace 1
//   # recorded 1234 dropped 0
//   kind,tid,thread,begin_tsc,end_tsc,a,b
//   rotate,4711,hft-journal,183004711220,183004719008,3,67108864
//
// `thread` is the thread's name when it was written ("" if it had gone).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/core/trace.hpp"

namespace hft::engine {

/// One record of a trace file.
struct TraceFileRecord {
  core::TraceRecord record;
  std::string thread;  ///< name of the thread (tid) when the file was written
};

/// What a trace file holds.
struct TraceFile {
  std::uint64_t recorded = 0;  ///< records emitted by the program (all of them, drained or not)
  std::uint64_t dropped = 0;   ///< records lost because the ring was full
  std::vector<TraceFileRecord> records;
};

/// The name of this process's thread `tid` (/proc/self/task/<tid>/comm),
/// commas and quotes made '_' so it is one CSV field; "" if it has gone.
[[nodiscard]] std::string thread_name(std::uint32_t tid);

/// Drains the process's trace (core::trace::drain) and writes every record
/// to `path` (replaced atomically: written to `path`.tmp, then renamed),
/// naming each thread from /proc/self/task/<tid>/comm. Error names the path.
[[nodiscard]] Expected<std::size_t> write_trace_file(const std::string& path);

/// Reads a file write_trace_file wrote. Error names the path and the line.
[[nodiscard]] Expected<TraceFile> read_trace_file(const std::string& path);

}  // namespace hft::engine
