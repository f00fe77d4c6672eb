// libmetatf_heaptrace.so: preloaded into a program, records its heap
// allocations as a HATF 1.0 trace (docs/tracers.md).
//
// Each thread appends fixed-size events to its own log, with no lock shared
// between threads; a full log, a thread's exit and the process's exit move
// the events to the one writer under a mutex. The allocator itself is
// glibc's, reached through the __libc_* names glibc exports for exactly this
// (so no dlsym, whose own calloc would need an allocator first).
#include <pthread.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "event.hpp"
#include "sink.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void __libc_free(void*);
void* __libc_memalign(std::size_t, std::size_t);
void* __libc_valloc(std::size_t);
void* __libc_pvalloc(std::size_t);
}

namespace metatf::heaptrace {
namespace {

// Events a thread holds before it takes the writer's lock: 40 KiB a thread.
constexpr std::uint32_t log_capacity = 1024;

struct ThreadLog {
    // Held by the owner while it appends, and by whoever drains the log; only
    // the exit flush ever contends for it.
    std::atomic<bool> busy{false};
    std::uint32_t tid = 0;
    std::uint32_t count = 0;
    ThreadLog* prev = nullptr;
    ThreadLog* next = nullptr;
    Event events[log_capacity];

    void lock() {
        while (busy.exchange(true, std::memory_order_acquire)) {
        }
    }
    void unlock() { busy.store(false, std::memory_order_release); }
};

// Everything below `mutex` is shared and guarded by it; `tracing` is read
// without it on every event.
pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
std::atomic<bool> tracing{true};
Config config;
ThreadLog* logs = nullptr;  // every live thread's log
Sink* sink = nullptr;       // opened at the first drain
bool may_open = true;       // false after an error, after the exit flush, in a --no-fork child
bool child = false;         // this process is a forked child of a traced one
pthread_key_t exit_key;
pthread_once_t setup_once = PTHREAD_ONCE_INIT;

// The initial-exec model: a preloaded library's TLS is static, and reaching
// it must not call __tls_get_addr, which may allocate.
[[gnu::tls_model("initial-exec")]] constinit thread_local bool inside = false;
[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadLog* own = nullptr;
[[gnu::tls_model("initial-exec")]] constinit thread_local bool exited = false;

// Marks the tracer's own work on this thread: allocations made meanwhile
// (the writer's buffers, strings) go straight to glibc, untraced.
struct Inside {
    Inside() { inside = true; }
    ~Inside() { inside = false; }
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;
};

void say(const std::string& text) {
    const std::string line = "metatf-heaptrace: " + text + "\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

std::uint64_t now() {
    if (!config.time) return 0;
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint32_t thread_id() { return static_cast<std::uint32_t>(::gettid()); }

bool on(const char* name) {
    const char* v = std::getenv(name);
    return v && std::strcmp(v, "1") == 0;
}

// ---- opening and writing the trace ------------------------------------------------------

// The output pattern with %p replaced by the pid. A forked child whose
// pattern has no %p adds ".PID", so it never takes its parent's name.
std::string output_path() {
    std::string pattern = config.output ? config.output : "heap.%p.mtf";
    if (child && pattern.find("%p") == std::string::npos) pattern += ".%p";
    const std::string pid = std::to_string(::getpid());
    for (auto at = pattern.find("%p"); at != std::string::npos; at = pattern.find("%p", at + pid.size())) {
        pattern.replace(at, 2, pid);
    }
    return pattern;
}

// Stops tracing for good in this process after an error; with `mutex` held.
void give_up(const std::string& why) {
    tracing.store(false);
    may_open = false;
    say(why + "; not tracing any further");
    delete sink;  // removes its temporary file
    sink = nullptr;
}

// With `mutex` held. False when there is no trace to write to.
bool open_sink() {
    if (sink) return true;
    if (!may_open) return false;
    const std::string path = output_path();
    try {
        sink = new Sink(path, config, now());
    } catch (const std::exception& e) {
        give_up(e.what());
    }
    return sink != nullptr;
}

// With `mutex` held (and the log's lock, when the log is shared).
void write_events(std::uint32_t tid, const Event* events, std::uint32_t n) {
    if (n == 0 || !open_sink()) return;
    try {
        for (std::uint32_t i = 0; i < n; ++i) sink->write(tid, events[i]);
    } catch (const std::exception& e) {
        give_up(e.what());
    }
}

// Moves a log's events to the writer; with `mutex` held.
void drain(ThreadLog& log) {
    log.lock();
    write_events(log.tid, log.events, log.count);
    log.count = 0;
    log.unlock();
}

// ---- the logs ---------------------------------------------------------------------------

void link_log(ThreadLog* log) {
    log->prev = nullptr;
    log->next = logs;
    if (logs) logs->prev = log;
    logs = log;
}

void unlink_log(ThreadLog* log) {
    if (log->prev) log->prev->next = log->next;
    if (log->next) log->next->prev = log->prev;
    if (logs == log) logs = log->next;
}

void thread_exit(void* p);
void before_fork();
void after_fork_parent();
void after_fork_child();

// Once a process, at its first event: the configuration and the hooks.
void setup() {
    config.output = std::getenv("METATF_HEAPTRACE_OUTPUT");
    config.threads = on("METATF_HEAPTRACE_THREADS");
    config.time = on("METATF_HEAPTRACE_TIME");
    config.fork = !on("METATF_HEAPTRACE_NO_FORK");
    config.replace = on("METATF_HEAPTRACE_REPLACE");
    ::pthread_key_create(&exit_key, thread_exit);
    ::pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

// This thread's log, made at its first event; null after the thread's exit
// hook ran (its last events are written one at a time) or when out of memory.
ThreadLog* own_log() {
    if (own || exited) return own;
    ::pthread_once(&setup_once, setup);
    void* memory = __libc_malloc(sizeof(ThreadLog));
    if (!memory) return nullptr;
    own = new (memory) ThreadLog;
    own->tid = thread_id();
    own->events[own->count++] = Event{Kind::create_thread, 0, 0, 0, now()};
    ::pthread_mutex_lock(&mutex);
    link_log(own);
    ::pthread_mutex_unlock(&mutex);
    // A non-null value makes thread_exit() run when the thread ends.
    ::pthread_setspecific(exit_key, own);
    return own;
}

void record_unlogged(const Event& e) {
    ::pthread_mutex_lock(&mutex);
    write_events(thread_id(), &e, 1);
    ::pthread_mutex_unlock(&mutex);
}

// Appends one event to this thread's log, draining it first when full.
void record(Event e) {
    ThreadLog* log = own_log();
    e.time = now();
    if (!log) return record_unlogged(e);
    log->lock();
    while (log->count == log_capacity) {
        log->unlock();
        ::pthread_mutex_lock(&mutex);
        drain(*log);
        ::pthread_mutex_unlock(&mutex);
        log->lock();
    }
    // Checked under the log's lock: the exit flush turns tracing off before
    // it drains, so an event either reaches the trace or is never stored.
    if (tracing.load()) log->events[log->count++] = e;
    log->unlock();
}

// The pthread key's destructor: the thread's log goes to the trace, then its
// destroyThread record; events after this are written one by one.
void thread_exit(void* p) {
    Inside guard;
    auto* log = static_cast<ThreadLog*>(p);
    const Event last{Kind::destroy_thread, 0, 0, 0, now()};
    ::pthread_mutex_lock(&mutex);
    drain(*log);
    write_events(log->tid, &last, 1);
    unlink_log(log);
    ::pthread_mutex_unlock(&mutex);
    own = nullptr;
    exited = true;
    log->~ThreadLog();
    __libc_free(log);
}

// ---- fork ---------------------------------------------------------------------------------

// No thread may hold the writer across fork(): the child gets it consistent.
void before_fork() {
    inside = true;
    ::pthread_mutex_lock(&mutex);
}

void after_fork_parent() {
    ::pthread_mutex_unlock(&mutex);
    inside = false;
}

// The child starts a trace of its own (or none): the parent's writer, its
// file and the events the parent still holds stay the parent's.
void after_fork_child() {
    ::pthread_mutex_init(&mutex, nullptr);
    child = true;
    if (sink) sink->abandon_in_child();
    sink = nullptr;  // the parent's writer is left alone, not destroyed
    for (ThreadLog* log = logs; log;) {
        ThreadLog* next = log->next;
        if (log != own) __libc_free(log);  // threads that do not exist here
        log = next;
    }
    logs = nullptr;
    if (own) {
        own->count = 0;
        own->tid = thread_id();
        own->events[own->count++] = Event{Kind::create_thread, 0, 0, 0, now()};
        link_log(own);
    }
    if (!config.fork) {
        tracing.store(false);
        may_open = false;
    }
    inside = false;
}

// ---- process exit -------------------------------------------------------------------------

// Runs at exit() (and the end of main): every thread's events, then the end
// of the trace. Later events (other libraries' destructors, threads still
// running) are not recorded.
[[gnu::destructor]] void finish() {
    inside = true;  // for good: this thread records nothing more
    ::pthread_once(&setup_once, setup);  // a process without events still gets its trace
    ::pthread_mutex_lock(&mutex);
    // Off before the logs are drained: an event is then either in a log
    // this loop drains or refused by record().
    if (tracing.exchange(false)) {
        for (ThreadLog* log = logs; log; log = log->next) drain(*log);
        try {
            if (open_sink()) sink->close();
        } catch (const std::exception& e) {
            say(e.what());
        }
    }
    may_open = false;
    delete sink;
    sink = nullptr;
    ::pthread_mutex_unlock(&mutex);
}

bool traced() { return !inside && tracing.load(std::memory_order_relaxed); }

std::uint64_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void record_alloc(std::size_t size, const void* p) {
    if (p) record(Event{Kind::alloc, size, address(p), 0, 0});
}

}  // namespace
}  // namespace metatf::heaptrace

// ---- the allocator's entry points -----------------------------------------------------------
//
// Each calls glibc's allocator with the guard set, then records what it did.
// A call that fails (returns null, changes nothing) records nothing.

using namespace metatf::heaptrace;

namespace {

// realloc's outcome as HATF records: the realloc record, then the alloc and
// free records for what the call allocated and freed (hatf10.dtd).
void record_realloc(void* old, std::size_t size, void* result) {
    if (!old) {  // realloc(NULL, n) is malloc(n)
        if (!result) return;
        record(Event{Kind::realloc_alloc, size, 0, address(result), 0});
        record(Event{Kind::alloc, size, address(result), 0, 0});
    } else if (!result) {  // glibc frees at size 0; any other null is a failure that kept the block
        if (size != 0) return;
        record(Event{Kind::realloc_free, 0, address(old), 0, 0});
        record(Event{Kind::free, 0, address(old), 0, 0});
    } else if (result == old) {
        record(Event{Kind::realloc_no_alloc, size, address(old), address(result), 0});
    } else {
        record(Event{Kind::realloc_alloc_free, size, address(old), address(result), 0});
        record(Event{Kind::alloc, size, address(result), 0, 0});
        record(Event{Kind::free, 0, address(old), 0, 0});
    }
}

template <typename Call>
void* traced_alloc(std::size_t size, Call call) {
    if (!traced()) return call();
    Inside guard;
    void* p = call();
    record_alloc(size, p);
    return p;
}

bool valid_alignment(std::size_t alignment) {
    return alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment % sizeof(void*) == 0;
}

}  // namespace

extern "C" {

[[gnu::visibility("default")]] void* malloc(std::size_t size) {
    return traced_alloc(size, [&] { return __libc_malloc(size); });
}

[[gnu::visibility("default")]] void* calloc(std::size_t n, std::size_t size) {
    // An overflowing product fails in glibc, so the size recorded is never a wrapped one.
    return traced_alloc(n * size, [&] { return __libc_calloc(n, size); });
}

[[gnu::visibility("default")]] void* realloc(void* old, std::size_t size) {
    if (!traced()) return __libc_realloc(old, size);
    Inside guard;
    void* p = __libc_realloc(old, size);
    record_realloc(old, size, p);
    return p;
}

[[gnu::visibility("default")]] void* reallocarray(void* old, std::size_t n, std::size_t size) {
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return nullptr;
    }
    return realloc(old, bytes);
}

[[gnu::visibility("default")]] void free(void* p) {
    if (!traced() || !p) return __libc_free(p);
    Inside guard;
    // Recorded (and timed) before the block is released: another thread may
    // get the address back at once, and its alloc must not seem to come first.
    record(Event{Kind::free, 0, address(p), 0, 0});
    __libc_free(p);
}

[[gnu::visibility("default")]] void* memalign(std::size_t alignment, std::size_t size) {
    return traced_alloc(size, [&] { return __libc_memalign(alignment, size); });
}

[[gnu::visibility("default")]] void* aligned_alloc(std::size_t alignment, std::size_t size) {
    return traced_alloc(size, [&] { return __libc_memalign(alignment, size); });
}

[[gnu::visibility("default")]] int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
    if (!valid_alignment(alignment)) return EINVAL;
    void* p = traced_alloc(size, [&] { return __libc_memalign(alignment, size); });
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

[[gnu::visibility("default")]] void* valloc(std::size_t size) {
    return traced_alloc(size, [&] { return __libc_valloc(size); });
}

[[gnu::visibility("default")]] void* pvalloc(std::size_t size) {
    return traced_alloc(size, [&] { return __libc_pvalloc(size); });
}

}  // extern "C"
