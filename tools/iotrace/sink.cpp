#include "sink.hpp"

#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <gnu/libc-version.h>
#include <span>
#include <string_view>

#include "recorder.hpp"

namespace metatf::iotrace {

namespace {

namespace rt = metatf::rt;

rt::WriterOptions writer_options(bool replace, bool compress) {
    rt::WriterOptions options;
    if (compress) options.compress = tracing::compress_level;
    // Smaller segments than the 1 MiB default keep more of a crashed
    // program's trace recoverable.
    options.chunk_bytes = std::size_t(256) << 10;
    options.output.replace = replace;
    return options;
}

std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

// A path split into CHARISMA's name (the last component, at most 255 bytes)
// and path (the directory, at most 65535).
struct Split {
    std::string_view name, dir;
};

Split split(std::string_view full) {
    const auto slash = full.rfind('/');
    Split s;
    if (slash == std::string_view::npos) {
        s.name = full;
    } else {
        s.name = full.substr(slash + 1);
        s.dir = full.substr(0, slash == 0 ? 1 : slash);
    }
    if (s.name.size() > 255) s.name = s.name.substr(0, 255);
    if (s.dir.size() > 65535) s.dir = s.dir.substr(0, 65535);
    return s;
}

}  // namespace

Sink::Sink(const std::string& path, bool replace, bool compress) : w_(path, writer_options(replace, compress)), pid_(static_cast<std::uint64_t>(::getpid())) {
    rw_.numClients = 1;
    rw_.numClients_items.resize(1);
    begin();
}

// The header: when and where; then the application, this process.
void Sink::begin() {
    charisma::Header h;
    const std::time_t now = std::time(nullptr);
    h.startDate = now;
    std::tm local{};
    ::localtime_r(&now, &local);
    h.gmtOffset = local.tm_gmtoff;
    h.timestamp = tracing::monotonic_ns();
    h.systemId = 0;    // left out, as CHARISMA allows
    h.systemType = 0;  // not one of CHARISMA's machines: Linux
    h.mdVersion = 0;
    // Zero-padded, cut at 80 bytes.
    char release[80] = {};
    utsname u{};
    if (::uname(&u) == 0) {
        const std::string text = std::string(u.sysname) + " " + u.release + " " + u.machine + " glibc " + ::gnu_get_libc_version();
        std::memcpy(release, text.data(), std::min(text.size(), sizeof release));
    }
    h.releaseData = std::as_bytes(std::span(release));
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    h.numProcessors = cpus;
    struct sysinfo si{};
    if (::sysinfo(&si) == 0 && cpus > 0) {
        h.memoryPerProc = static_cast<std::int64_t>(si.totalram * si.mem_unit / (1u << 20) / static_cast<unsigned long>(cpus));
    }
    h.numDisks = 0;
    h.numIoNodes = 0;
    h.memoryPerDisk = 0;
    h.timestampUnit = 1e-9;
    w_.write(h);

    charisma::AppLoad a;
    a.timestamp = h.timestamp;
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe);
    const Split s = split(n > 0 ? std::string_view(exe, static_cast<std::size_t>(n)) : std::string_view());
    a.nameLength = s.name.size();
    a.name = bytes(s.name);
    a.pathLength = s.dir.size();
    a.path = bytes(s.dir);
    a.userId = ::getuid();
    a.initialLoadSize = 0;  // not known
    a.applId = pid_;
    a.numClients = 0;  // each thread joins with clientJoin
    w_.write(a);
}

void Sink::close() {
    charisma::AppExit e;
    e.timestamp = tracing::monotonic_ns();
    e.applId = pid_;
    w_.write(e);
    w_.close();
}

void Sink::write(std::uint32_t tid, const Event& e) {
    switch (e.kind) {
        case Kind::client_join:
        case Kind::client_leave: {
            if (e.kind == Kind::client_join) {
                w_.write(charisma::ClientJoin{.timestamp = e.start, .applId = pid_, .clientId = tid});
            } else {
                w_.write(charisma::ClientLeave{.timestamp = e.start, .applId = pid_, .clientId = tid});
            }
            break;
        }
        case Kind::open: {
            charisma::ClientOpen o;
            const Split s = split(e.path ? std::string_view(e.path) : std::string_view());
            o.timestamp = e.start;
            o.clientId = tid;
            o.nameLength = s.name.size();
            o.name = bytes(s.name);
            o.pathLength = s.dir.size();
            o.path = bytes(s.dir);
            o.fileId = e.file_id;
            o.fileDesc = static_cast<std::uint32_t>(e.fd);
            o.fileSize = e.size;
            o.creationDate = static_cast<std::int64_t>(e.count);
            o.openFlags = e.open_flags;
            w_.write(o);
            break;
        }
        case Kind::close:
            w_.write(charisma::ClientClose{
                .timestamp = e.start, .clientId = tid, .fileDesc = static_cast<std::uint32_t>(e.fd), .fileSize = e.size});
            break;
        case Kind::read:
        case Kind::write: {
            rw_.startTime = e.start;
            rw_.endTime = e.end;
            rw_.fileDesc = static_cast<std::uint32_t>(e.fd);
            // synchronous, a single client's request; 0x02 for a write
            rw_.operationType = 0x04u | (e.kind == Kind::write ? 0x02u : 0u);
            rw_.asyncId = 0;
            rw_.applId = pid_;
            auto& r = rw_.numClients_items[0];
            r.ioRequest_offset = e.offset;
            r.ioRequest_memoryOffset = e.memory;
            r.ioRequest_ioSize = e.size;
            r.ioRequest_clientId = tid;
            w_.write(rw_);
            break;
        }
        case Kind::extend:
            w_.write(charisma::Extend{
                .timestamp = e.start, .clientId = tid, .fileId = e.file_id, .originalSize = e.size, .newSize = e.new_size});
            break;
        case Kind::truncate:
            w_.write(charisma::Truncate{
                .timestamp = e.start, .clientId = tid, .fileId = e.file_id, .originalSize = e.size, .newSize = e.new_size});
            break;
        case Kind::link:
            w_.write(charisma::Link{.timestamp = e.start, .clientId = tid, .fileId = e.file_id, .newLinkCount = e.count});
            break;
        case Kind::unlink:
            w_.write(charisma::Unlink{.timestamp = e.start, .clientId = tid, .fileId = e.file_id, .newLinkCount = e.count});
            break;
        case Kind::fcntl:
            w_.write(charisma::Fcntl{.timestamp = e.start,
                                     .clientId = tid,
                                     .fileDesc = static_cast<std::uint64_t>(e.fd),
                                     .request = e.request,
                                     .arg = e.arg});
            break;
    }
}

}  // namespace metatf::iotrace
