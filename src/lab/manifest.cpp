#include "hft/lab/manifest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <system_error>

#include "hft/lab/journal_audits.hpp"
#include "text.hpp"

namespace hft::lab {

namespace {

constexpr const char* kHeader =
    "# hft-lab manifest v1: SHA-256 and size of every file under this directory\n"
    "# check with: sha256sum -c manifest.sha256   or   hft-bench verify DIR\n";

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};

struct FileCloser {
  void operator()(std::FILE* f) const noexcept {
    if (f != nullptr) std::fclose(f);
  }
};

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Expected<std::string> sha256_file(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return Error{path.string() + ": cannot open to hash"};
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return Error{path.string() + ": cannot start SHA-256 (OpenSSL)"};
  }
  std::vector<unsigned char> buf(1 << 20);
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) {
    if (EVP_DigestUpdate(ctx.get(), buf.data(), n) != 1) return Error{path.string() + ": SHA-256 update failed"};
  }
  if (std::ferror(f.get()) != 0) return Error{path.string() + ": read failed while hashing"};
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md.data(), &len) != 1 || len != 32) {
    return Error{path.string() + ": SHA-256 final failed"};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned int k = 0; k < len; ++k) {
    hex.push_back(kHex[md[k] >> 4]);
    hex.push_back(kHex[md[k] & 0xF]);
  }
  return hex;
}

Expected<std::vector<std::string>> list_output_files(const std::filesystem::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec);
  if (ec) return Error{dir.string() + ": cannot list (" + ec.message() + ")"};
  for (const std::filesystem::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return Error{dir.string() + ": cannot list (" + ec.message() + ")"};
    if (it->is_directory(ec)) continue;
    const std::string rel = std::filesystem::relative(it->path(), dir, ec).generic_string();
    if (ec) return Error{it->path().string() + ": cannot make relative (" + ec.message() + ")"};
    if (rel == kManifestName) continue;
    // Emptied journal files of earlier runs (journal_audits.hpp): scratch, not output.
    if (rel.rfind(std::string(kEmptiedDir) + "/", 0) == 0) continue;
    if (rel.find_first_of("\n\\") != std::string::npos) {
      return Error{it->path().string() + ": a file name with a newline or backslash cannot be listed in " +
                   kManifestName};
    }
    files.push_back(rel);
  }
  if (ec) return Error{dir.string() + ": cannot list (" + ec.message() + ")"};
  std::sort(files.begin(), files.end());
  return files;
}

Expected<std::vector<ManifestEntry>> write_manifest(const std::filesystem::path& dir) {
  auto files = list_output_files(dir);
  if (!files) return files.error();
  std::vector<ManifestEntry> entries;
  std::string text = kHeader;
  for (const std::string& rel : *files) {
    ManifestEntry e;
    e.path = rel;
    std::error_code ec;
    e.size = std::filesystem::file_size(dir / rel, ec);
    if (ec) return Error{(dir / rel).string() + ": cannot stat (" + ec.message() + ")"};
    auto hash = sha256_file(dir / rel);
    if (!hash) return hash.error();
    e.sha256 = std::move(*hash);
    text += "# size " + std::to_string(e.size) + " " + rel + "\n" + e.sha256 + "  " + rel + "\n";
    entries.push_back(std::move(e));
  }
  if (auto e = detail::write_text_file(dir / kManifestName, text); !e) return e.error();
  return entries;
}

Expected<std::vector<ManifestEntry>> read_manifest(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kManifestName;
  detail::LineReader in(path);
  if (!in.is_open()) return Error{path.string() + ": missing or unreadable: the files cannot be checked"};
  std::vector<ManifestEntry> entries;
  std::map<std::string, std::uint64_t> sizes;
  std::string line;
  const auto fail = [&](const std::string& what) { return in.error(what); };
  while (in.next(line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# size ", 0) != 0) continue;
      const std::string rest = line.substr(7);
      const auto sp = rest.find(' ');
      if (sp == std::string::npos || sp == 0) return fail("expected '# size <bytes> <path>'");
      std::uint64_t size = 0;
      for (std::size_t k = 0; k < sp; ++k) {
        if (rest[k] < '0' || rest[k] > '9') return fail("size '" + rest.substr(0, sp) + "' is not a number");
        size = size * 10 + static_cast<std::uint64_t>(rest[k] - '0');
      }
      sizes[rest.substr(sp + 1)] = size;
      continue;
    }
    if (line.size() < 67 || line.compare(64, 2, "  ") != 0 || !is_hex64(line.substr(0, 64))) {
      return fail("expected '<64 hex digits>  <path>'");
    }
    ManifestEntry e;
    e.sha256 = line.substr(0, 64);
    e.path = line.substr(66);
    const auto s = sizes.find(e.path);
    if (s == sizes.end()) return fail(e.path + ": no '# size' line before it");
    e.size = s->second;
    entries.push_back(std::move(e));
  }
  return entries;
}

ManifestCheck check_manifest(const std::filesystem::path& dir) {
  ManifestCheck check;
  auto entries = read_manifest(dir);
  if (!entries) {
    check.problems.push_back(entries.error().message);
    return check;
  }
  check.listed = entries->size();
  std::set<std::string> listed;
  for (const ManifestEntry& e : *entries) {
    listed.insert(e.path);
    const std::filesystem::path p = dir / e.path;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) {
      check.problems.push_back("missing: " + e.path + " (listed in the manifest)");
      continue;
    }
    const std::uintmax_t size = std::filesystem::file_size(p, ec);
    if (ec) {
      check.problems.push_back(e.path + ": cannot stat (" + ec.message() + ")");
      continue;
    }
    if (size != e.size) {
      check.problems.push_back(e.path + ": size " + std::to_string(size) + " bytes, the manifest says " +
                               std::to_string(e.size));
    }
    auto hash = sha256_file(p);
    if (!hash) {
      check.problems.push_back(hash.error().message);
    } else if (*hash != e.sha256) {
      check.problems.push_back(e.path + ": SHA-256 differs from the manifest");
    }
  }
  auto files = list_output_files(dir);
  if (!files) {
    check.problems.push_back(files.error().message);
    return check;
  }
  for (const std::string& f : *files) {
    if (listed.count(f) == 0) check.problems.push_back("added: " + f + " (not in the manifest)");
  }
  return check;
}

}  // namespace hft::lab
