// Events lined up with a run's calls, the attribution of long calls, the
// events file, and the timed thread's OS counters.
#include "hft/lab/events.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "hft/core/clock.hpp"
#include "hft/lab/thread_counters.hpp"
#include "support/temp_dir.hpp"

namespace hft::lab {
namespace {

// A series in ticks of 1 GHz (1 tick = 1 ns): calls at `starts` lasting `durations`.
Series series_of(std::vector<std::int64_t> starts, std::vector<std::int64_t> durations) {
  Series s;
  s.name = "tx";
  s.unit = Unit::kTscTicks;
  s.ticks_per_second = 1e9;
  s.time = std::move(starts);
  s.values = std::move(durations);
  return s;
}

RunEvent event(const char* source, const char* kind, std::int64_t begin, std::int64_t end,
               std::uint64_t a = 0) {
  RunEvent e;
  e.source = source;
  e.kind = kind;
  e.thread = "t";
  e.begin = begin;
  e.end = end;
  e.a = a;
  return e;
}

TEST(Attribution, lists_the_events_overlapping_each_call_at_or_above_the_threshold) {
  // Calls: 0 short; 1 long [1000, 201000]; 2 long [500000, 1500000]; 3 long [3e6, 3.1e6].
  const Series s = series_of({0, 1000, 500'000, 3'000'000}, {500, 200'000, 1'000'000, 100'000});
  std::vector<RunEvent> events{
      event("venue", "rotate", 100, 200),             // before call 1 only, inside call 0's time
      event("client", "prefault", 150'000, 160'000),  // inside call 1
      event("venue", "zero_fill", 200'000, 600'000),  // spans the end of 1 and the start of 2
      event("os", "involuntary_switches", -5'000'000, 1'000'000, 1),  // long, begins before everything
      event("client", "unmap", 2'000'000, 2'000'000),                 // a point between 2 and 3
      event("venue", "rotate", 3'100'000, 3'100'000),                 // a point at call 3's last tick
  };
  sort_events(events);
  const Attribution a = attribute_long_calls(s, events, 100'000);
  ASSERT_EQ(a.calls.size(), 3u) << "100 us is 'at or above'";
  EXPECT_EQ(a.calls[0].index, 1u);
  EXPECT_EQ(a.calls[1].index, 2u);
  EXPECT_EQ(a.calls[2].index, 3u);
  const auto keys = [&](const LongCall& c) {
    std::vector<std::string> k;
    for (const std::size_t i : c.events) k.push_back(event_key(events[i]));
    return k;
  };
  EXPECT_EQ(keys(a.calls[0]),
            (std::vector<std::string>{"os:involuntary_switches", "client:prefault", "venue:zero_fill"}));
  EXPECT_EQ(keys(a.calls[1]), (std::vector<std::string>{"os:involuntary_switches", "venue:zero_fill"}));
  EXPECT_EQ(keys(a.calls[2]), (std::vector<std::string>{"venue:rotate"}));
  EXPECT_EQ(a.unattributed, 0u);
  EXPECT_EQ(a.calls_by_kind.at("venue:zero_fill"), 2u);
  EXPECT_EQ(a.calls_by_kind.at("venue:rotate"), 1u);
  EXPECT_EQ(a.calls_by_kind.count("client:unmap"), 0u);
}

TEST(Attribution, counts_long_calls_without_any_event) {
  const Series s = series_of({0, 1'000'000}, {150'000, 150'000});
  const std::vector<RunEvent> events{event("venue", "rotate", 500'000, 600'000)};
  const Attribution a = attribute_long_calls(s, events, 100'000);
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.unattributed, 2u);
  EXPECT_TRUE(a.calls_by_kind.empty());
}

TEST(Attribution, counts_every_long_call_but_lists_only_the_longest_and_a_bounded_number_of_events_each) {
  // Five long calls (durations 200, 500, 300, 900, 150 us) and a point event
  // inside call 0 and 150 events all inside call 3.
  const Series s = series_of({0, 1'000'000, 2'000'000, 3'000'000, 5'000'000},
                             {200'000, 500'000, 300'000, 900'000, 150'000});
  std::vector<RunEvent> events{event("venue", "rotate", 10'000, 10'000)};
  for (std::int64_t k = 0; k < 150; ++k) events.push_back(event("os", "minor_faults", 3'000'000 + k, 3'000'000 + k, 1));
  sort_events(events);
  const Attribution a = attribute_long_calls(s, events, 100'000, /*max_listed=*/2);
  EXPECT_EQ(a.long_calls, 5u);
  EXPECT_EQ(a.unattributed, 3u) << "calls 1, 2 and 4 overlap nothing";
  EXPECT_EQ(a.calls_by_kind.at("venue:rotate"), 1u) << "counted though call 0 is not listed";
  EXPECT_EQ(a.calls_by_kind.at("os:minor_faults"), 1u);
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[0].index, 1u) << "the two longest (500 and 900 us), in call order";
  EXPECT_EQ(a.calls[1].index, 3u);
  EXPECT_EQ(a.calls[1].overlapping, 150u);
  EXPECT_EQ(a.calls[1].events.size(), hft::lab::kMaxEventsPerCall);
  EXPECT_EQ(a.calls[1].kinds, (std::vector<std::string>{"os:minor_faults"}));
}

TEST(Attribution, a_series_without_start_times_has_no_calls_to_attribute) {
  Series s = series_of({}, {500'000});
  EXPECT_TRUE(attribute_long_calls(s, {event("venue", "rotate", 0, 1)}).calls.empty());
}

TEST(EventsFile, round_trips_every_field) {
  test::TempDir dir;
  RunEvents e;
  e.traced = true;
  e.dropped = 3;
  e.sources = {"client engine", "os counters"};
  e.events = {event("os", "minor_faults", -20, 40, 7), event("venue", "rotate", 100, 250)};
  e.events[1].b = 67108864;
  const auto path = std::filesystem::path(dir.sub("r.events.csv"));
  ASSERT_TRUE(write_events_csv(path, e, 2.5e9));
  double hz = 0;
  auto back = read_events_csv(path, &hz);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(hz, 2.5e9);
  EXPECT_EQ(back->dropped, 3u);
  EXPECT_EQ(back->sources, e.sources);
  ASSERT_EQ(back->events.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(back->events[k].source, e.events[k].source);
    EXPECT_EQ(back->events[k].kind, e.events[k].kind);
    EXPECT_EQ(back->events[k].thread, e.events[k].thread);
    EXPECT_EQ(back->events[k].begin, e.events[k].begin);
    EXPECT_EQ(back->events[k].end, e.events[k].end);
    EXPECT_EQ(back->events[k].a, e.events[k].a);
    EXPECT_EQ(back->events[k].b, e.events[k].b);
  }
}

TEST(EventsFile, a_damaged_file_is_an_error_naming_the_line) {
  test::TempDir dir;
  const auto path = std::filesystem::path(dir.sub("bad.events.csv"));
  {
    std::ofstream(path)
        << "# hft-lab events, csv v1\nsource,kind,thread,begin,end,a,b\nvenue,rotate,t,10,x,0,0\n";
  }
  auto r = read_events_csv(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("bad.events.csv:3: a number field is not a number"), std::string::npos)
      << r.error().message;
  {
    std::ofstream(path)
        << "# hft-lab events, csv v1\nsource,kind,thread,begin,end,a,b\nvenue,rotate,t,10,5,0,0\n";
  }
  r = read_events_csv(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(":3: end before begin"), std::string::npos) << r.error().message;
  { std::ofstream(path) << "index,value\n1,2\n"; }
  r = read_events_csv(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not an events file"), std::string::npos) << r.error().message;
  EXPECT_FALSE(read_events_csv(dir.sub("missing.csv")));
}

TEST(ThreadCounters, a_window_with_page_faults_is_an_os_event) {
  ThreadCounterSampler sampler(16);
  const std::uint64_t origin = core::rdtsc();
  sampler.start(origin);
  sampler.sample(core::rdtsc());  // most likely nothing happened
  // Fresh anonymous pages, each first written here: minor faults on this thread.
  constexpr std::size_t kBytes = 64 * 4096;
  void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  const std::uint64_t before = core::rdtsc();
  std::memset(p, 1, kBytes);
  const std::uint64_t after = core::rdtsc();
  sampler.sample(after);
  ::munmap(p, kBytes);
  const std::vector<RunEvent> events = sampler.events(origin, "tx-client");
  const RunEvent* faults = nullptr;
  for (const RunEvent& e : events) {
    if (e.kind == "minor_faults" && e.end == static_cast<std::int64_t>(after - origin)) faults = &e;
  }
  ASSERT_NE(faults, nullptr) << "the window holding the writes";
  EXPECT_GE(faults->a, 60u)
      << "one fault per page, at least (fault-around does not apply to anonymous writes)";
  EXPECT_LE(faults->begin, static_cast<std::int64_t>(before - origin));
  EXPECT_EQ(faults->source, "os");
  EXPECT_EQ(faults->thread, "tx-client");
  EXPECT_EQ(sampler.samples(), 2u);
  EXPECT_EQ(sampler.dropped(), 0u);
}

TEST(ThreadCounters, a_window_starts_after_the_previous_sample_so_it_never_overlaps_the_call_before) {
  ThreadCounterSampler sampler(16);
  sampler.start(1000);
  std::vector<std::uint64_t> ends;
  for (std::uint64_t k = 0; k < 2; ++k) {
    void* p = ::mmap(nullptr, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 1, 8 * 4096);
    ::munmap(p, 8 * 4096);
    ends.push_back(2000 + 1000 * k);
    sampler.sample(ends.back());
  }
  std::vector<const RunEvent*> faults;
  const std::vector<RunEvent> events = sampler.events(0, "t");
  for (const RunEvent& e : events) {
    if (e.kind == "minor_faults") faults.push_back(&e);
  }
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0]->begin, 1001);
  EXPECT_EQ(faults[0]->end, 2000);
  EXPECT_EQ(faults[1]->begin, 2001) << "a call ending at 2000 is not in the second window";
  EXPECT_EQ(faults[1]->end, 3000);
}

TEST(ThreadCounters, a_full_array_drops_and_counts) {
  ThreadCounterSampler sampler(1);
  sampler.start(core::rdtsc());
  std::uint64_t changed = 0;
  for (int k = 0; k < 3; ++k) {
    void* p = ::mmap(nullptr, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 1, 4 * 4096);
    ::munmap(p, 4 * 4096);
    sampler.sample(core::rdtsc());
    ++changed;
  }
  EXPECT_EQ(sampler.dropped(), changed - 1);
  EXPECT_FALSE(sampler.events(0, "t").empty());
}

}  // namespace
}  // namespace hft::lab
