#include "run.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace metatf::replay {

namespace {

using Clock = std::chrono::steady_clock;

// A cheap clock for each call: the time-stamp counter where there is one.
std::uint64_t ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

// Memory of the replayer's own, outside the allocator under test and
// resident before the first call, so that it is in the RSS baseline.
template <typename T>
class Mapped {
public:
    explicit Mapped(std::size_t n) : bytes_(n * sizeof(T) + 1) {
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        data_ = static_cast<T*>(p);
    }
    Mapped(const Mapped&) = delete;
    Mapped& operator=(const Mapped&) = delete;
    ~Mapped() { munmap(data_, bytes_); }
    T* data() { return data_; }

private:
    std::size_t bytes_;
    T* data_;
};

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), read without allocating.
std::uint64_t status_bytes(const char* key) {
    char buf[4096];
    const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const std::size_t key_length = std::strlen(key);
    for (const char* line = buf; *line;) {
        if (std::strncmp(line, key, key_length) == 0 && line[key_length] == ':') return std::strtoull(line + key_length + 1, nullptr, 10) * 1024;
        const char* end = std::strchr(line, '\n');
        if (!end) break;
        line = end + 1;
    }
    return 0;
}

// Starts the peak RSS (VmHWM) afresh: Linux's clear_refs value 5.
void reset_peak_rss() {
    const int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    [[maybe_unused]] const ssize_t n = write(fd, "5", 1);
    close(fd);
}

std::uint64_t page_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<std::uint64_t>(u.ru_minflt + u.ru_majflt);
}

// A program writes what it allocates: one byte per page the block spans.
void touch(void* p, std::uint64_t size) {
    volatile char* c = static_cast<char*>(p);
    for (std::uint64_t i = 0; i < size; i += 4096) c[i] = 1;
    if (size != 0) c[size - 1] = 1;
}

struct Totals {
    std::uint64_t calls[call_kinds] = {}, ticks[call_kinds] = {};
    std::uint64_t waits = 0, failed = 0, early = 0;
};

// What a slot holds before its first block and after a free: a call that
// finds it was made before its block existed (the plan would be wrong).
void* const no_block = reinterpret_cast<void*>(alignof(std::max_align_t) - 1);

struct Shared {
    void** blocks;
    std::atomic<std::uint32_t>* changes;  // per slot: the calls on its blocks so far (modulo 2^32)
    std::uint64_t* series;                // per sample: VmRSS when it was reached
    std::atomic<unsigned> arrived{0};
    std::atomic<bool> go{false};
};

// Calls a thread reads from its file at a time: 65,536 (1.5 MB), fewer
// when a trace has so many threads that their windows would pass 24 MB.
std::uint64_t window(std::size_t threads) {
    return std::clamp<std::uint64_t>((std::uint64_t{1} << 20) / std::max<std::size_t>(threads, 1), 4096, 65536);
}

