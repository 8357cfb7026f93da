#include "hft/core/byte_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define HFT_BLOCK_HEAP_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HFT_BLOCK_HEAP_ONLY 1
#endif
#endif

namespace hft::core::detail {

namespace {

[[noreturn]] void out_of_memory() {
#if defined(__cpp_exceptions)
  throw std::bad_alloc();
#else
  std::abort();  // as operator new does without exceptions
#endif
}

}  // namespace

#if defined(HFT_BLOCK_HEAP_ONLY)
// Under AddressSanitizer, blocks come from the heap so that a read or write
// past their end is reported (ASan does not guard mapped memory).
constexpr bool kMapLarge = false;
#else
constexpr bool kMapLarge = true;
#endif

Block::Block(std::size_t bytes, BlockFill fill) : bytes_(bytes) {
  if (bytes == 0) return;
  if (fill == BlockFill::kResident || (kMapLarge && bytes >= kMapThreshold)) {
    const int populate = fill == BlockFill::kResident ? MAP_POPULATE : 0;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
    if (p == MAP_FAILED) out_of_memory();
    data_ = p;
    mapped_ = true;
    return;
  }
  data_ = fill == BlockFill::kZero ? std::calloc(1, bytes) : std::malloc(bytes);
  if (data_ == nullptr) out_of_memory();
}

void Block::release() noexcept {
  if (data_ == nullptr) return;
  if (mapped_) {
    ::munmap(data_, bytes_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
}

}  // namespace hft::core::detail
