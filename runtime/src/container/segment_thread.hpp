// The thread that compresses and writes a TraceWriter's segments under
// WriterOptions::background, so that the thread writing records only
// encodes them. Segments leave in the order they were handed over.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "metatf/container/container.hpp"

namespace metatf::rt::detail {

// A finished segment: its frame, and its chunks' bytes as they were encoded.
struct SegmentJob {
    Segment seg;
    std::vector<std::vector<std::byte>> raw;  // by chunk of seg
};

class SegmentThread {
public:
    using Write = std::function<void(SegmentJob&)>;
    // `start` (may be null) runs first on the new thread.
    SegmentThread(Write write, void (*start)());
    // Stops the thread; segments not yet written are dropped.
    ~SegmentThread();
    SegmentThread(const SegmentThread&) = delete;
    SegmentThread& operator=(const SegmentThread&) = delete;

    // Queues a segment, after waiting while another one waits: at most two
    // segments' bytes are held. Rethrows what a write threw (the thread
    // writes nothing after it).
    void push(SegmentJob job);
    // Waits until every queued segment is written; rethrows as push().
    void finish();

private:
    void run();
    void rethrow();  // with m_ held

    Write write_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<SegmentJob> queue_;
    bool writing_ = false, stop_ = false;
    std::exception_ptr error_;
    std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace metatf::rt::detail