// A thread's calls, read from its file into a buffer of its own a window
// at a time, or all at once before the replay.
class Calls {
public:
    Calls(PlanView::Thread file, bool in_memory, std::uint64_t window)
        : file_(file), buffer_(in_memory ? file.ops : std::min(file.ops, window)), capacity_(in_memory ? file.ops : window) {
        if (in_memory) refill();
    }
    // The next call, or nullptr after the last.
    const Op* next() {
        if (at_ == filled_) {
            if (read_ == file_.ops) return nullptr;
            refill();
        }
        return buffer_.data() + at_++;
    }

private:
    void refill() {
        const std::uint64_t n = std::min(capacity_, file_.ops - read_);
        auto* to = reinterpret_cast<char*>(buffer_.data());
        const std::size_t bytes = n * sizeof(Op);
        for (std::size_t done = 0; done < bytes;) {
            const ssize_t got = pread(file_.fd, to + done, bytes - done, static_cast<off_t>(read_ * sizeof(Op) + done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                static constexpr char message[] = "metatf-replay: cannot read the replay plan's temporary file\n";
                [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, message, sizeof message - 1);
                _exit(4);
            }
            done += static_cast<std::size_t>(got);
        }
        read_ += n;
        filled_ = n;
        at_ = 0;
    }

    PlanView::Thread file_;
    Mapped<Op> buffer_;
    std::uint64_t capacity_, read_ = 0, filled_ = 0, at_ = 0;
};

// A block another thread makes. Pairs that do not fit together could make
// threads wait for each other; after a minute the replay gives up.
void wait_for(const std::atomic<std::uint32_t>& changes, std::uint32_t after, Totals& t) {
    // Counts run modulo 2^32: reached when the difference is not negative.
    const auto reached = [&] { return static_cast<std::int32_t>(changes.load(std::memory_order_acquire) - after) >= 0; };
    if (reached()) return;
    ++t.waits;
    const Clock::time_point since = Clock::now();
    for (unsigned spins = 1; !reached(); ++spins) {
        std::this_thread::yield();
        if (spins % 4096 == 0 && Clock::now() - since > std::chrono::minutes(1)) {
            static constexpr char message[] = "metatf-replay: a call waited a minute for a block another thread makes: the replay is stuck\n";
            [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, message, sizeof message - 1);
            _exit(3);
        }
    }
}

// One more call on a slot. The calls on a slot never run at once (each
// waits for the one before, or follows it in its thread), so this needs no
// locked instruction: a plain store that publishes the block with it.
void counted(std::atomic<std::uint32_t>& changes) { changes.store(changes.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

void replay_thread(Calls& calls, Shared& shared, Totals& t, Clock::time_point& ended) {
    shared.arrived.fetch_add(1);
    while (!shared.go.load(std::memory_order_acquire)) std::this_thread::yield();
    while (const Op* next = calls.next()) {
        const Op& op = *next;
        if (op.call == Call::skip) continue;
        if (op.call == Call::sample) {
            shared.series[op.slot] = status_bytes("VmRSS");
            continue;
        }
        if (op.waits) wait_for(shared.changes[op.slot], op.after, t);
        void* in = op.slot == no_slot || op.call == Call::malloc ? nullptr : shared.blocks[op.slot];
        if (in == no_block) {
            ++t.early;
            in = nullptr;
        }
        const auto k = static_cast<std::size_t>(op.call);
        const std::uint64_t start = ticks();
        void* out = nullptr;
        switch (op.call) {
            case Call::malloc: out = std::malloc(op.size); break;
            case Call::free: std::free(in); break;
            case Call::realloc: out = std::realloc(in, op.size); break;
            default: break;
        }
        t.ticks[k] += ticks() - start;
        ++t.calls[k];
        if (op.call != Call::free) {
            if (out) {
                touch(out, op.size);
            } else {
                ++t.failed;
                if (op.call == Call::realloc) out = in;  // a realloc that fails leaves the block where it was
            }
            shared.blocks[op.new_slot] = out;
            counted(shared.changes[op.new_slot]);
        }
        if (op.slot != no_slot && op.slot != op.new_slot) {  // a free, or the block a realloc moved from
            shared.blocks[op.slot] = no_block;
            counted(shared.changes[op.slot]);
        }
    }
    ended = Clock::now();
}

std::string malloc_library() {
    Dl_info info{};
    void* f = dlsym(RTLD_DEFAULT, "malloc");
    if (!f || !dladdr(f, &info) || !info.dli_fname) return "unknown";
    const char* slash = std::strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

}  // namespace

Result run(const PlanView& plan, bool in_memory) {
    Mapped<void*> blocks(plan.slots);
    std::fill_n(blocks.data(), plan.slots, no_block);
    Mapped<std::atomic<std::uint32_t>> changes(plan.slots);
    Mapped<std::uint64_t> series(plan.samples);
    Shared shared{blocks.data(), changes.data(), series.data()};
    const std::size_t n = plan.threads.size();
    std::vector<std::unique_ptr<Calls>> calls;
    for (const PlanView::Thread& t : plan.threads) calls.push_back(std::make_unique<Calls>(t, in_memory, window(plan.threads.size())));
    Mapped<Totals> totals(n);
    Mapped<Clock::time_point> ended(n);
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        threads.emplace_back(replay_thread, std::ref(*calls[i]), std::ref(shared), std::ref(totals.data()[i]), std::ref(ended.data()[i]));
    }
    while (shared.arrived.load() != n) std::this_thread::yield();
    reset_peak_rss();
    const std::uint64_t baseline = status_bytes("VmRSS"), faults = page_faults();
    const Clock::time_point start = Clock::now();
    const std::uint64_t ticks_start = ticks();
    shared.go.store(true, std::memory_order_release);
    for (std::thread& t : threads) t.join();
    const std::uint64_t ticks_end = ticks();
    Clock::time_point end = start;
    for (std::size_t i = 0; i < n; ++i) end = std::max(end, ended.data()[i]);
    Result r;
    r.library = malloc_library();
    r.seconds = std::chrono::duration<double>(end - start).count();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const double seconds_per_tick = ticks_end > ticks_start ? wall / static_cast<double>(ticks_end - ticks_start) : 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Totals& t = totals.data()[i];
        for (std::size_t k = 0; k < call_kinds; ++k) {
            r.calls[k] += t.calls[k];
            r.call_seconds[k] += static_cast<double>(t.ticks[k]) * seconds_per_tick;
        }
        r.waits += t.waits;
        r.failed += t.failed;
        r.early += t.early;
    }
    const std::uint64_t peak = status_bytes("VmHWM"), now = status_bytes("VmRSS");
    r.peak_rss_bytes = peak > baseline ? peak - baseline : 0;
    r.final_rss_bytes = now > baseline ? now - baseline : 0;
    r.page_faults = page_faults() - faults;
    for (std::uint64_t k = 0; k < plan.samples; ++k) r.series.push_back(series.data()[k] > baseline ? series.data()[k] - baseline : 0);
    return r;
}

nlohmann::json to_json(const Result& r) {
    nlohmann::json calls = nlohmann::json::object(), ns = nlohmann::json::object();
    for (std::size_t k = 0; k < call_kinds; ++k) {
        calls[call_names[k]] = r.calls[k];
        ns[call_names[k]] = r.calls[k] ? r.call_seconds[k] * 1e9 / static_cast<double>(r.calls[k]) : 0.0;
    }
    return {{"library", r.library},
            {"seconds", r.seconds},
            {"calls", calls},
            {"ns_per_op", ns},
            {"peak_rss_bytes", r.peak_rss_bytes},
            {"final_rss_bytes", r.final_rss_bytes},
            {"page_faults", r.page_faults},
            {"waits", r.waits},
            {"failed_calls", r.failed},
            {"early_calls", r.early},
            {"series", r.series}};
}

}  // namespace metatf::replay
