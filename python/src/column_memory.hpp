// Memory for the columns of a read: address space for every row the read
// may return, whose pages the kernel maps as they are first written, handed
// to NumPy and, when NumPy frees it, kept for the next read.
#pragma once

#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace metatf::python {

namespace py = pybind11;

// Whole pages of address space, read and write, MAP_NORESERVE; 2 MiB-aligned
// and MADV_HUGEPAGE when `huge`.
struct Pages {
    std::byte* data = nullptr;
    std::size_t size = 0;
    bool huge = false;
};

// Pages of at least `bytes`: the smallest kept mapping (give_pages()) that
// holds them and is as huge, or a fresh one. Throws std::bad_alloc.
Pages take_pages(std::size_t bytes, bool huge);
// Gives pages back: kept for a later read while the kept ones stay within
// 256 MiB in 64 mappings (MADV_FREE: the kernel may reclaim them under
// pressure), unmapped otherwise. A fresh mapping costs a page fault and a
// cleared page per page written, a third of a read of 200,000 rows; kept
// ones cost neither while the kernel leaves them, as malloc's freed memory.
void give_pages(Pages pages);

// Whether a read's columns should be on huge pages: `fronts` places where
// its threads write rows (a thread per column it writes), `bytes` what the
// rows it may return would take. Each front takes 2 MiB at least on huge
// pages (until the end trims the blocks), so they are used while that
// waste is at most 64 MiB and at most `bytes`; then most of a read's page
// faults go.
bool huge_columns(std::size_t fronts, std::uint64_t bytes);

// One column of a read: each thread of the read writes its rows of it from a
// row of its own on, and the end hands the rows to NumPy.
class Block {
public:
    Block() = default;
    // `n` blocks of `each` bytes, on huge pages if `huge` (huge_columns()).
    static std::vector<Block> many(std::size_t n, std::size_t each, bool huge);
    Block(Block&& o) noexcept : pages_(std::exchange(o.pages_, {})) {}
    Block& operator=(Block&& o) noexcept {
        give_pages(std::exchange(pages_, std::exchange(o.pages_, {})));
        return *this;
    }
    ~Block() { give_pages(pages_); }
    std::byte* data() const { return pages_.data; }

    // The first `count` values as a NumPy array of T that owns the pages
    // (those past the values are freed); this is then empty.
    template <typename T>
    py::array_t<T> to_numpy(std::size_t count) {
        auto pages = std::make_unique<Pages>(trim(count * sizeof(T)));
        if (!pages->data) return py::array_t<T>(0);
        auto* values = reinterpret_cast<T*>(pages->data);
        py::capsule owner(pages.get(), [](void* p) {
            const std::unique_ptr<Pages> pages(static_cast<Pages*>(p));
            give_pages(*pages);
        });
        pages.release();  // the capsule's now
        return py::array_t<T>(static_cast<py::ssize_t>(count), values, owner);
    }

private:
    // The pages, with those past the first `used` bytes freed (none if 0); this is then empty.
    Pages trim(std::size_t used);

    Pages pages_;
};

}  // namespace metatf::python
