// manifest.sha256: the SHA-256 and size of every file a bench wrote into its
// output directory, written last, so that anyone can tell whether a result
// directory is the one the run left.
//
// Format (text, one file per two lines, sorted by relative path, bytewise;
// the manifest itself is not listed):
//
//   # hft-lab manifest v1: SHA-256 and size of every file under this directory
//   # check with: sha256sum -c manifest.sha256   or   hft-bench verify DIR
//   # size 18043 audit.json
//   9f0c...64 hex digits...  audit.json
//   # size 8064 series/r001-floor-busy-closed-default.rtt.hftraw
//   3b1a...  series/r001-floor-busy-closed-default.rtt.hftraw
//
// Hash lines are exactly sha256sum's ("<hex>  <path>", text mode), so GNU
// coreutils checks the hashes (it skips '#' lines); the "# size" comment
// before each carries the size in bytes, which hft-bench verify checks too.
// Paths are relative to the directory, '/'-separated; a path holding a
// newline or a backslash cannot be listed and is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"

namespace hft::lab {

inline constexpr const char* kManifestName = "manifest.sha256";

/// One listed file.
struct ManifestEntry {
  std::string path;      ///< relative, '/'-separated
  std::uint64_t size = 0;
  std::string sha256;    ///< 64 lowercase hex digits
};

/// SHA-256 of a file's bytes as 64 lowercase hex digits (OpenSSL EVP).
/// Error names the path.
[[nodiscard]] Expected<std::string> sha256_file(const std::filesystem::path& path);

/// Every regular file under `dir` (recursively) but `dir`/manifest.sha256,
/// as sorted relative paths. Error names a path that cannot be listed.
[[nodiscard]] Expected<std::vector<std::string>> list_output_files(const std::filesystem::path& dir);

/// Hashes every file under `dir` and writes `dir`/manifest.sha256 (replacing
/// one that is there). Returns the entries written.
[[nodiscard]] Expected<std::vector<ManifestEntry>> write_manifest(const std::filesystem::path& dir);

/// Parses `dir`/manifest.sha256. Errors name the manifest's line.
[[nodiscard]] Expected<std::vector<ManifestEntry>> read_manifest(const std::filesystem::path& dir);

/// Outcome of checking a directory against its manifest.
struct ManifestCheck {
  std::size_t listed = 0;              ///< entries in the manifest
  std::vector<std::string> problems;   ///< one line each, naming the file
};

/// Checks every listed file's size and SHA-256 and that no file under `dir`
/// is unlisted. Problems read "series/x.hftraw: SHA-256 differs from the
/// manifest", "series/x.csv: size 10 bytes, the manifest says 12",
/// "missing: x", "added: y" (not in the manifest). A manifest that cannot be
/// read is one problem.
[[nodiscard]] ManifestCheck check_manifest(const std::filesystem::path& dir);

}  // namespace hft::lab
