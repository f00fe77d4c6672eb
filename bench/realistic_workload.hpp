// A workload shaped like a real heap trace of a 64-bit Linux program (a
// compiler, say), for the heap64 encodings of the benchmark. What makes it
// realistic, and what the encodings have to cope with:
//
// - 47-bit addresses in several regions: the main thread's brk heap near
//   0x55..., one 64 MiB arena per worker thread near 0x7f... (glibc's thread
//   arenas), and blocks of 128 KiB or more mmap'ed top-down below those;
// - sizes as a compiler asks for them: mostly 16-64 bytes, a Pareto tail, and
//   rare outliers of megabytes;
// - LIFO reuse: a freed block goes to the head of its arena's bin for its
//   chunk size, and the next request of that size gets it back (tcache and
//   fastbins), so addresses repeat soon after they are freed;
// - reallocs of growing buffers, mostly the block that was just grown;
// - several threads that run in bursts, and frees of other threads' blocks;
// - nanosecond timestamps that increase irregularly: mostly tens to hundreds
//   of nanoseconds apart, sometimes microseconds or milliseconds, rarely a
//   pause of seconds.
//
// Deterministic for a given seed (the Rng of workload.hpp, no std distributions).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

#include "workload.hpp"

namespace bench {

inline constexpr std::uint32_t main_tid = 1843207;             // the main thread; workers get the ids after it
inline constexpr std::uint64_t main_heap = 0x5565'4a9e'3000;   // start of the brk heap of a PIE binary
inline constexpr std::uint64_t first_arena = 0x7f3c'6000'0000;  // the first thread arena; the next ones below it
inline constexpr std::uint64_t arena_size = 0x400'0000;         // 64 MiB
inline constexpr std::uint64_t mmap_top = 0x7f3c'8a7f'f000;     // large blocks are mapped downwards from here
inline constexpr std::uint64_t start_time = 3'612'345'678'901;  // nanoseconds since boot
inline constexpr std::uint32_t mmap_threshold = 128 << 10;
inline constexpr unsigned heap64_threads = 6;

struct RealisticStats {
    std::size_t allocs = 0, frees = 0, reallocs = 0, reused = 0, mapped = 0, foreign_frees = 0;
    std::uint32_t max_size = 0;
};

namespace realistic {

struct Block {
    std::uint64_t address;
    std::uint32_t size;
    std::uint8_t arena;  // the arena whose bins get it back; mapped blocks: none
    bool mapped;
};

// One arena: a top that grows, and LIFO bins by chunk size (16-byte classes).
struct Arena {
    std::uint64_t top;
    std::vector<std::vector<std::uint64_t>> bins = std::vector<std::vector<std::uint64_t>>(mmap_threshold / 16 + 2);
};

// glibc's chunk for a request: 8 bytes of header, 16-byte aligned, at least 32.
inline std::uint64_t chunk_size(std::uint32_t size) { return std::max<std::uint64_t>(32, (std::uint64_t(size) + 8 + 15) & ~std::uint64_t(15)); }

class Generator {
public:
    explicit Generator(std::uint64_t seed) : rng_(seed), live_(heap64_threads) {
        arenas_.push_back(Arena{main_heap + 0x290});  // after the tcache's own block
        for (unsigned i = 1; i < heap64_threads; ++i) arenas_.push_back(Arena{first_arena - (i - 1) * arena_size + 0x8d0});
    }

    std::vector<Event> run(std::size_t count, RealisticStats* stats) {
        std::vector<Event> out;
        out.reserve(count);
        while (out.size() < count) {
            if (run_left_ == 0) switch_thread();
            --run_left_;
            time_ += gap();
            step(out);
        }
        if (stats) *stats = st_;
        return out;
    }

private:
    // Threads run in bursts (a geometric number of events, 48 on average);
    // the main thread runs about 40% of them.
    void switch_thread() {
        thread_ = rng_.unit() < 0.4 ? 0 : 1 + static_cast<unsigned>(rng_.below(heap64_threads - 1));
        run_left_ = 1 + static_cast<std::size_t>(-std::log(1.0 - rng_.unit()) * 47.0);
        time_ += 1000 + rng_.below(20000);  // the switch itself
    }

