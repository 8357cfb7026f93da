// Settings text for qf-peer: the built-in conformance acceptor config and
// QuickFIX INI files with ${NAME} placeholders.
#pragma once

#include <map>
#include <set>
#include <string>

namespace qf_peer {

/// The ten-session acceptor of /work/shared/conformance/README.md: one port,
/// SenderCompID ISLD, ResetOnLogon, always open, validation against the
/// dictionaries in `spec_dir`. A non-empty `only_targets` (TargetCompIDs)
/// keeps just those sessions, to start faster; throws std::runtime_error
/// when it names a session the acceptor does not have.
std::string conformance_acceptor_settings(int port, const std::string& spec_dir,
                                          const std::set<std::string>& only_targets = {});

/// Reads `path` and replaces every ${NAME} outside comment lines by
/// `values[NAME]`. Throws std::runtime_error naming the file and line when
/// it cannot be read or a placeholder has no value.
std::string load_with_placeholders(const std::string& path, const std::map<std::string, std::string>& values);

/// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read
/// it back, release it). Throws std::runtime_error when no socket can be bound.
int pick_free_port();

/// Writes the port number to `path` through a temporary file and a rename,
/// so a reader never sees a partial number. Throws std::runtime_error on failure.
void write_port_file(const std::string& path, int port);

}  // namespace qf_peer
