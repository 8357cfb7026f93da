// A session store's sequence-number file reconciled with its journal(s):
// the rules of docs/journal.md, "Store consistency", shared by JournalStore
// (a journal per direction) and SharedStore (a stream of a shared journal).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/store/seqnum_store.hpp"

namespace hft::store::detail {

/// What the journal(s) hold of the session after the epochs are level.
struct JournalTail {
  std::uint64_t last_out = 0;  ///< last replayable outbound seq of the epoch (0: none)
  std::uint64_t last_in = 0;   ///< last inbound seq of the epoch (0: none, or not journaled)
};

struct ReconcileInput {
  std::string directory;  ///< holds seqnums.dat
  std::uint64_t session_identity = 0;
  bool sync_new_files = true;
  bool journal_inbound = true;
  /// The journals hold anything at all (any epoch): a store in use.
  bool journals_used = false;
  /// Last outbound seq before the epochs are levelled (for the error when
  /// the file is missing and nothing gives the next target seq).
  std::uint64_t last_out_before = 0;
  /// How the journals are named in warnings ("the outbound journal" ...).
  std::string outbound_name = "the outbound journal";
  std::string inbound_name = "the inbound journal";
  /// Where a line about lost messages is appended (repairs.log); empty: nowhere.
  std::string repair_directory;
  /// Brings the file's epoch and the journals' level (reset() writes the
  /// journals first, then the file) and says what the journals then hold.
  std::function<Expected<JournalTail>(SeqNumStore&)> level;
};

struct ReconcileOutput {
  std::unique_ptr<SeqNumStore> seqnums;
  bool created = false;    ///< seqnums.dat did not exist
  bool recovered = false;  ///< ... or was older than the journals: numbers from the journals
  std::uint64_t file_next_sender = 0, file_next_target = 0, file_epoch = 0;  ///< as found (0: missing)
  std::uint64_t next_sender = 0, next_target = 0;
  std::vector<std::string> warnings;
};

[[nodiscard]] Expected<ReconcileOutput> reconcile_seqnums(const ReconcileInput& in, std::int64_t now_ns);

}  // namespace hft::store::detail
