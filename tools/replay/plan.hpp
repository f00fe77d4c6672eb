// A heap trace turned into what replay needs: per thread, the allocator
// calls to make, each naming its blocks by slot (a number per live block,
// reused once the block is freed), so that replay looks nothing up. Made
// once, by the parent process, as the trace is read: each thread's calls go
// to a temporary file of their own, which each allocator's child reads a
// window at a time. Memory stays bounded by the live blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace metatf::replay {

// malloc, free and realloc are the trace's calls; a sample marks where the
// replay reads its RSS for --series; skip is a free left out (a misfit).
enum class Call : std::uint8_t { malloc, free, realloc, sample, skip };
inline constexpr const char* call_names[] = {"malloc", "free", "realloc"};
inline constexpr std::size_t call_kinds = 3;
inline constexpr std::uint32_t no_slot = 0xffffffff;

// A call. Each slot counts the calls on its blocks (modulo 2^32); a call on
// a slot that another thread used last waits until the count reaches
// `after`: a free or realloc for the calls on the block before it, a malloc
// into a slot another thread freed for that free.
struct Op {
    Call call;
    bool waits;              // `slot` was last changed by another thread
    std::uint32_t slot;      // free, realloc: the block passed in (realloc: no_slot for NULL); malloc: the slot waited for; sample: its number
    std::uint32_t new_slot;  // malloc, realloc: the block returned
    std::uint32_t after;     // with `waits`: the calls that must have been made on `slot`
    std::uint64_t size;      // malloc, realloc: the size asked for
};

// What a waiting free's first place becomes once it is paired elsewhere.
inline constexpr Op skip_op{Call::skip, false, no_slot, no_slot, 0, 0};

// A file descriptor, closed with its owner.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(o.release()) {}
    Fd& operator=(Fd&& o) noexcept;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd();
    int get() const { return fd_; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

private:
    int fd_ = -1;
};

// A record that does not fit the blocks before it.
struct Misfit {
    std::uint64_t record;  // its index in the trace, as mtf numbers records
    std::string what;
};

struct ThreadPlan {
    std::uint64_t id;  // the trace's thread id
    Fd file;           // its Ops, an unlinked temporary file
    std::uint64_t ops = 0;
};

struct Plan {
    std::uint64_t events = 0;  // allocator calls
    std::uint64_t peak_live_bytes = 0;
    std::uint64_t largest_block = 0;  // the largest size any call asks for
    std::uint32_t slots = 0;
    std::vector<ThreadPlan> threads;  // in order of first call
    std::uint64_t misfit_count = 0;
    std::vector<Misfit> misfits;  // the first few, by record
    std::uint64_t reordered = 0;  // several threads: allocs at an address live in the trace (docs/replay.md)
    std::vector<std::uint64_t> series_live;    // the live bytes at each sample
    std::vector<std::uint64_t> series_events;  // the calls before each sample (0: a sample left out)
};

struct PlanOptions {
    bool strict = false;     // a misfit is an error naming the first (by record)
    std::uint64_t every = 0;  // a sample op each `every` events (0: none)
    std::string temp_dir;     // where the threads' files go
};

// Reads the HATF 1.0 trace at `path`. A realloc record and the alloc and
// free records the tracer writes after it (docs/formats.md) are one call.
// Throws rt::TraceError and std::runtime_error (a misfit under `strict`, a
// temporary file that cannot be written).
Plan make_plan(const std::string& path, const PlanOptions& options);

// What a child needs to find the plan: a memory file naming each thread's
// file descriptor (inherited) and its count of Ops.
struct PlanView {
    std::uint32_t slots = 0;
    std::uint64_t samples = 0;
    struct Thread {
        int fd;
        std::uint64_t ops;
    };
    std::vector<Thread> threads;
};
Fd write_plan_header(const Plan& plan);
PlanView read_plan_header(int fd);

}  // namespace metatf::replay
