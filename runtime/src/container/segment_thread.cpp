#include "segment_thread.hpp"

namespace metatf::rt::detail {

SegmentThread::SegmentThread(Write write, void (*start)())
    : write_(std::move(write)), thread_([this, start] {
          if (start) start();
          run();
      }) {}

SegmentThread::~SegmentThread() {
    {
        std::lock_guard lock(m_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void SegmentThread::rethrow() {
    if (error_) std::rethrow_exception(error_);
}

void SegmentThread::push(SegmentJob job) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return queue_.empty() || error_; });
    rethrow();
    queue_.push_back(std::move(job));
    lock.unlock();
    cv_.notify_all();
}

void SegmentThread::finish() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return (queue_.empty() && !writing_) || error_; });
    rethrow();
}

void SegmentThread::run() {
    std::unique_lock lock(m_);
    for (;;) {
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        SegmentJob job = std::move(queue_.front());
        queue_.pop_front();
        writing_ = true;
        lock.unlock();
        cv_.notify_all();  // room in the queue
        std::exception_ptr error;
        try {
            write_(job);
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        writing_ = false;
        if (error) {
            error_ = error;
            queue_.clear();
        }
        cv_.notify_all();
        if (error_) return;
    }
}

}  // namespace metatf::rt::detail