    std::uint64_t gap() {
        const double u = rng_.unit();
        if (u < 0.70) return 15 + rng_.below(120);
        if (u < 0.95) return 135 + rng_.below(1500);
        if (u < 0.999) return 2000 + rng_.below(50000);
        if (u < 0.99999) return 100'000 + rng_.below(5'000'000);  // a page fault, a system call
        return 300'000'000 + rng_.below(2'700'000'000);            // the program waits for I/O
    }

    std::uint32_t request() {
        const double u = rng_.unit();
        static constexpr std::uint32_t small[] = {16, 16, 24, 24, 24, 32, 32, 32, 32, 40, 48, 48, 56, 64, 64};
        if (rng_.unit() < 5e-5) return (1u << 20) + static_cast<std::uint32_t>(rng_.below(47u << 20));  // a MB outlier
        if (u < 0.62) return small[rng_.below(std::size(small))];
        if (u < 0.72) return 1 + static_cast<std::uint32_t>(rng_.below(15));
        if (u < 0.85) return 65 + static_cast<std::uint32_t>(rng_.below(64));
        if (u < 0.93) return 129 + static_cast<std::uint32_t>(rng_.below(384));
        const double tail = 512.0 / std::pow(1.0 - rng_.unit(), 1.0 / 1.1);  // Pareto, alpha 1.1
        return static_cast<std::uint32_t>(std::min(tail, 4.0 * (1 << 20)));
    }

    // The address malloc(size) returns in the current thread's arena.
    Block place(std::uint32_t size) {
        st_.max_size = std::max(st_.max_size, size);
        if (size >= mmap_threshold) return map(size);
        Arena& a = arenas_[thread_];
        const std::uint64_t chunk = chunk_size(size);
        auto& bin = a.bins[chunk / 16];
        if (!bin.empty()) {
            const std::uint64_t at = bin.back();
            bin.pop_back();
            ++st_.reused;
            return {at, size, static_cast<std::uint8_t>(thread_), false};
        }
        const std::uint64_t at = a.top + 16;
        a.top += chunk;
        return {at, size, static_cast<std::uint8_t>(thread_), false};
    }

    // A mapping: the most recently unmapped hole that fits, else below the last one.
    Block map(std::uint32_t size) {
        ++st_.mapped;
        const std::uint64_t length = (std::uint64_t(size) + 16 + 4095) & ~std::uint64_t(4095);
        for (auto h = holes_.rbegin(); h != holes_.rend(); ++h) {
            if (h->second >= length) {
                const std::uint64_t at = h->first + h->second - length;  // the top of the hole, as the kernel picks
                h->second -= length;
                if (h->second == 0) holes_.erase(std::next(h).base());
                return {at + 16, size, 0, true};
            }
        }
        mmap_next_ -= length;
        return {mmap_next_ + 16, size, 0, true};
    }

    void release(const Block& b) {
        if (b.mapped) {
            holes_.push_back({b.address - 16, (std::uint64_t(b.size) + 16 + 4095) & ~std::uint64_t(4095)});
        } else {
            arenas_[b.arena].bins[chunk_size(b.size) / 16].push_back(b.address);
        }
    }

    // A live block of thread t: most die young (a few allocations old),
    // a quarter are long-lived ones picked at random. Removed from the list.
    Block take(unsigned t, double young_mean) {
        auto& live = live_[t];
        std::size_t i;
        if (rng_.unit() < 0.75) {
            const auto back = static_cast<std::size_t>(-std::log(1.0 - rng_.unit()) * young_mean);
            i = live.size() - 1 - std::min(back, live.size() - 1);
            const Block b = live[i];
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
            return b;
        }
        i = rng_.below(live.size());
        const Block b = live[i];
        live[i] = live.back();
        live.pop_back();
        return b;
    }

    void step(std::vector<Event>& out) {
        auto& live = live_[thread_];
        const std::uint32_t tid = main_tid + thread_;
        const double u = rng_.unit();
        const double free_share = live.size() < 256 ? 0.2 : live.size() > 40000 ? 0.55 : 0.47;
        if (u < 0.025 && !live.empty()) {  // realloc: a growing buffer, usually the one grown last
            Block old = take(thread_, 1.5);
            const auto grown = std::min<std::uint64_t>(old.size < 16 ? 32 : std::uint64_t(old.size) * 2, 64u << 20);
            const Block to = place(static_cast<std::uint32_t>(grown));  // malloc, copy, then free the old block
            release(old);
            live.push_back(to);
            out.push_back({Kind::realloc, to.size, old.address, to.address, time_, tid});
            ++st_.reallocs;
            return;
        }
        if (u < 0.025 + free_share && !live.empty()) {
            unsigned owner = thread_;
            if (rng_.unit() < 0.08) {  // a block another thread allocated (handed over in a queue)
                owner = static_cast<unsigned>(rng_.below(heap64_threads));
                if (live_[owner].empty()) owner = thread_;
                st_.foreign_frees += owner != thread_;
            }
            const Block b = take(owner, 12.0);
            release(b);
            out.push_back({Kind::free, 0, b.address, 0, time_, tid});
            ++st_.frees;
            return;
        }
        const Block b = place(request());
        if (b.mapped) time_ += 5000 + rng_.below(45000);  // mmap is a system call
        live.push_back(b);
        out.push_back({Kind::alloc, b.size, b.address, 0, time_, tid});
        ++st_.allocs;
    }

    Rng rng_;
    std::vector<Arena> arenas_;
    std::vector<std::vector<Block>> live_;  // per thread, in allocation order (mostly)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> holes_;  // unmapped ranges: start, length
    std::uint64_t mmap_next_ = mmap_top;
    std::uint64_t time_ = start_time;
    unsigned thread_ = 0;
    std::size_t run_left_ = 0;
    RealisticStats st_;
};

}  // namespace realistic

inline std::vector<Event> make_realistic_workload(std::size_t count, std::uint64_t seed, RealisticStats* stats = nullptr) {
    return realistic::Generator(seed).run(count, stats);
}

}  // namespace bench
