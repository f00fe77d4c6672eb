// Memory for the runtime's big arrays: decoded chunks, live pools and the
// predictors' context tables, megabytes that are filled once and then read
// at random. From 2 MiB up they are 2 MiB-aligned and ask the system for
// transparent huge pages: a 16 MiB chunk then costs 8 page faults rather
// than 4,096, and a random walk over a pool one TLB entry per 2 MiB. Where
// huge pages are off, the memory is the same, in small pages.
#pragma once

#include <cstddef>
#include <new>

namespace metatf::rt::detail {

inline constexpr std::size_t huge_page = std::size_t(2) << 20;

// `bytes` of uninitialized memory, for free_big(); throws std::bad_alloc.
void* allocate_big(std::size_t bytes);
void free_big(void* p) noexcept;

struct BigFree {
    void operator()(void* p) const noexcept { free_big(p); }
};

// The allocator of vectors that may grow big.
template <typename T>
struct BigAllocator {
    using value_type = T;
    BigAllocator() = default;
    template <typename U>
    BigAllocator(const BigAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(allocate_big(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t) noexcept { free_big(p); }
    friend bool operator==(const BigAllocator&, const BigAllocator&) { return true; }
};

}  // namespace metatf::rt::detail
