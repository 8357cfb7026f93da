#include "support/openssl_alloc_counter.hpp"

#include <malloc.h>
#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>

namespace {
thread_local std::uint64_t g_allocations = 0;
std::atomic<std::int64_t> g_live{0};

void* counting_malloc(std::size_t n, const char*, int) {
  ++g_allocations;
  void* p = std::malloc(n);
  if (p != nullptr) g_live.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  return p;
}
void* counting_realloc(void* p, std::size_t n, const char*, int) {
  ++g_allocations;
  const auto before = p != nullptr ? static_cast<std::int64_t>(malloc_usable_size(p)) : 0;
  void* q = std::realloc(p, n);
  if (q != nullptr || n == 0) {
    g_live.fetch_add((q != nullptr ? static_cast<std::int64_t>(malloc_usable_size(q)) : 0) - before,
                     std::memory_order_relaxed);
  }
  return q;
}
void counting_free(void* p, const char*, int) {
  if (p == nullptr) return;
  g_live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}
const bool g_installed = CRYPTO_set_mem_functions(counting_malloc, counting_realloc, counting_free) == 1;
}  // namespace

namespace hft::test {
std::uint64_t openssl_allocations() noexcept { return g_allocations; }
std::int64_t openssl_live_bytes() noexcept { return g_live.load(std::memory_order_relaxed); }
bool openssl_allocations_counted() noexcept { return g_installed; }
}  // namespace hft::test
