// A program for metatf-replay's tests: two threads allocate blocks (some
// grown by realloc) and hand them through a queue to two others, which free
// them, so that most frees are of another thread's blocks.
// Usage: replay_handoff BLOCKS_PER_PRODUCER
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace {

constexpr std::size_t capacity = 256;

// A bounded queue over a fixed array: it allocates nothing itself.
class Queue {
public:
    void push(void* p) {
        std::unique_lock lock(m_);
        room_.wait(lock, [&] { return count_ < capacity; });
        items_[(head_ + count_++) % capacity] = p;
        ready_.notify_one();
    }
    void* pop() {
        std::unique_lock lock(m_);
        ready_.wait(lock, [&] { return count_ > 0; });
        void* p = items_[head_];
        head_ = (head_ + 1) % capacity;
        --count_;
        room_.notify_one();
        return p;
    }

private:
    std::mutex m_;
    std::condition_variable room_, ready_;
    void* items_[capacity] = {};
    std::size_t head_ = 0, count_ = 0;
};

void produce(Queue& q, std::size_t blocks, std::size_t seed) {
    for (std::size_t i = 0; i < blocks; ++i) {
        const std::size_t size = 16 + (i * 7919 + seed) % 4000;
        auto* p = static_cast<char*>(std::malloc(size));
        if (!p) std::abort();
        std::memset(p, 1, size);
        if (i % 10 == 0) {
            p = static_cast<char*>(std::realloc(p, size * 3));
            if (!p) std::abort();
        }
        q.push(p);
    }
}

void consume(Queue& q, std::size_t blocks) {
    for (std::size_t i = 0; i < blocks; ++i) std::free(q.pop());
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t blocks = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
    Queue q;
    std::thread producers[] = {std::thread(produce, std::ref(q), blocks, 1), std::thread(produce, std::ref(q), blocks, 2)};
    std::thread consumers[] = {std::thread(consume, std::ref(q), blocks), std::thread(consume, std::ref(q), blocks)};
    for (std::thread& t : producers) t.join();
    for (std::thread& t : consumers) t.join();
    return 0;
}
