// libFuzzer harness of mtf's trace reading: any bytes, as a whole trace file,
// are opened as every mtf command opens a trace (mtf::Trace: the DTD embedded
// in the header is compiled and must have the trace's fingerprint) and read
// with mtf::for_each_record; each record's values are walked by
// mtf::emit_record, as dump, stats and convert walk them.
//
// The outcomes allowed: records to the end; an InputError (the embedded DTD
// does not compile, or lays out records differently); a TraceError of the
// trace's content (never an I/O error: the file reads fine) at a byte inside
// the file and, once records are being read, at the record being read. A
// crash, a sanitizer report, a hang, memory past -rss_limit_mb or any other
// exception is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common.hpp"

namespace {

// The reader opens a path: every input is written to one memory file, opened through /proc.
struct MemoryFile {
    int fd = ::memfd_create("fuzz_mtf_trace", 0);
    std::string path = "/proc/self/fd/" + std::to_string(fd);

    void hold(const std::uint8_t* data, std::size_t size) const {
        if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
        if (size != 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
    }
};

const MemoryFile input;

// Takes every value, so that none is left unread.
struct Toucher : mtf::Sink {
    std::uint64_t sum = 0;
    void integer(const char*, std::uint64_t v, const metatf::rt::FieldDesc&) override { sum += v; }
    void real(const char*, double v) override { sum += static_cast<std::uint64_t>(v == v); }
    void bytes(const char*, std::span<const std::byte> v) override {
        for (std::byte b : v) sum += std::to_integer<unsigned>(b);
    }
    void name(const char*, std::string_view v) override { sum += v.size(); }
    void number(std::uint64_t v, bool) override { sum += v; }
    void begin_list(const std::string& key) override { sum += key.size(); }
    void end_list() override {}
    void begin_element() override { ++sum; }
    void end_element() override {}
};

volatile std::uint64_t sink = 0;  // keeps the values read from being optimized away

[[noreturn]] void finding(const metatf::rt::TraceError& e, const char* what) {
    std::fprintf(stderr, "fuzz_mtf_trace: %s: %s (%s)\n", what, e.what(), metatf::rt::error_kind_name(e.kind));
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input.hold(data, size);
    bool opened = false;
    std::uint64_t records = 0;
    try {
        mtf::Trace trace(input.path, std::nullopt);
        opened = true;
        Toucher touch;
        mtf::for_each_record("fuzz", trace, [&](const mtf::ReadRecord& r) {
            mtf::emit_record(trace.dtd(), r, touch);
            ++records;
        });
        sink = touch.sum;
    } catch (const mtf::InputError&) {
        // the embedded DTD does not compile or does not match the trace
    } catch (const metatf::rt::TraceError& e) {
        if (e.kind == metatf::rt::ErrorKind::io) finding(e, "an I/O error on a readable file");
        if (e.offset > size) finding(e, "a position past the end of the file");
        if (opened && !e.has_position) finding(e, "an error in the records without a position");
        if (opened && e.record != records) finding(e, "an error that names another record than the one being read");
    }
    return 0;
}
