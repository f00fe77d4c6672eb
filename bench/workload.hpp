// A synthetic heap-allocation workload, the same for every benchmark: sizes
// skewed small, a bump allocator whose freed blocks are reused LIFO by size
// class, objects that mostly die young, and an allocation clock as time.
// Deterministic for a given seed: splitmix64 and plain arithmetic, no std
// distributions (whose output differs between standard libraries).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <vector>

namespace bench {

enum class Kind : std::uint8_t { alloc, free, realloc };

// One event. A realloc is HATF's reallocAllocFree: `size` bytes at
// `new_address` replace the block at `address`.
struct Event {
    Kind kind = Kind::alloc;
    std::uint32_t size = 0;
    std::uint64_t address = 0;
    std::uint64_t new_address = 0;
    std::uint64_t time = 0;  // alloc records so far (the alloc clock); realistic_workload.hpp: nanoseconds
    std::uint32_t thread = 0;  // realistic_workload.hpp only: the thread's id
};

inline constexpr std::uint64_t heap_base = 0x10000000;

// The compact encoding stores alloc addresses as deltas in 2 signed bytes; the
// allocator keeps consecutive alloc addresses this close.
inline constexpr std::int64_t address_reach = 30000;

class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {  // splitmix64
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>(unit() * static_cast<double>(n)); }

private:
    std::uint64_t state_;
};

struct WorkloadStats {
    std::size_t allocs = 0, frees = 0, reallocs = 0, reused = 0;
    std::uint64_t heap_top = 0;
};

inline std::vector<Event> make_workload(std::size_t count, std::uint64_t seed, WorkloadStats* stats = nullptr) {
    constexpr std::uint32_t max_size = 16384;
    // Freed blocks this far below the top are reused; with sizes of at most
    // max_size, every alloc address is then within address_reach of the last.
    constexpr std::uint64_t reuse_window = 12288;
    Rng rng(seed);
    struct Block {
        std::uint64_t address;
        std::uint32_t size;
    };
    std::vector<Block> live;  // in allocation order
    std::vector<std::vector<std::uint64_t>> free_lists(max_size / 16 + 1);
    std::uint64_t top = heap_base, last_alloc = heap_base, clock = 0;
    WorkloadStats st;
    std::vector<Event> out;
    out.reserve(count);

    auto near = [](std::uint64_t a, std::uint64_t b) {
        const auto d = static_cast<std::int64_t>(a - b);
        return d >= -address_reach && d <= address_reach;
    };
    auto rounded = [](std::uint32_t size) { return size < 16 ? 16u : (size + 15) / 16 * 16; };
    auto request = [&] {
        const double u = rng.unit();
        static constexpr std::uint32_t small[] = {8, 16, 16, 16, 24, 24, 32, 32, 32, 40, 48, 64};
        if (u < 0.70) return small[rng.below(std::size(small))];
        if (u < 0.93) return static_cast<std::uint32_t>(65 + rng.below(192));
        if (u < 0.99) return static_cast<std::uint32_t>(257 + rng.below(3840));
        return static_cast<std::uint32_t>(4097 + rng.below(max_size - 4096));
    };
    // A block for `size` bytes: the newest freed block of its class if near the top, else the top.
    auto place = [&](std::uint32_t size) {
        const std::uint32_t r = rounded(size);
        auto& list = free_lists[r / 16];
        if (!list.empty() && list.back() + reuse_window >= top) {
            const std::uint64_t a = list.back();
            list.pop_back();
            ++st.reused;
            return a;
        }
        const std::uint64_t a = top;
        top += r;
        return a;
    };
    // Objects die young: the victim is a few allocations old, exponentially distributed.
    auto young = [&] {
        const auto back = static_cast<std::size_t>(-std::log(1.0 - rng.unit()) * 16.0);
        return live.size() - 1 - std::min(back, live.size() - 1);
    };
    auto release = [&](std::size_t i) {
        const Block b = live[i];
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        free_lists[rounded(b.size) / 16].push_back(b.address);
        return b;
    };

    while (out.size() < count) {
        const double u = rng.unit();
        if (u < 0.02 && !live.empty()) {  // realloc of a small block to a larger one
            std::size_t i = young();
            if (live[i].size > 2048) continue;
            const std::uint32_t size = std::min<std::uint32_t>(live[i].size + 1 + static_cast<std::uint32_t>(rng.below(live[i].size)), 4096);
            const std::uint64_t to = place(size);
            const Block old = release(i);
            live.push_back({to, size});
            out.push_back({Kind::realloc, size, old.address, to, clock});
            ++st.reallocs;
            continue;
        }
        if (u < 0.48 && !live.empty()) {  // free
            const Block b = release(young());
            out.push_back({Kind::free, 0, b.address, 0, clock});
            ++st.frees;
            continue;
        }
        const std::uint32_t size = request();
        const std::uint64_t a = place(size);
        if (!near(a, last_alloc)) {
            std::fprintf(stderr, "workload: alloc address delta out of reach\n");
            std::abort();
        }
        last_alloc = a;
        live.push_back({a, size});
        out.push_back({Kind::alloc, size, a, 0, ++clock});
        ++st.allocs;
    }
    st.heap_top = top;
    if (stats) *stats = st;
    return out;
}

}  // namespace bench
