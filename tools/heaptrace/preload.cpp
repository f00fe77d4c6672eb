// libmetatf_heaptrace.so: preloaded into a program, records its heap
// allocations as a HATF 1.0 trace (docs/tracers.md).
//
// The logs, fork, exec and exit are tools/tracing's (recorder.hpp, exec.cpp); this file
// turns allocator calls into events. The allocator itself is
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
#include "recorder.hpp"
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

using tracing::Inside;
using tracing::traced;

Config config;

std::uint64_t now() { return config.time ? tracing::monotonic_ns() : 0; }

void setup() {
    config.threads = tracing::option("THREADS");
    config.time = tracing::option("TIME");
    config.compress = !tracing::option("NO_COMPRESS");
    // --compact, the default since --fast came, still wins over --fast.
    config.compact = !tracing::option("FAST") || tracing::option("COMPACT");
}

void* sink_open(const std::string& path, bool replace) {
    Config c = config;
    c.replace = replace;
    return new Sink(path, c, now());
}

void sink_write(void* sink, std::uint32_t tid, const void* event) {
    static_cast<Sink*>(sink)->write(tid, *static_cast<const Event*>(event));
}

void sink_ahead(void* sink, const void* event) { static_cast<Sink*>(sink)->ahead(*static_cast<const Event*>(event)); }

void sink_close(void* sink) { static_cast<Sink*>(sink)->close(); }

void sink_destroy(void* sink) { delete static_cast<Sink*>(sink); }

bool thread_event(bool start, void* event) {
    new (event) Event{start ? Kind::create_thread : Kind::destroy_thread, 0, 0, 0, now()};
    return true;
}

// Appends one event to this thread's log.
void record(Event e) {
    tracing::start_thread();
    e.time = now();
    tracing::record(&e);
}

std::uint64_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void record_alloc(std::size_t size, const void* p) {
    if (p) record(Event{Kind::alloc, size, address(p), 0, 0});
}

}  // namespace
}  // namespace metatf::heaptrace

namespace metatf::tracing {
static_assert(sizeof(heaptrace::Event) <= 256);
const Tracer tracer{"metatf-heaptrace", "METATF_HEAPTRACE_", "heap.%p.mtf", sizeof(heaptrace::Event),
                    heaptrace::setup,   heaptrace::sink_open,     heaptrace::sink_write,  heaptrace::sink_close,
                    heaptrace::sink_destroy, heaptrace::thread_event, nullptr,
                    heaptrace::sink_ahead};
}  // namespace metatf::tracing

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
