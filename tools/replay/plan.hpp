// A heap trace turned into what replay needs: per thread, the allocator
// calls to make, each naming its blocks by slot (a number per block the
// trace allocates), so that replay looks nothing up. Made once, by the
// parent process, and handed to each allocator's child in a shared mapping.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace metatf::replay {

enum class Call : std::uint8_t { malloc, free, realloc };
inline constexpr const char* call_names[] = {"malloc", "free", "realloc"};
inline constexpr std::uint32_t no_slot = 0xffffffff;

// A call. Each block counts the calls that made or changed it (a malloc, a
// realloc that returns it); a call on a block that another thread last
// changed waits until the block's count reaches `after`.
struct Op {
    Call call;
    bool waits;              // `slot` was last changed by another thread
    std::uint32_t slot;      // free, realloc: the block passed in (realloc: no_slot for NULL)
    std::uint32_t new_slot;  // malloc, realloc: the block returned
    std::uint32_t after;     // with `waits`: the calls that must have made or changed `slot`
    std::uint64_t size;      // malloc, realloc: the size asked for
};

// A record that does not fit the blocks before it.
struct Misfit {
    std::uint64_t record;  // its index in the trace, as mtf numbers records
    std::string what;
};

struct Plan {
    std::uint64_t events = 0;  // allocator calls
    std::uint64_t peak_live_bytes = 0;
    std::uint64_t largest_block = 0;  // the largest size any call asks for
    std::uint32_t slots = 0;
    std::vector<std::uint64_t> thread_ids;  // the trace's, in order of first call
    std::vector<std::vector<Op>> ops;       // per thread, in trace order
    std::uint64_t misfit_count = 0;
    std::vector<Misfit> misfits;  // the first few, by record
    std::uint64_t reordered = 0;  // several threads: allocs at an address live in the trace (docs/replay.md)
};

// Reads the HATF 1.0 trace at `path`. A realloc record and the alloc and
// free records the tracer writes after it (docs/formats.md) are one call.
// With `strict`, a misfit is an error naming the first (by record). Throws
// rt::TraceError and, for a misfit under `strict`, std::runtime_error.
Plan make_plan(const std::string& path, bool strict);

// A plan written to file descriptor `fd` as the shared mapping holds it,
// straight from its vectors; and the mapping's bytes read back. Both throw
// std::runtime_error; from_bytes checks what it is given.
void write_plan(int fd, const Plan& plan);
struct PlanView {
    std::uint32_t slots = 0;
    std::vector<std::span<const Op>> threads;
};
PlanView from_bytes(std::span<const std::byte> bytes);

}  // namespace metatf::replay
