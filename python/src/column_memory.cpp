#include "column_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>

#include <sys/mman.h>
#include <unistd.h>

#include "metatf/core/big_memory.hpp"

namespace metatf::python {

namespace {

using rt::detail::huge_page;
constexpr std::size_t kept_bytes = std::size_t(256) << 20;
constexpr std::size_t kept_mappings = 64;

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

// A fresh mapping; null if the system has no room for it.
Pages map_fresh(std::size_t bytes, bool huge) {
    const std::size_t mapped = huge ? bytes + huge_page : bytes;
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return {};
    auto* start = static_cast<std::byte*>(p);
    if (huge) {  // start on a huge page
        const std::size_t skip = (huge_page - reinterpret_cast<std::uintptr_t>(start) % huge_page) % huge_page;
        if (skip != 0) munmap(start, skip);
        if (skip != huge_page) munmap(start + skip + bytes, huge_page - skip);
        start += skip;
    }
    madvise(start, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return {start, bytes, huge};
}

// The mappings kept, oldest first, with room for one more than the most
// kept, so that keeping pages (in a destructor) never allocates. Never
// destroyed: NumPy may free a column after static destructors ran.
struct Kept {
    Kept() { pages.reserve(kept_mappings + 1); }
    std::mutex lock;
    std::vector<Pages> pages;
    std::size_t bytes = 0;

    // Unmaps the oldest while more than `most_bytes` or `most_mappings` are kept.
    void drop_oldest(std::size_t most_bytes, std::size_t most_mappings) {
        while (!pages.empty() && (bytes > most_bytes || pages.size() > most_mappings)) {
            munmap(pages.front().data, pages.front().size);
            bytes -= pages.front().size;
            pages.erase(pages.begin());
        }
    }
};
Kept& kept() {
    static Kept* k = new Kept;
    return *k;
}

}  // namespace

Pages take_pages(std::size_t bytes, bool huge) {
    bytes = round_up(bytes, huge ? huge_page : page_size());
    {
        Kept& k = kept();
        const std::lock_guard hold(k.lock);
        auto best = k.pages.end();
        for (auto it = k.pages.begin(); it != k.pages.end(); ++it) {
            if (it->size >= bytes && it->huge == huge && (best == k.pages.end() || it->size < best->size)) best = it;
        }
        if (best != k.pages.end()) {
            const Pages p = *best;
            k.bytes -= p.size;
            k.pages.erase(best);
            return p;
        }
    }
    if (const Pages fresh = map_fresh(bytes, huge); fresh.data) return fresh;
    {  // the pages kept may be what the system misses
        Kept& k = kept();
        const std::lock_guard hold(k.lock);
        k.drop_oldest(0, 0);
    }
    if (const Pages fresh = map_fresh(bytes, huge); fresh.data) return fresh;
    throw std::bad_alloc();
}

void give_pages(Pages pages) {
    if (!pages.data) return;
    Kept& k = kept();
    const std::lock_guard hold(k.lock);
    if (pages.size > kept_bytes / 2 || madvise(pages.data, pages.size, MADV_FREE) != 0) {
        munmap(pages.data, pages.size);
        return;
    }
    k.pages.push_back(pages);
    k.bytes += pages.size;
    k.drop_oldest(kept_bytes, kept_mappings);
}

bool huge_columns(std::size_t fronts, std::uint64_t bytes) { return fronts <= 32 && fronts * huge_page <= bytes; }

std::vector<Block> Block::many(std::size_t n, std::size_t each, bool huge) {
    std::vector<Block> out(n);
    const std::size_t room = round_up(each, page_size());
    if (room == 0) return out;
    for (Block& b : out) b.pages_ = take_pages(room, huge);
    return out;
}

Pages Block::trim(std::size_t used) {
    Pages p = std::exchange(pages_, {});
    used = round_up(used, page_size());
    if (used == 0) {
        give_pages(p);
        return {};
    }
    // Freed, not unmapped: the whole mapping goes back to be kept.
    if (used < p.size) madvise(p.data + used, p.size - used, MADV_DONTNEED);
    return p;
}

}  // namespace metatf::python
