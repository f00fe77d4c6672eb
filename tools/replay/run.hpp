// Replaying a plan in this process, under whatever allocator it has:
// one thread per thread of the trace, each making its calls in order and
// waiting, before a call on a block another thread made, until that block
// exists. Each thread reads its calls from its file a window at a time (or,
// for the baseline of docs/replay.md, all of them before the replay starts).
// Each block is written as a program would: one byte per page it spans, so
// that RSS counts what the allocator gave out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan.hpp"

namespace metatf::replay {

struct Result {
    std::string library;  // the file that provides malloc here
    double seconds = 0;   // first call to last, across threads
    std::uint64_t calls[call_kinds] = {};
    double call_seconds[call_kinds] = {};  // per Call, the time inside the calls
    std::uint64_t peak_rss_bytes = 0, final_rss_bytes = 0, page_faults = 0;
    std::uint64_t waits = 0;   // calls that waited for another thread's block
    std::uint64_t failed = 0;  // calls that returned NULL
    std::uint64_t early = 0;   // calls on a block not made yet or freed already: 0 unless the plan is wrong
    std::vector<std::uint64_t> series;  // the RSS over the start at each sample
};

// `in_memory`: every call read into memory first, as the baseline replay.
Result run(const PlanView& plan, bool in_memory);

// As the child hands it to the parent: library, seconds, calls and
// ns_per_op per call kind, peak_rss_bytes, final_rss_bytes, page_faults,
// waits, failed_calls, early_calls, series.
nlohmann::json to_json(const Result& r);

}  // namespace metatf::replay
