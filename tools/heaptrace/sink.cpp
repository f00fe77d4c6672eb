#include "sink.hpp"

#include "recorder.hpp"

namespace metatf::heaptrace {

namespace {

namespace rt = metatf::rt;
using hatf10::RecordType;

// The writer buffers whole segments itself; smaller segments than its 1 MiB
// default keep more of a crashed program's trace recoverable.
constexpr std::size_t segment_bytes = std::size_t(256) << 10;

rt::WriterOptions writer_options(const Config& config) {
    rt::WriterOptions options;
    options.chunk_bytes = segment_bytes;
    options.output.replace = config.replace;
    // The narrow widths of announce() hold most values; the writer widens a
    // field where values need it and narrows it once 16 in a row fit.
    options.narrow_after = 16;
    if (config.compress) options.compress = tracing::compress_level;
    return options;
}

}  // namespace

Sink::Sink(const std::string& path, const Config& config, std::uint64_t start_time)
    : w_(path, writer_options(config)), threads_(config.threads) {
    announce(config, start_time);
}

namespace {

// Where each event record keeps the fields the start metadata changes (0: none).
struct Layout {
    RecordType type;
    std::uint32_t size, address, new_address, thread, time;
};

template <typename R>
constexpr Layout realloc_layout() {
    return {R::type, R::size_field, R::oldAddress_field, R::newAddress_field, R::thread_field, R::time_field};
}

constexpr Layout layouts[] = {
    {RecordType::Alloc, hatf10::Alloc::size_field, hatf10::Alloc::address_field, 0, hatf10::Alloc::thread_field,
     hatf10::Alloc::time_field},
    {RecordType::Free, 0, hatf10::Free::address_field, 0, hatf10::Free::thread_field, hatf10::Free::time_field},
    realloc_layout<hatf10::ReallocNoAlloc>(),
    realloc_layout<hatf10::ReallocAllocFree>(),
    realloc_layout<hatf10::ReallocAlloc>(),
    realloc_layout<hatf10::ReallocFree>(),
    {RecordType::CreateThread, 0, 0, 0, hatf10::CreateThread::thread_field, hatf10::CreateThread::time_field},
    {RecordType::DestroyThread, 0, 0, 0, hatf10::DestroyThread::thread_field, hatf10::DestroyThread::time_field},
};

}  // namespace

// Narrow encodings, set by metadata at the start: most values fit them, and
// the writer widens a field where a value does not, and narrows it again
// (WriterOptions::narrow_after). Addresses are deltas from the record type's previous
// address (blocks come from a few regions, near each other); sizes 2 bytes;
// threads offsets from the process id (the kernel numbers a process's
// threads from its pid up); times deltas from the record type's previous
// time. The widths are the smallest that rarely widen on the programs
// measured in docs/tracers.md.
void Sink::announce(const Config& config, std::uint64_t start_time) {
    constexpr std::uint32_t address_width = 3, size_width = 2, thread_width = 1, time_width = 2;
    const auto pid = static_cast<std::uint64_t>(::getpid());
    for (const Layout& l : layouts) {
        for (std::uint32_t field : {l.address, l.new_address}) {
            if (field == 0) continue;
            w_.set_interpretation(l.type, field, rt::MetaOp::delta, 0);
            w_.set_width(l.type, field, address_width);
        }
        if (l.size != 0) w_.set_width(l.type, l.size, size_width);
        if (config.threads) {
            w_.set_interpretation(l.type, l.thread, rt::MetaOp::base_offset, pid);
            w_.set_width(l.type, l.thread, thread_width);
        }
        if (config.time) {
            w_.set_interpretation(l.type, l.time, rt::MetaOp::delta, start_time);
            w_.set_width(l.type, l.time, time_width);
        }
    }
}

void Sink::write(std::uint32_t tid, const Event& e) {
    const std::uint64_t thread = threads_ ? tid : 0;
    switch (e.kind) {
        case Kind::alloc: {
            hatf10::Alloc a;
            a.size = e.size;
            a.address = e.address;
            a.thread = thread;
            a.time = e.time;
            w_.write(a);
            break;
        }
        case Kind::free: {
            hatf10::Free f;
            f.address = e.address;
            f.thread = thread;
            f.time = e.time;
            w_.write(f);
            break;
        }
        case Kind::create_thread:
        case Kind::destroy_thread: {
            if (!threads_) break;
            if (e.kind == Kind::create_thread) {
                hatf10::CreateThread c;
                c.thread = thread;
                c.time = e.time;
                w_.write(c);
            } else {
                hatf10::DestroyThread d;
                d.thread = thread;
                d.time = e.time;
                w_.write(d);
            }
            break;
        }
        default: write_realloc(thread, e); break;
    }
}

namespace {

template <typename Record>
void write_realloc_as(hatf10::Writer& w, std::uint64_t thread, const Event& e) {
    Record r;
    r.size = e.size;
    r.oldAddress = e.address;
    r.newAddress = e.new_address;
    r.thread = thread;
    r.time = e.time;
    w.write(r);
}

}  // namespace

void Sink::write_realloc(std::uint64_t thread, const Event& e) {
    switch (e.kind) {
        case Kind::realloc_no_alloc: return write_realloc_as<hatf10::ReallocNoAlloc>(w_, thread, e);
        case Kind::realloc_alloc_free: return write_realloc_as<hatf10::ReallocAllocFree>(w_, thread, e);
        case Kind::realloc_alloc: return write_realloc_as<hatf10::ReallocAlloc>(w_, thread, e);
        case Kind::realloc_free: return write_realloc_as<hatf10::ReallocFree>(w_, thread, e);
        default: return;
    }
}

}  // namespace metatf::heaptrace
