// The per-thread logs, their draining, fork, exec and exit (recorder.hpp).
//
// Each thread appends events to its own log, with no lock shared between
// threads; a full log, a thread's exit and the process's exit move the
// events, under a mutex, into a batch, and a thread of the recorder's own
// (the writer thread) hands full batches to the one writer: the traced
// threads copy events and never wait for their encoding or compression
// unless every batch is in use. Logs and batches are mapped memory, so that
// the recorder never calls the allocator a tracer may be tracing.
#include "recorder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string_view>

namespace metatf::tracing {

constinit thread_local bool inside = false;
std::atomic<bool> tracing{true};

namespace {

// Events a thread holds before it takes the writer's lock.
constexpr std::uint32_t log_capacity = 1024;

struct ThreadLog {
    // Held by the owner while it appends, and by whoever drains the log; only
    // the exit flush ever contends for it.
    std::atomic<bool> busy{false};
    std::uint32_t tid = 0;
    std::uint32_t count = 0;
    std::size_t bytes = 0;  // of the mapping
    ThreadLog* prev = nullptr;
    ThreadLog* next = nullptr;

    unsigned char* event(std::uint32_t i) {
        return reinterpret_cast<unsigned char*>(this + 1) + std::size_t(i) * tracer.event_size;
    }
    void lock() {
        while (busy.exchange(true, std::memory_order_acquire)) {
        }
    }
    void unlock() { busy.store(false, std::memory_order_release); }
};

// Everything below `mutex` is shared and guarded by it, but for the sink
// (sink to sink_stat, may_open), which `sink_mutex` guards: the writer
// thread writes batches under it alone. Lock order: mutex, then
// queue_mutex or sink_mutex.
pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t sink_mutex = PTHREAD_MUTEX_INITIALIZER;
const char* output = nullptr;
bool fork_traced = true;
bool replace = false;
ThreadLog* logs = nullptr;  // every live thread's log
void* sink = nullptr;       // opened at the first drain
int sink_fd = -1;           // the writer's temporary file
std::string sink_path;      // its name, for opening it again
struct stat sink_stat{};    // its identity, to tell it from a file of the program's
bool may_open = true;       // false after an error, after the exit flush, in a --no-fork child
bool child = false;         // a descendant of the traced process: named with its pid
unsigned image = 0;         // execs this process made before this trace (exec_begin)
pid_t owner = 0;            // the process the state above belongs to (not a vfork child)
pthread_key_t exit_key;
pthread_once_t setup_once = PTHREAD_ONCE_INIT;

[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadLog* own = nullptr;
[[gnu::tls_model("initial-exec")]] constinit thread_local bool exited = false;

// ---- the trace file ------------------------------------------------------------------------

// The output pattern with %p replaced by the pid. A descendant whose
// pattern has no %p adds ".PID", so it never takes its parent's name; the
// trace begun after the process's Nth exec adds ".execN", so it never takes
// the name of the trace finished before it.
std::string output_path() {
    std::string pattern = output ? output : tracer.default_output;
    if (child && pattern.find("%p") == std::string::npos) pattern += ".%p";
    const std::string pid = std::to_string(::getpid());
    for (auto at = pattern.find("%p"); at != std::string::npos; at = pattern.find("%p", at + pid.size())) {
        pattern.replace(at, 2, pid);
    }
    return image == 0 ? pattern : pattern + ".exec" + std::to_string(image);
}

std::string link_of(int dirfd, const char* name) {
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(dirfd, name, target, sizeof target - 1);
    return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : std::string();
}

// The descriptor of the writer's temporary file, `DIR/BASE.XXXXXX.partial`,
// and that file's name. The runtime does not expose them; /proc/self/fd does.
int find_temporary(const std::string& path, std::string& name) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    char real[PATH_MAX];
    if (!::realpath(dir.c_str(), real)) return -1;
    const std::string prefix = std::string(real) + (std::string_view(real) == "/" ? "" : "/") +
                               path.substr(slash == std::string::npos ? 0 : slash + 1) + ".";
    DIR* fds = ::opendir("/proc/self/fd");
    if (!fds) return -1;
    int found = -1;
    while (const dirent* d = ::readdir(fds)) {
        const std::string link = link_of(::dirfd(fds), d->d_name);
        if (link.starts_with(prefix) && link.ends_with(".partial")) {
            found = std::atoi(d->d_name);
            name = link;
        }
    }
    ::closedir(fds);
    return found;
}

// Stops tracing for good in this process after an error; with `sink_mutex` held.
void give_up(const std::string& why) {
    tracing.store(false);
    may_open = false;
    say(why + "; not tracing any further");
    if (sink) tracer.destroy(sink);  // removes its temporary file
    sink = nullptr;
}

// Stops tracing when the trace's descriptor number has become a file of the
// program's: the writer is left as it is, never flushed or closed, since
// either would reach the program's file (its stdio buffer is off, so exit()
// flushes nothing into it). What was written stays in the temporary file.
void abandon_sink() {
    tracing.store(false);
    may_open = false;
    say("the traced program closed the trace's descriptor (" + std::to_string(sink_fd) +
        ") and opened a file of its own under that number; not tracing any further; the events written so far are in " +
        sink_path + " ('mtf recover' saves them)");
    sink = nullptr;
    sink_fd = -1;
}

// Programs that close descriptors they did not open (closefrom(), a daemon's
// clean-up) may close the trace's: checked by open_sink() before each batch
// of events and before the end of the trace, with `sink_mutex` held. A closed
// descriptor is opened again, at the same number and at the end of the
// file, where the writer left it.
bool sink_intact() {
    if (sink_fd < 0) return true;  // not found at open: nothing to check
    struct stat now{};
    if (::fstat(sink_fd, &now) == 0) {
        if (now.st_dev == sink_stat.st_dev && now.st_ino == sink_stat.st_ino) return true;
        abandon_sink();
        return false;
    }
    const int again = ::open(sink_path.c_str(), O_WRONLY | O_CLOEXEC);
    const bool reopened = again >= 0 && ::fstat(again, &now) == 0 && now.st_dev == sink_stat.st_dev &&
                          now.st_ino == sink_stat.st_ino && ::lseek(again, 0, SEEK_END) >= 0 &&
                          ::dup3(again, sink_fd, O_CLOEXEC) == sink_fd;
    if (again >= 0) ::close(again);
    if (reopened) return true;
    give_up("the traced program closed the trace's descriptor (" + std::to_string(sink_fd) + ") and it cannot be opened again");
    return false;
}

// With `sink_mutex` held. False when there is no trace to write to.
bool open_sink() {
    if (sink) return sink_intact();
    if (!may_open) return false;
    const std::string path = output_path();
    try {
        sink = tracer.open(path, replace);
        // The runtime opened it high and close-on-exec (rt::OutputFile).
        sink_fd = find_temporary(path, sink_path);
        if (sink_fd >= 0 && ::fstat(sink_fd, &sink_stat) != 0) sink_fd = -1;
    } catch (const std::exception& e) {
        give_up(e.what());
    }
    return sink != nullptr;
}

void discard(unsigned char* events, std::uint32_t n) {
    if (!tracer.discard) return;
    for (std::uint32_t i = 0; i < n; ++i) tracer.discard(events + std::size_t(i) * tracer.event_size);
}

// Writes events to the trace; with `sink_mutex` held. tids: each event's
// thread, or null for `tid`'s.
void write_now(const std::uint32_t* tids, std::uint32_t tid, unsigned char* events, std::uint32_t n) {
    if (n == 0) return;
    std::uint32_t i = 0;
    if (open_sink()) {
        try {
            constexpr std::uint32_t lookahead = 32;
            for (; i < n; ++i) {
                if (tracer.ahead && i + lookahead < n) tracer.ahead(sink, events + std::size_t(i + lookahead) * tracer.event_size);
                tracer.write(sink, tids ? tids[i] : tid, events + std::size_t(i) * tracer.event_size);
            }
        } catch (const std::exception& e) {
            give_up(e.what());
        }
    }
    discard(events + std::size_t(i) * tracer.event_size, n - i);
}

// ---- batches and the writer thread -----------------------------------------------------------

// Events of any threads, in the order they left their logs. A ring of
// batch_count: `queued` of them from `head` wait for (or are in) the
// writer thread, and the next one after them fills.
constexpr std::uint32_t batch_capacity = 16384;
constexpr unsigned batch_count = 4;

struct Batch {
    std::uint32_t count = 0;
    std::uint32_t* tids = nullptr;     // batch_capacity of them
    unsigned char* events = nullptr;  // batch_capacity events
};

Batch batches[batch_count];              // mapped at the first event the writer thread takes
pthread_mutex_t queue_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t queue_changed = PTHREAD_COND_INITIALIZER;
unsigned head = 0, queued = 0;           // queue_mutex
bool stopping = false;                   // queue_mutex: the writer thread ends when the queue is empty
pthread_t writer;
bool writer_running = false;             // mutex; false: events are written at once (no thread could start)
// mutex: mapping the batches or starting the thread failed, or the exit
// flush stopped it: events are written at once from then on.
bool writer_off = false;

Batch& filling() { return batches[(head + queued) % batch_count]; }  // with mutex held; queued < batch_count

void* writer_main(void*) {
    inside = true;  // for good: the recorder's own work
    ::pthread_mutex_lock(&queue_mutex);
    for (;;) {
        while (queued == 0 && !stopping) ::pthread_cond_wait(&queue_changed, &queue_mutex);
        if (queued == 0) break;
        Batch& b = batches[head];
        ::pthread_mutex_unlock(&queue_mutex);
        ::pthread_mutex_lock(&sink_mutex);
        write_now(b.tids, 0, b.events, b.count);
        ::pthread_mutex_unlock(&sink_mutex);
        ::pthread_mutex_lock(&queue_mutex);
        b.count = 0;
        head = (head + 1) % batch_count;
        --queued;
        ::pthread_cond_broadcast(&queue_changed);
    }
    ::pthread_mutex_unlock(&queue_mutex);
    return nullptr;
}

// With `mutex` held: maps the batches and starts the writer thread, once a
// process; false when it cannot (events are then written at once).
bool start_writer() {
    if (writer_running || writer_off) return writer_running;
    const std::size_t bytes = std::size_t(batch_capacity) * (sizeof(std::uint32_t) + tracer.event_size);
    for (Batch& b : batches) {
        if (b.tids) continue;
        void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) return !(writer_off = true);
        b.tids = static_cast<std::uint32_t*>(memory);
        b.events = static_cast<unsigned char*>(memory) + std::size_t(batch_capacity) * sizeof(std::uint32_t);
    }
    // The trace is made here, in a traced thread inside the recorder, as
    // without the writer thread: the runtime opens it at a low descriptor
    // and moves it high, a moment in which a program that manipulates
    // descriptors it did not open must not be running its own code.
    ::pthread_mutex_lock(&sink_mutex);
    open_sink();
    ::pthread_mutex_unlock(&sink_mutex);
    stopping = false;
    writer_running = ::pthread_create(&writer, nullptr, writer_main, nullptr) == 0;
    writer_off = !writer_running;
    return writer_running;
}

// With `mutex` held: the filling batch goes to the writer thread; waits
// while every batch is in use.
void hand_over() {
    ::pthread_mutex_lock(&queue_mutex);
    if (filling().count != 0) {
        ++queued;
        ::pthread_cond_broadcast(&queue_changed);
    }
    while (queued == batch_count) ::pthread_cond_wait(&queue_changed, &queue_mutex);
    ::pthread_mutex_unlock(&queue_mutex);
}

// With `mutex` held: every event taken so far is in the trace (or dropped
// with the trace) when this returns; the writer thread is idle.
void flush_batches() {
    if (!writer_running) return;
    hand_over();
    ::pthread_mutex_lock(&queue_mutex);
    while (queued != 0) ::pthread_cond_wait(&queue_changed, &queue_mutex);
    ::pthread_mutex_unlock(&queue_mutex);
}

// With `mutex` held, after flush_batches(): the writer thread ends.
void stop_writer() {
    if (!writer_running) return;
    ::pthread_mutex_lock(&queue_mutex);
    stopping = true;
    ::pthread_cond_broadcast(&queue_changed);
    ::pthread_mutex_unlock(&queue_mutex);
    ::pthread_join(writer, nullptr);
    writer_running = false;
    writer_off = true;  // a thread's last events after the exit flush start no new one
}

// With `mutex` held (and the log's lock, when the log is shared): the
// events go into batches for the writer thread, or to the trace at once.
void write_events(std::uint32_t tid, unsigned char* events, std::uint32_t n) {
    if (!start_writer()) {
        ::pthread_mutex_lock(&sink_mutex);
        write_now(nullptr, tid, events, n);
        ::pthread_mutex_unlock(&sink_mutex);
        return;
    }
    while (n != 0) {
        Batch& b = filling();
        const std::uint32_t take = std::min(n, batch_capacity - b.count);
        for (std::uint32_t i = 0; i < take; ++i) b.tids[b.count + i] = tid;
        std::memcpy(b.events + std::size_t(b.count) * tracer.event_size, events, std::size_t(take) * tracer.event_size);
        b.count += take;
        events += std::size_t(take) * tracer.event_size;
        n -= take;
        if (b.count == batch_capacity) hand_over();
    }
}

// Moves a log's events to the writer; with `mutex` held.
void drain(ThreadLog& log) {
    log.lock();
    write_events(log.tid, log.event(0), log.count);
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

void free_log(ThreadLog* log) {
    const std::size_t bytes = log->bytes;
    log->~ThreadLog();
    ::munmap(log, bytes);
}

void thread_exit(void* p);
void before_fork();
void after_fork_parent();
void after_fork_child();

std::string image_variable() { return std::string(tracer.env_prefix) + "IMAGE"; }

// Which image of which process this is, from PREFIX_IMAGE = "PID:N:CHILD",
// set by the launcher (N = 0) and by exec_begin(). Another process's entry,
// inherited through posix_spawn(), system() or vfork(), makes this process a
// descendant.
void read_image() {
    const char* value = std::getenv(image_variable().c_str());
    if (!value) return;
    char* end = nullptr;
    const long pid = std::strtol(value, &end, 10);
    if (pid != ::getpid()) {
        child = true;
        return;
    }
    unsigned long n = 0, descendant = 0;
    if (*end == ':') n = std::strtoul(end + 1, &end, 10);
    if (*end == ':') descendant = std::strtoul(end + 1, &end, 10);
    image = static_cast<unsigned>(n);
    child = descendant != 0;
}

// Once a process, at its first event: the configuration and the hooks.
void setup() {
    const std::string prefix = tracer.env_prefix;
    read_image();
    output = std::getenv((prefix + "OUTPUT").c_str());
    fork_traced = !option("NO_FORK");
    replace = option("REPLACE");
    if (tracer.setup) tracer.setup();
    ::pthread_key_create(&exit_key, thread_exit);
    ::pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

// Puts the thread's first event in a fresh or reused log.
void start_log(ThreadLog* log) {
    log->count = 0;
    log->tid = thread_id();
    if (tracer.thread_event(true, log->event(0))) log->count = 1;
}

// This thread's log, made at its first event; null after the thread's exit
// hook ran (its last events are written one at a time) or when out of memory.
ThreadLog* own_log() {
    if (own || exited) return own;
    ::pthread_once(&setup_once, setup);
    const std::size_t bytes = sizeof(ThreadLog) + std::size_t(log_capacity) * tracer.event_size;
    void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return nullptr;
    own = new (memory) ThreadLog;
    own->bytes = bytes;
    start_log(own);
    ::pthread_mutex_lock(&mutex);
    link_log(own);
    ::pthread_mutex_unlock(&mutex);
    // A non-null value makes thread_exit() run when the thread ends.
    ::pthread_setspecific(exit_key, own);
    return own;
}

// The pthread key's destructor: the thread's log goes to the trace, then its
// last event; events after this are written one by one.
void thread_exit(void* p) {
    Inside guard;
    auto* log = static_cast<ThreadLog*>(p);
    alignas(std::max_align_t) unsigned char last[256];
    const bool has_last = tracer.event_size <= sizeof last && tracer.thread_event(false, last);
    ::pthread_mutex_lock(&mutex);
    drain(*log);
    if (has_last) write_events(log->tid, last, 1);
    unlink_log(log);
    ::pthread_mutex_unlock(&mutex);
    own = nullptr;
    exited = true;
    free_log(log);
}

// ---- fork ---------------------------------------------------------------------------------

// No thread may hold the writer across fork(): the child gets it
// consistent. The parent's events so far are written first, so that the
// child, which has no writer thread, holds none of them in a batch.
void before_fork() {
    inside = true;
    ::pthread_mutex_lock(&mutex);
    flush_batches();
    ::pthread_mutex_lock(&sink_mutex);
}

void after_fork_parent() {
    ::pthread_mutex_unlock(&sink_mutex);
    ::pthread_mutex_unlock(&mutex);
    inside = false;
}

// The child starts a trace of its own (or none): the parent's writer, its
// file and the events the parent still holds stay the parent's.
void after_fork_child() {
    ::pthread_mutex_init(&mutex, nullptr);
    ::pthread_mutex_init(&sink_mutex, nullptr);
    ::pthread_mutex_init(&queue_mutex, nullptr);
    ::pthread_cond_init(&queue_changed, nullptr);
    writer_running = writer_off = stopping = false;  // the parent's thread is not here; this process starts its own
    head = queued = 0;
    child = true;
    image = 0;
    owner = ::getpid();
    if (sink && sink_fd >= 0) {
        // /dev/null over the descriptor: the parent's writer, left alone (never
        // destroyed here), may still flush a stale buffer at the child's exit;
        // it goes nowhere, and the number stays taken so that no file the
        // child opens later receives it.
        const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
            ::dup2(null, sink_fd);
            ::close(null);
        }
    }
    sink = nullptr;
    sink_fd = -1;
    for (ThreadLog* log = logs; log;) {
        ThreadLog* next = log->next;
        if (log != own) free_log(log);  // threads that do not exist here
        log = next;
    }
    logs = nullptr;
    if (own) {
        start_log(own);
        link_log(own);
    }
    if (!fork_traced) {
        tracing.store(false);
        may_open = false;
    }
    inside = false;
}

// ---- process exit and exec ----------------------------------------------------------------

// With `mutex` held, after flush_batches(): the end of the trace, made now
// when no event made it (a process without events still gets its trace),
// renamed into place.
void end_trace() {
    ::pthread_mutex_lock(&sink_mutex);
    try {
        if (open_sink()) tracer.close(sink);
    } catch (const std::exception& e) {
        say(e.what());
    }
    if (sink) tracer.destroy(sink);
    sink = nullptr;
    sink_fd = -1;
    ::pthread_mutex_unlock(&sink_mutex);
}

// Runs at exit() (and the end of main): every thread's events, then the end
// of the trace. Later events (other libraries' destructors, threads still
// running) are not recorded.
[[gnu::destructor]] void finish() {
    inside = true;  // for good: this thread records nothing more
    ::pthread_once(&setup_once, setup);
    ::pthread_mutex_lock(&mutex);
    // Off before the logs are drained: an event is then either in a log
    // this loop drains or refused by record().
    const bool traced = tracing.exchange(false);
    if (traced) {
        for (ThreadLog* log = logs; log; log = log->next) drain(*log);
    }
    flush_batches();
    stop_writer();
    if (traced) end_trace();
    ::pthread_mutex_lock(&sink_mutex);
    may_open = false;
    ::pthread_mutex_unlock(&sink_mutex);
    ::pthread_mutex_unlock(&mutex);
}

// Before main, so that a vfork child, which runs in this memory without
// fork's handlers, is told apart (exec_owner()).
[[gnu::constructor]] void claim() { owner = ::getpid(); }

// Moves a log's events to the writer and starts it again with the thread's
// first event, for the trace a failed exec goes on with; with `mutex` held.
void drain_and_restart(ThreadLog& log) {
    log.lock();
    write_events(log.tid, log.event(0), log.count);
    log.count = tracer.thread_event(true, log.event(0)) ? 1 : 0;
    log.unlock();
}

}  // namespace

bool exec_owner() { return owner == ::getpid(); }

std::string exec_begin() {
    ::pthread_once(&setup_once, setup);
    ::pthread_mutex_lock(&mutex);
    if (tracing.load()) {
        for (ThreadLog* log = logs; log; log = log->next) drain_and_restart(*log);
        flush_batches();
        end_trace();
    }
    ++image;
    return image_variable() + "=" + std::to_string(::getpid()) + ":" + std::to_string(image) + ":" + (child ? "1" : "0");
}

void exec_failed() { ::pthread_mutex_unlock(&mutex); }

void start_thread() { own_log(); }

bool record(const void* event) {
    ThreadLog* log = own_log();
    auto* bytes = static_cast<unsigned char*>(const_cast<void*>(event));
    if (!log) {
        ::pthread_mutex_lock(&mutex);
        write_events(thread_id(), bytes, 1);
        ::pthread_mutex_unlock(&mutex);
        return true;
    }
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
    const bool stored = tracing.load();
    if (stored) std::memcpy(log->event(log->count++), event, tracer.event_size);
    log->unlock();
    if (!stored) discard(bytes, 1);
    return stored;
}

bool option(const char* suffix) {
    const char* v = std::getenv((std::string(tracer.env_prefix) + suffix).c_str());
    return v && std::strcmp(v, "1") == 0;
}

void say(const std::string& text) {
    const std::string line = std::string(tracer.name) + ": " + text + "\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

std::uint32_t thread_id() { return static_cast<std::uint32_t>(::gettid()); }

std::uint64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace metatf::tracing
