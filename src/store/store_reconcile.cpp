#include "store_reconcile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hft/store/journal.hpp"

namespace hft::store::detail {

namespace {

// A file of at most the sequence-number file's size holding only zeros.
bool empty_file(const std::string& path, const struct stat& st) {
  if (st.st_size == 0) return true;
  if (st.st_size > 4096) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  if (n != st.st_size) return false;
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] != 0) return false;
  return true;
}

// "the outbound journal" -> "outbound journal" (where a line starts with it).
std::string bare(const std::string& name) {
  return name.rfind("the ", 0) == 0 ? name.substr(4) : name;
}

}  // namespace

Expected<ReconcileOutput> reconcile_seqnums(const ReconcileInput& in, std::int64_t now_ns) {
  ReconcileOutput out;
  const std::string path = in.directory + "/seqnums.dat";
  const std::string& ob_name = in.outbound_name;
  const std::string& ib_name = in.inbound_name;
  struct stat st {};
  bool missing = ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
  if (!missing && S_ISREG(st.st_mode) && empty_file(path, st)) {
    // A creation whose data never reached the disk (a power loss right
    // after a new store was created without fsync): it says nothing, so it
    // is treated as missing and said so.
    out.warnings.push_back(path + ": empty (" + std::to_string(st.st_size) +
                           " bytes, all zero): a new file cut short by a crash; treated as missing");
    if (::unlink(path.c_str()) != 0)
      return Error{path + ": empty, and cannot be removed: " + std::strerror(errno)};
    missing = true;
  }
  if (missing && in.journals_used && !in.journal_inbound && in.last_out_before != 0) {
    // The outbound journal gives the next sender seq, but nothing gives the
    // next target seq: starting at 1 would have the peer resend the day.
    return Error{
        path + ": missing, and " + ib_name +
        " is off (journal_inbound): the next target MsgSeqNum "
        "cannot be recovered (" +
        ob_name + " holds up to seq " + std::to_string(in.last_out_before) +
        "); restore the file, or remove the store directory to start the session at 1 on both sides"};
  }
  auto opened = SeqNumStore::open(path, now_ns, true, in.session_identity, in.sync_new_files);
  if (!opened) return opened.error();
  out.seqnums = std::make_unique<SeqNumStore>(std::move(*opened));
  SeqNumStore& seq = *out.seqnums;
  out.created = missing;
  out.file_next_sender = missing ? 0 : seq.next_sender_seq();
  out.file_next_target = missing ? 0 : seq.next_target_seq();
  out.file_epoch = missing ? 0 : seq.epoch();

  auto levelled = in.level(seq);
  if (!levelled) return levelled.error();
  const std::uint64_t ob_last = levelled->last_out;
  const std::uint64_t ib_last = levelled->last_in;

  // The journals are the truth, the file a cache of them. The outbound
  // journal holds the last seq used for certain; the file may lag it by one
  // message (a crash between the journal commit and the file update, or a
  // torn slot). The inbound journal holds the accepted stream in sequence
  // (Session::verify), but a received message is journaled before the
  // application sees it, so its last seq may be one ahead of what was
  // processed: while the file is trusted, next_target_seq keeps the file's
  // value, and a crash costs a PossDup resend, never a lost message.
  //
  // A file that is missing, or further behind the journals than that one
  // message (an old copy restored from a backup, a file of an earlier run),
  // is not trusted: both numbers come from the journals. The next target
  // is then the inbound journal's last seq + 1, which loses at most the one
  // message that was journaled but not yet processed when the process died;
  // a SequenceReset the journal holds without its NewSeqNo gives a lower
  // target, and the peer resends what follows with PossDupFlag=Y.
  const std::uint64_t ob_next = ob_last + 1;
  const std::uint64_t ib_next = in.journal_inbound ? ib_last + 1 : 0;
  const std::uint64_t file_sender = seq.next_sender_seq();
  const std::uint64_t file_target = seq.next_target_seq();
  const bool sender_stale = ob_next > file_sender + 1;
  const bool target_stale = in.journal_inbound && ib_next > file_target + 1;
  // A file whose epoch was behind has just been reset to 1/1 above: the
  // journals of the new epoch are normally empty then, and if they are not
  // (the reset was done and traffic followed, and then the file was lost or
  // replaced by an older copy) they are the truth like any other time.
  const bool distrust = (missing && in.journals_used) || (!missing && (sender_stale || target_stale));
  if (!missing && !in.journal_inbound && sender_stale) {
    return Error{
        path + ": older than " + ob_name + " (next sender seq " + std::to_string(file_sender) +
        ", the journal holds up to seq " + std::to_string(ob_last) + ") and " + ib_name +
        " is off (journal_inbound): the next target MsgSeqNum cannot be "
        "recovered; restore the current file, or remove the store directory to start the session at 1 "
        "on both sides"};
  }
  std::uint64_t sender = file_sender;
  std::uint64_t target = file_target;
  if (distrust) {
    sender = std::max(file_sender, ob_next);
    if (in.journal_inbound) target = std::max(file_target, ib_next);
    out.recovered = true;
  } else if (ob_last != 0) {
    sender = std::max(sender, ob_next);
  }
  if (sender != seq.next_sender_seq() || target != seq.next_target_seq()) seq.set(sender, target);
  out.next_sender = sender;
  out.next_target = target;

  if (missing && in.journals_used) {
    out.warnings.push_back(path + ": missing, recovered from the journals: epoch " +
                           std::to_string(seq.epoch()) + ", next sender seq " + std::to_string(sender) +
                           " (" + bare(ob_name) + "'s last " + std::to_string(ob_last) +
                           " + 1), next target seq " + std::to_string(target) + " (" + bare(ib_name) +
                           "'s last " + std::to_string(ib_next - 1) + " + 1)");
  } else if (out.recovered) {
    out.warnings.push_back(
        path + ": older than the journals (generation " + std::to_string(seq.generation()) +
        ": next sender seq " + std::to_string(file_sender) + ", next target seq " +
        std::to_string(file_target) + "; the journals hold up to sender seq " + std::to_string(ob_last) +
        ", target seq " + std::to_string(ib_next - 1) + "): recovered from the journals: next sender seq " +
        std::to_string(sender) + ", next target seq " + std::to_string(target));
  } else if (!missing && sender != file_sender) {
    out.warnings.push_back(path + ": next sender seq raised from " + std::to_string(file_sender) + " to " +
                           std::to_string(sender) + ": " + ob_name + " holds seq " + std::to_string(ob_last) +
                           " (the file was not updated after it, e.g. a crash)");
  }
  if (!missing && ob_last + 1 < sender) {
    // The file knew of messages the journal no longer holds (a repair, or
    // a segment file removed or emptied while the engine was stopped).
    const std::string line = bare(ob_name) + " ends at seq " + std::to_string(ob_last) + " but " + path +
                             " says next sender seq " + std::to_string(sender) + ": seqs " +
                             std::to_string(ob_last + 1) + ".." + std::to_string(sender - 1) + " (" +
                             std::to_string(sender - 1 - ob_last) +
                             " messages) are lost; a ResendRequest for them is answered with a gap fill";
    out.warnings.push_back(line);
    if (!in.repair_directory.empty()) {
      if (auto logged = append_repair_log(in.repair_directory, line); !logged) return logged.error();
    }
  }
  return out;
}

}  // namespace hft::store::detail
