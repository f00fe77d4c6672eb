#include "sink.hpp"

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
    std::uint32_t address, new_address, thread, time;
};

template <typename R>
constexpr Layout realloc_layout() {
    return {R::type, R::oldAddress_field, R::newAddress_field, R::thread_field, R::time_field};
}

constexpr Layout layouts[] = {
    {RecordType::Alloc, hatf10::Alloc::address_field, 0, hatf10::Alloc::thread_field, hatf10::Alloc::time_field},
    {RecordType::Free, hatf10::Free::address_field, 0, hatf10::Free::thread_field, hatf10::Free::time_field},
    realloc_layout<hatf10::ReallocNoAlloc>(),
    realloc_layout<hatf10::ReallocAllocFree>(),
    realloc_layout<hatf10::ReallocAlloc>(),
    realloc_layout<hatf10::ReallocFree>(),
    {RecordType::CreateThread, 0, 0, hatf10::CreateThread::thread_field, hatf10::CreateThread::time_field},
    {RecordType::DestroyThread, 0, 0, hatf10::DestroyThread::thread_field, hatf10::DestroyThread::time_field},
};

}  // namespace

// The DTD's initial encoding has 4-byte addresses and no thread or time;
// metadata at the start widens addresses to 8 bytes and switches on what was asked for.
void Sink::announce(const Config& config, std::uint64_t start_time) {
    for (const Layout& l : layouts) {
        if (l.address != 0) w_.set_width(l.type, l.address, 8);
        if (l.new_address != 0) w_.set_width(l.type, l.new_address, 8);
        if (config.threads) w_.set_interpretation(l.type, l.thread, rt::MetaOp::none);
        // A delta from the start time: within one thread's run of records,
        // small increasing numbers, which compress well.
        if (config.time) w_.set_interpretation(l.type, l.time, rt::MetaOp::delta, start_time);
    }
}

void Sink::write(std::uint32_t tid, const Event& e) {
    const std::uint64_t thread = threads_ ? tid : 0;
    switch (e.kind) {
        case Kind::alloc: {
            // The DTD's size is 4 bytes: a larger request widens it for this record only.
            const bool wide = e.size > 0xffffffffu;
            if (wide) w_.set_width(RecordType::Alloc, hatf10::Alloc::size_field, 8);
            hatf10::Alloc a;
            a.size = e.size;
            a.address = e.address;
            a.thread = thread;
            a.time = e.time;
            w_.write(a);
            if (wide) w_.set_width(RecordType::Alloc, hatf10::Alloc::size_field, 4);
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
    const bool wide = e.size > 0xffffffffu;
    if (wide) w.set_width(Record::type, Record::size_field, 8);
    Record r;
    r.size = e.size;
    r.oldAddress = e.address;
    r.newAddress = e.new_address;
    r.thread = thread;
    r.time = e.time;
    w.write(r);
    if (wide) w.set_width(Record::type, Record::size_field, 4);
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
