#include "metatf/core/big_memory.hpp"

#include <algorithm>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace metatf::rt::detail {

void* allocate_big(std::size_t bytes) {
    void* p = nullptr;
    if (bytes < huge_page) {
        p = std::malloc(std::max<std::size_t>(bytes, 1));
    } else if (bytes <= static_cast<std::size_t>(-1) - huge_page) {
        const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
        p = std::aligned_alloc(huge_page, rounded);
#if defined(MADV_HUGEPAGE)
        // Only a hint: memory the system leaves in small pages is as good.
        if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    }
    if (!p) throw std::bad_alloc();
    return p;
}

void free_big(void* p) noexcept { std::free(p); }

}  // namespace metatf::rt::detail
