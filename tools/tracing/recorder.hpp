// The machinery a preloaded tracer needs, whatever it records
// (docs/tracers.md): per-thread logs of fixed-size events drained to one
// writer under a mutex, a per-thread guard against tracing the tracer's own
// work, fork, exec and exit handling, and the output path.
//
// A tracer (libmetatf_heaptrace.so, libmetatf_iotrace.so) links this static
// library and defines `metatf::tracing::tracer`, which says how big its
// events are and how its writer opens, writes and closes a trace.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace metatf::tracing {

struct Tracer {
    const char* name;            // "metatf-heaptrace": prefixes messages on stderr
    const char* env_prefix;      // "METATF_HEAPTRACE_": OUTPUT, NO_FORK, REPLACE follow it
    const char* default_output;  // "heap.%p.mtf"
    std::size_t event_size;      // bytes of one event, copied as they are
    // Once a process, before the first event: reads the tracer's own options.
    void (*setup)();
    // All four run with the writer's mutex held and the guard set.
    // Makes the trace at `path` (the writer's temporary file until close);
    // throws std::exception when it cannot.
    void* (*open)(const std::string& path, bool replace);
    void (*write)(void* sink, std::uint32_t tid, const void* event);
    void (*close)(void* sink);    // the end of the trace, renamed into place; may throw
    void (*destroy)(void* sink);  // after close, or instead of it (the temporary file goes)
    // Fills the event a thread records first (start) or last (!start); false: none.
    bool (*thread_event)(bool start, void* event);
    // An event the recorder drops (tracing stopped) or a forked child discards.
    void (*discard)(void* event);  // may be null
    // A hint, some events ahead, that `event` is written soon: the sink may
    // start the cache misses its encoding will take. May be null.
    void (*ahead)(void* sink, const void* event);
};

// Defined by each tracer.
extern const Tracer tracer;

// Set while this thread does the tracer's own work (and for good after the
// exit flush): calls made meanwhile are not traced.
[[gnu::tls_model("initial-exec")]] extern constinit thread_local bool inside;
extern std::atomic<bool> tracing;

struct Inside {
    Inside() { inside = true; }
    ~Inside() { inside = false; }
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;
};

// Whether a call on this thread, now, is to be traced.
inline bool traced() { return !inside && tracing.load(std::memory_order_relaxed); }

// Makes this thread's log, with its first event, unless it exists: a tracer
// that timestamps its events calls this first, so that the thread's first
// event is not later than its next.
void start_thread();

// Appends an event (tracer.event_size bytes) to this thread's log; call with
// the guard set. False when it was dropped (tracer.discard has run on it).
bool record(const void* event);

// exec (exec.cpp). False in a vfork child, which shares this process's
// memory: the trace there is its parent's, to be left alone.
bool exec_owner();

// Before an exec, with the guard set: writes every thread's events and ends
// the trace, renamed into place as at exit, so that it is complete whether
// or not the exec succeeds. Returns the environment entry that tells the
// new image which trace it starts (PREFIX + "IMAGE=PID:N:CHILD"). Holds the
// writer's mutex until exec_failed(): no thread starts a trace meanwhile.
std::string exec_begin();

// After an exec that failed: the process goes on, its later events (and
// those other threads made meanwhile) in a new trace named as the next
// image's would be.
void exec_failed();

// The value of the environment variable env_prefix + suffix is "1".
bool option(const char* suffix);

// The zstd level the tracers write at unless told not to compress
// (--no-compress): a fast one, since the traced program waits while a
// segment is written (docs/tracers.md).
inline constexpr int compress_level = 1;

// A line on stderr, prefixed with the tracer's name.
void say(const std::string& text);

std::uint32_t thread_id();

// CLOCK_MONOTONIC in nanoseconds.
std::uint64_t monotonic_ns();

}  // namespace metatf::tracing
