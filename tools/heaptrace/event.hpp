// One allocator event as a thread records it: fixed size, no pointers to
// owned memory, so a thread's log is a flat array that needs no allocation.
#pragma once

#include <cstdint>

namespace metatf::heaptrace {

// Each kind is one HATF 1.0 record (docs/formats.md, "metatf-heaptrace").
enum class Kind : std::uint8_t {
    alloc,
    free,
    realloc_no_alloc,
    realloc_alloc_free,
    realloc_alloc,
    realloc_free,
    create_thread,
    destroy_thread,
};

struct Event {
    Kind kind;
    std::uint64_t size;
    std::uint64_t address;      // alloc, free: the block; realloc: the block passed in
    std::uint64_t new_address;  // realloc: the block returned
    std::uint64_t time;         // CLOCK_MONOTONIC nanoseconds, 0 unless timed
};

// What the launcher asks for, through the environment (config.cpp).
struct Config {
    const char* output = nullptr;  // the path pattern, %p the pid
    bool threads = false;          // store the thread field and thread records
    bool time = false;             // store the time field
    bool fork = true;              // a forked child writes its own trace
    bool replace = false;          // an existing output may be replaced
    bool compress = true;          // zstd chunks and DTD text, as the trace is written
    bool compact = true;           // addresses as pool references, larger segments compressed on a thread (not --fast)
};

}  // namespace metatf::heaptrace
