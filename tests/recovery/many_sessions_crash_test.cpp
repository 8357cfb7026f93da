// Crash test of many sessions in one engine (issue 15): an initiator and an
// acceptor crash-peer, each ONE process with N sessions (CLIENT1..N <->
// VENUE on one port, each session with its own store under FileStorePath and
// its own log), every session streaming both ways at once, while one process
// is killed with SIGKILL and restarted. Every session of the killed process
// recovers at once (sequence numbers, tail scan of both journals), all N log
// on again and resynchronise. Then both stop cleanly and for EVERY session:
// both sides agree on the sequence numbers after the Logout, `hft-journal
// audit` passes on both stores, and per direction every message whose
// send_app returned kOk reached the other application exactly once, in
// order, with the seq it was sent as (the checker of crash_test.cpp, run per
// session; crash_support.hpp).
//
// Tests:
//   - the acceptor, then (another test) the initiator, killed at random
//     points, 1 or 2 times per trial;
//   - a side killed while every session of both sides is mid-stream
//     (each has accepted at least 50 of its 300 since the start and none its
//     END), so every session's recovery runs in one restart; trial 0 kills
//     the acceptor, trial 1 the initiator, alternately (HFT_MANY_CRASH_TRIALS
//     trials).
//
// The journals run with the engine's segment sizes (JournalSegmentSize 64M,
// JournalInitialSegmentSize 256K: a session's streams stay in its first
// segment); half the random trials start at 16K, so every journal grows and
// rotates mid-stream (16K, 32K, ...) and kills also land around rotations.
//
// Environment knobs: HFT_CRASH_SESSIONS (sessions per engine, default 100),
// HFT_MANY_CRASH_TRIALS (random trials per side, and mid-stream trials;
// default 1, the CTest entry labelled "long" runs 6),
// HFT_CRASH_SEED, HFT_CRASH_ONLY, HFT_CRASH_KEEP as in crash_test.cpp.
// Trial i of a side uses seed HFT_CRASH_SEED + 5000 (+1000 for the acceptor)
// + i; it picks the stream length, rate, stalls, kills and their times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "crash_support.hpp"

