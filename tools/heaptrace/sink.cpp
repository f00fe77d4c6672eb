#include "sink.hpp"

#include "recorder.hpp"

namespace metatf::heaptrace {

namespace {

namespace rt = metatf::rt;
using hatf10::RecordType;

// The writer buffers whole segments itself. --fast: smaller segments than
// its 1 MiB default, which keep more of a crashed program's trace
// recoverable. By default larger ones, since a segment's pools start empty
// and zstd sees more.
constexpr std::size_t fast_segment_bytes = std::size_t(256) << 10, compact_segment_bytes = std::size_t(4) << 20;
// By default segments are compressed on the writer's own thread, where a
// stronger level costs the program little while a core is free. Level 5:
// level 6 throughout makes cppcheck's trace 6% smaller and Python's run 5%
// slower (docs/tracers.md, "Compact traces at the source").
constexpr int compact_level = 5;
// The first 8 MiB of records at level 7: a short run's whole trace (cppcheck's
// 7 MB: 6% smaller, no slower), and at most some 13 ms more for a long one.
constexpr int compact_first_level = 7;
constexpr std::uint64_t compact_first_bytes = std::uint64_t(8) << 20;

rt::WriterOptions writer_options(const Config& config) {
    rt::WriterOptions options;
    options.chunk_bytes = config.compact ? compact_segment_bytes : fast_segment_bytes;
    options.output.replace = config.replace;
    // The narrow widths of announce() hold most values; the writer widens a
    // field where values need it and narrows it once 16 in a row fit.
    options.narrow_after = 16;
    if (config.compress) options.compress = config.compact ? compact_level : tracing::compress_level;
    if (config.compress && config.compact) options.compress_first = {compact_first_level, compact_first_bytes};
    options.background = config.compact;
    // Its allocations are the tracer's own, not the program's.
    options.thread_start = [] { tracing::inside = true; };
    return options;
}

}  // namespace

Sink::Sink(const std::string& path, const Config& config, std::uint64_t start_time)
    : w_(path, writer_options(config)), threads_(config.threads), compact_(config.compact) {
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

// The default (not --fast): addresses as references to the values of two pools
// (docs/trace-format.md, 5.3; the layout is in docs/tracers.md), a fixed
// choice like the one `mtf recode` makes most often on heap traces: pool 1
// holds the live blocks, pool 2 the freed ones. An alloc's address is most
// often a block freed lately (allocators reuse them): it names one of
// pool 2 and joins pool 1; a free's names one of pool 1 and joins pool 2.
// A realloc record names its blocks ahead of the alloc and free records
// that follow it (docs/formats.md): the old block is one of pool 1 and the
// new one of pool 2, and each field feeds its own pool again, so the value
// moves to the front, where the next record finds it. A value not in its
// pool is an escape followed by its difference from the field's last such
// value (new blocks climb).
void refer(hatf10::Writer& w, const Layout& l) {
    constexpr std::uint64_t live = 1, freed = 2, pool_only = 0;
    // A block is freed from anywhere among the live ones (a hash's deletes),
    // but allocated mostly from the last few freed.
    constexpr std::uint32_t live_width = 2;
    const auto refers = [&](std::uint32_t field, std::uint64_t from, std::uint64_t to) {
        w.set_interpretation(l.type, field, rt::MetaOp::predict, from, pool_only);
        w.set_interpretation(l.type, field, rt::MetaOp::feed, to);
        w.set_width(l.type, field, from == live ? live_width : 1);
    };
    if (l.type == RecordType::Alloc) return refers(l.address, freed, live);
    if (l.type == RecordType::Free) return refers(l.address, live, freed);
    // realloc(p, n) in place keeps p live; realloc(NULL, n) has no old block, realloc(p, 0) no new one.
    if (l.new_address == 0) return;
    if (l.type != RecordType::ReallocAlloc) refers(l.address, live, live);
    if (l.type == RecordType::ReallocAllocFree || l.type == RecordType::ReallocAlloc) refers(l.new_address, freed, freed);
    // In place, the new address is the old one: the same reference, fed no second time.
    if (l.type == RecordType::ReallocNoAlloc) refers(l.new_address, live, 0);
}

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
        if (config.compact) refer(w_, l);
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
