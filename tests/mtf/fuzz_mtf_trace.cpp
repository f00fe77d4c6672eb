// libFuzzer harness of mtf's trace reading: any bytes, as a whole trace, are
// opened as every mtf command opens a trace (mtf::Trace: the DTD embedded in
// the header is compiled and must have the trace's fingerprint) and read with
// mtf::for_each_record; each record's values are walked by mtf::emit_record,
// as dump, stats and convert walk them. Each input is read twice: as a file,
// and from a pipe, as `cat x.mtf | mtf check -` reads it (a version-2 trace
// then streams).
//
// The outcomes allowed: records to the end; an InputError (the embedded DTD
// does not compile, or lays out records differently); a TraceError of the
// trace's content (never an I/O error: the bytes read fine) at a byte inside
// the input and, once records are being read, at the record being read. A
// version-2 trace reads whole from both the file and the pipe, with the same
// records, or from neither. A crash, a sanitizer report, a hang, memory past
// -rss_limit_mb, an allocation past -malloc_limit_mb or any other exception
// is a finding.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common.hpp"

namespace rt = metatf::rt;

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

const MemoryFile file;

// The input in a pipe, written whole and closed before it is read; `path` is
// empty for an input larger than the pipe can hold.
struct Pipe {
    int fds[2] = {-1, -1};
    std::string path;

    Pipe(const std::uint8_t* data, std::size_t size) {
        if (::pipe2(fds, O_CLOEXEC) != 0) std::abort();
        const int capacity = ::fcntl(fds[1], F_GETPIPE_SZ);  // 64 KiB by default
        if (capacity < 0) std::abort();
        if (size <= static_cast<std::size_t>(capacity)) {
            if (size != 0 && ::write(fds[1], data, size) != static_cast<ssize_t>(size)) std::abort();
            path = "/proc/self/fd/" + std::to_string(fds[0]);
        }
        ::close(fds[1]);
    }
    ~Pipe() { ::close(fds[0]); }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
};

// Takes every value, so that none is left unread.
struct Toucher : mtf::Sink {
    std::uint64_t sum = 0;
    void integer(const char*, std::uint64_t v, const rt::FieldDesc&, unsigned) override { sum += v; }
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

[[noreturn]] void finding(const char* how, const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz_mtf_trace: read from a %s: %s: %s\n", how, what, detail.c_str());
    std::abort();
}

struct Outcome {
    bool whole = false;  // read to the end
    int version = 0;     // the container version, once the trace is open
    std::uint64_t records = 0, sum = 0;
};

// Reads the `size` bytes at `path` as mtf reads a trace; `how` names the way, for findings.
Outcome read(const std::string& path, std::size_t size, const char* how) {
    Outcome out;
    Toucher touch;
    try {
        mtf::Trace trace(path, std::nullopt);
        out.version = trace.header().version;
        mtf::for_each_record("fuzz", trace, [&](const mtf::ReadRecord& r) {
            mtf::emit_record(trace.dtd(), r, touch);
            ++out.records;
        });
        out.whole = true;
    } catch (const mtf::InputError&) {
        // the embedded DTD does not compile or does not match the trace
    } catch (const rt::TraceError& e) {
        const std::string detail = e.what() + std::string(" (") + rt::error_kind_name(e.kind) + ")";
        if (e.kind == rt::ErrorKind::io) finding(how, "an I/O error on bytes that read fine", detail);
        if (e.offset > size) finding(how, "a position past the end of the input", detail);
        if (out.version != 0 && !e.has_position) finding(how, "an error in the records without a position", detail);
        if (out.version != 0 && e.record != out.records) finding(how, "an error that names another record than the one being read", detail);
    }
    out.sum = touch.sum;
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    file.hold(data, size);
    const Outcome from_file = read(file.path, size, "file");
    const Pipe pipe(data, size);
    if (pipe.path.empty()) return 0;
    const Outcome from_pipe = read(pipe.path, size, "pipe");
    // Version 2 streams: a pipe must give what the file gives (version 1 needs a file).
    const int version = std::max(from_file.version, from_pipe.version);  // of whichever opened the trace
    if (version == 2 && from_file.whole != from_pipe.whole) {
        finding(from_file.whole ? "pipe" : "file", "refused, while the other way reads it whole", "");
    }
    if (from_file.whole && from_pipe.whole &&
        (from_file.records != from_pipe.records || from_file.sum != from_pipe.sum)) {
        finding("pipe", "other records than from the file", std::to_string(from_pipe.records) + " records, the file " +
                                                                std::to_string(from_file.records));
    }
    return 0;
}