namespace {

using namespace hft::crash_test;

std::size_t sessions() {
  return static_cast<std::size_t>(env_u64("HFT_CRASH_SESSIONS", 100));
}

/// crash-peer --segment-size: the engine's JournalSegmentSize.
const char* const kSegmentSize = "default";

TrialPlan plan_many(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  TrialPlan p;
  p.seed = seed;
  p.sessions = n;
  // Per session and direction; N sessions multiply the engine's load.
  p.count = uniform(80, 200);
  p.rate = uniform(60, 200);
  // More sessions than 100 (HFT_CRASH_SESSIONS): at most 20,000 messages a
  // second per direction in all, what two processes on two cores sustain.
  p.rate = std::max<std::uint64_t>(1, std::min<std::uint64_t>(p.rate, 20000 / n));
  // A stall stops the whole engine (every session); scaled by N it comes as
  // often, in stream time, as in the one-session test.
  p.stall_every = uniform(20, 120) * n;
  p.stall_ms = uniform(2, 40);
  p.segment_size = kSegmentSize;
  const std::uint64_t stream_ms = p.count * 1000 / p.rate + p.count * n / p.stall_every * p.stall_ms;
  const std::uint64_t kills = uniform(0, 2) == 0 ? 2 : 1;
  // From logon (N sessions take longer to get there) to a little past the
  // streams' planned end; a second kill often lands in the resend phase.
  p.kill_after.emplace_back(uniform(100, 500 + stream_ms));
  p.down_for.emplace_back(uniform(0, 300));
  for (std::uint64_t k = 1; k < kills; ++k) {
    p.kill_after.emplace_back(uniform(50, 1500));
    p.down_for.emplace_back(uniform(0, 300));
  }
  p.next_expected = uniform(0, 1) == 1;
  if (uniform(0, 1) == 1) p.config_extra = "JournalInitialSegmentSize=16K\n";
  // Drawn last, so that the plans above stay those of earlier seeds: half
  // the trials journal every session of a process into one shared journal.
  if (uniform(0, 1) == 1) p.config_extra += "JournalLayout=shared\n";
  return p;
}

void run_random_trials(Victim victim) {
  const std::uint64_t seed = env_u64("HFT_CRASH_SEED", 20260501);
  const std::uint64_t base = seed + 5000 + (victim == Victim::kInitiator ? 0 : 1000);
  const std::uint64_t trials = env_u64("HFT_MANY_CRASH_TRIALS", 1);
  const std::uint64_t only = env_u64("HFT_CRASH_ONLY", UINT64_MAX);
  const bool keep = env_u64("HFT_CRASH_KEEP", 0) != 0;
  Tally total;
  for (std::uint64_t i = 0; i < trials; ++i) {
    if (only != UINT64_MAX && i != only) continue;
    SCOPED_TRACE("rerun with HFT_CRASH_SEED=" + std::to_string(seed) +
                 " HFT_CRASH_ONLY=" + std::to_string(i));
    total.add(run_one(victim, plan_many(base + i, sessions()), "many-trial-" + std::to_string(i), keep));
  }
  print_total(
      (std::to_string(sessions()) + " sessions, " + side_name(victim) + " killed at random points").c_str(),
      total);
}

TEST(ManySessionsCrashRecovery,
     acceptor_killed_at_random_points_every_session_delivers_every_accepted_message_once) {
  run_random_trials(Victim::kAcceptor);
}

TEST(ManySessionsCrashRecovery,
     initiator_killed_at_random_points_every_session_delivers_every_accepted_message_once) {
  run_random_trials(Victim::kInitiator);
}

void run_mid_stream_trials(const std::string& extra, const std::string& prefix) {
  const bool keep = env_u64("HFT_CRASH_KEEP", 0) != 0;
  const std::uint64_t trials = env_u64("HFT_MANY_CRASH_TRIALS", 1);
  Tally total;
  for (std::uint64_t i = 0; i < trials; ++i) {
    // Trial 0 (the default run) kills the acceptor, whose N sessions share
    // one listener and all reconnect at once; trial 1 the initiator, and so
    // on alternately.
    const Victim v = i % 2 == 0 ? Victim::kAcceptor : Victim::kInitiator;
    TrialPlan p;
    p.seed = 0;
    p.sessions = sessions();
    // Paced from each session's logon: N Logons take a while (seconds under
    // ASan or a loaded host), and sessions paced from the process's start
    // would catch up in one burst, some finishing before others begin. The
    // two sides of a session log on apart by up to the whole logon spread
    // (an initiator sends all N Logons before it reads an answer: 1.3 s for
    // 100 on a loaded host), so the streams last 3 s past it.
    p.pace_from_logon = true;
    p.count = 300;
    p.rate = std::max<std::size_t>(1, std::min<std::size_t>(100, 20000 / p.sessions));  // as plan_many
    p.stall_every = 50 * p.sessions;
    p.stall_ms = 20;
    p.segment_size = kSegmentSize;
    p.kill_after = {kMidStream};
    p.down_for = {milliseconds(100)};
    p.mid_stream_min = 50;
    p.config_extra = extra;
    total.add(run_one(v, p, prefix + std::to_string(i), keep));
  }
  print_total((std::to_string(sessions()) + " sessions" +
               (extra.empty() ? "" : " (" + extra.substr(0, extra.size() - 1) + ")") +
               ", killed while every session is mid-stream")
                  .c_str(),
              total);
}

// Every session holds traffic both ways when its process dies: on restart
// every session recovers its sequence numbers and cuts its journals' tails
// at once, all log on together and fill their gaps.
TEST(ManySessionsCrashRecovery, killed_while_every_session_is_mid_stream_every_session_recovers) {
  run_mid_stream_trials("", "mid-stream-");
}

// The same with every session of each process in one shared journal
// (JournalLayout=shared): on restart one scan of it recovers every
// session's numbers, and every session's stream audits like its own store.
TEST(ManySessionsCrashRecovery, killed_mid_stream_with_a_shared_journal_every_session_recovers) {
  run_mid_stream_trials("JournalLayout=shared\n", "shared-mid-stream-");
}

}  // namespace