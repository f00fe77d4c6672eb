// libmetatf_iotrace.so: preloaded into a program, records its file I/O
// through libc as a CHARISMA trace (docs/tracers.md). The logs, fork, exec
// and exit are tools/tracing's (recorder.hpp, exec.cpp); this file turns
// calls into events.
//
// Each wrapper finds the next definition with dlsym(RTLD_NEXT), calls it with
// the guard set (so the tracer's own I/O, the trace itself included, is not
// traced), and records what the call did when it succeeded. Only regular
// files are traced: a descriptor is followed from an open that returned a
// regular file to its close.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "event.hpp"
#include "recorder.hpp"
#include "sink.hpp"

namespace metatf::iotrace {
namespace {

using tracing::Inside;
using tracing::traced;

// ---- the tracer's hooks --------------------------------------------------------------------

bool compress = true;  // zstd chunks and DTD text, as the trace is written (--no-compress)

void setup() { compress = !tracing::option("NO_COMPRESS"); }

void* sink_open(const std::string& path, bool replace) { return new Sink(path, replace, compress); }
void sink_write(void* sink, std::uint32_t tid, const void* event) {
    static_cast<Sink*>(sink)->write(tid, *static_cast<const Event*>(event));
}
void sink_close(void* sink) { static_cast<Sink*>(sink)->close(); }
void sink_destroy(void* sink) { delete static_cast<Sink*>(sink); }

Event make(Kind kind) {
    Event e{};
    e.kind = kind;
    e.start = tracing::monotonic_ns();
    return e;
}

bool thread_event(bool start, void* event) {
    new (event) Event(make(start ? Kind::client_join : Kind::client_leave));
    return true;
}

void discard(void* event) {
    auto* e = static_cast<Event*>(event);
    std::free(e->path);
    e->path = nullptr;
}

// ---- descriptors ---------------------------------------------------------------------------

// Descriptors below this are followed; higher ones are never traced.
constexpr int max_fd = 1 << 16;
std::atomic<bool> followed[max_fd];

bool is_followed(int fd) { return fd >= 0 && fd < max_fd && followed[fd].load(std::memory_order_relaxed); }

// CHARISMA's file id: the device number in the high 32 bits, XORed with the
// inode number (docs/formats.md).
std::uint64_t file_id(std::uint64_t dev, std::uint64_t ino) { return (dev << 32) ^ ino; }

std::uint8_t charisma_flags(int flags) {
    std::uint8_t f = 0;
    switch (flags & O_ACCMODE) {
        case O_RDONLY: f |= 0x01; break;
        case O_RDWR: f |= 0x02; break;
        case O_WRONLY: f |= 0x04; break;
        default: break;
    }
    if (flags & O_CREAT) f |= 0x08;
    if (flags & O_TRUNC) f |= 0x10;
    if (flags & O_APPEND) f |= 0x20;
    return f;
}

// fopen's mode as open's flags.
int mode_flags(const char* mode) {
    if (!mode || !*mode) return 0;
    const bool plus = std::strchr(mode, '+') != nullptr;
    switch (mode[0]) {
        case 'r': return plus ? O_RDWR : O_RDONLY;
        case 'w': return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
        case 'a': return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
        default: return 0;
    }
}

// After a successful open: a regular file is followed and recorded.
void opened(int fd, int flags, std::uint64_t start) {
    if (fd < 0 || fd >= max_fd) return;
    struct statx st{};
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &st) != 0 || !S_ISREG(st.stx_mode)) return;
    char link[32];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char target[PATH_MAX];
    const ssize_t n = ::readlink(link, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    Event e = make(Kind::open);
    e.start = start;
    e.fd = fd;
    e.open_flags = charisma_flags(flags);
    e.file_id = file_id(::makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino);
    e.size = static_cast<std::int64_t>(st.stx_size);
    e.count = (st.stx_mask & STATX_BTIME) ? static_cast<std::uint64_t>(st.stx_btime.tv_sec) : 0;
    e.path = ::strdup(target);
    followed[fd].store(true);
    tracing::record(&e);
}

std::int64_t size_of(int fd) {
    struct stat st{};
    return ::fstat(fd, &st) == 0 ? st.st_size : -1;
}

// Before a followed descriptor is closed.
void closing(int fd) {
    Event e = make(Kind::close);
    e.fd = fd;
    e.size = size_of(fd);
    followed[fd].store(false);
    tracing::record(&e);
}

// After a read or write of `n` bytes; offset -1: the file position after it.
void moved(Kind kind, int fd, std::int64_t offset, ssize_t n, const void* buffer, std::uint64_t start) {
    if (n < 0) return;
    Event e = make(kind);
    e.start = start;
    e.end = tracing::monotonic_ns();
    e.fd = fd;
    if (offset < 0) {
        // The position now, less what the call moved: right for O_APPEND too.
        const off_t now = ::lseek(fd, 0, SEEK_CUR);
        offset = now < 0 ? -1 : now - n;
    }
    e.offset = offset;
    e.size = n;
    e.memory = reinterpret_cast<std::uintptr_t>(buffer);
    tracing::record(&e);
}

void resized(std::uint64_t id, std::int64_t old_size, std::int64_t new_size, std::uint64_t start) {
    Event e = make(new_size > old_size ? Kind::extend : Kind::truncate);
    e.start = start;
    e.file_id = id;
    e.size = old_size;
    e.new_size = new_size;
    tracing::record(&e);
}

void linked(Kind kind, const struct stat& st, std::uint64_t links, std::uint64_t start) {
    Event e = make(kind);
    e.start = start;
    e.file_id = file_id(st.st_dev, st.st_ino);
    e.count = links;
    tracing::record(&e);
}

// Keeps the call's errno across the tracer's own calls.
struct KeepErrno {
    int saved;
    KeepErrno() : saved(errno) {}
    ~KeepErrno() { errno = saved; }
    void keep() { saved = errno; }
};

template <typename F>
F next(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

#define REAL(name, type) static const auto real = next<type>(name)

bool needs_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

std::uint64_t now() { return tracing::monotonic_ns(); }

}  // namespace
}  // namespace metatf::iotrace

namespace metatf::tracing {
static_assert(sizeof(iotrace::Event) <= 256);
const Tracer tracer{"metatf-iotrace",          "METATF_IOTRACE_",         "io.%p.mtf",
                    sizeof(iotrace::Event),     iotrace::setup,            iotrace::sink_open,
                    iotrace::sink_write,        iotrace::sink_close,       iotrace::sink_destroy,
                    iotrace::thread_event,      iotrace::discard,
                    nullptr};
}  // namespace metatf::tracing

using namespace metatf::iotrace;

namespace {

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);

int traced_open(OpenFn real, const char* path, int flags, mode_t mode) {
    if (!traced()) return real(path, flags, mode);
    Inside guard;
    const std::uint64_t start = now();
    const int fd = real(path, flags, mode);
    KeepErrno e;
    opened(fd, flags, start);
    return fd;
}

int traced_openat(OpenatFn real, int dirfd, const char* path, int flags, mode_t mode) {
    if (!traced()) return real(dirfd, path, flags, mode);
    Inside guard;
    const std::uint64_t start = now();
    const int fd = real(dirfd, path, flags, mode);
    KeepErrno e;
    opened(fd, flags, start);
    return fd;
}

mode_t mode_arg(int flags, va_list ap) { return needs_mode(flags) ? static_cast<mode_t>(va_arg(ap, unsigned)) : 0; }

template <typename Call>
ssize_t traced_io(Kind kind, int fd, std::int64_t offset, const void* buffer, Call call) {
    if (!traced() || !is_followed(fd)) return call();
    Inside guard;
    const std::uint64_t start = now();
    const ssize_t n = call();
    KeepErrno e;
    moved(kind, fd, offset, n, buffer, start);
    return n;
}

}  // namespace

#define EXPORT [[gnu::visibility("default")]]

extern "C" {

// ---- opening and closing --------------------------------------------------------------------

EXPORT int open(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    REAL("open", OpenFn);
    return traced_open(real, path, flags, mode);
}

EXPORT int open64(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    REAL("open64", OpenFn);
    return traced_open(real, path, flags, mode);
}

EXPORT int openat(int dirfd, const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    REAL("openat", OpenatFn);
    return traced_openat(real, dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    REAL("openat64", OpenatFn);
    return traced_openat(real, dirfd, path, flags, mode);
}

// _FORTIFY_SOURCE's checked opens (no mode: they refuse O_CREAT without one).
EXPORT int __open_2(const char* path, int flags) { return open(path, flags); }
EXPORT int __open64_2(const char* path, int flags) { return open64(path, flags); }
EXPORT int __openat_2(int dirfd, const char* path, int flags) { return openat(dirfd, path, flags); }
EXPORT int __openat64_2(int dirfd, const char* path, int flags) { return openat64(dirfd, path, flags); }

EXPORT int creat(const char* path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
EXPORT int creat64(const char* path, mode_t mode) { return open64(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

EXPORT int close(int fd) {
    REAL("close", int (*)(int));
    if (!traced() || !is_followed(fd)) return real(fd);
    Inside guard;
    {
        KeepErrno e;
        closing(fd);
    }
    return real(fd);
}

EXPORT FILE* fopen(const char* path, const char* mode) {
    REAL("fopen", FILE* (*)(const char*, const char*));
    if (!traced()) return real(path, mode);
    Inside guard;
    const std::uint64_t start = now();
    FILE* f = real(path, mode);
    KeepErrno e;
    if (f) opened(::fileno(f), mode_flags(mode), start);
    return f;
}

EXPORT FILE* fopen64(const char* path, const char* mode) { return fopen(path, mode); }

EXPORT int fclose(FILE* f) {
    REAL("fclose", int (*)(FILE*));
    const int fd = ::fileno(f);
    if (!traced() || !is_followed(fd)) return real(f);
    Inside guard;
    {
        KeepErrno e;
        std::fflush(f);  // the size at closing includes what the stream held
        closing(fd);
    }
    return real(f);
}

// ---- reading and writing --------------------------------------------------------------------

EXPORT ssize_t read(int fd, void* buf, size_t n) {
    REAL("read", ssize_t (*)(int, void*, size_t));
    return traced_io(Kind::read, fd, -1, buf, [&] { return real(fd, buf, n); });
}

EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
    if (n > buflen) {
        REAL("__read_chk", ssize_t (*)(int, void*, size_t, size_t));
        return real(fd, buf, n, buflen);  // glibc reports the overflow
    }
    return read(fd, buf, n);
}

EXPORT ssize_t write(int fd, const void* buf, size_t n) {
    REAL("write", ssize_t (*)(int, const void*, size_t));
    return traced_io(Kind::write, fd, -1, buf, [&] { return real(fd, buf, n); });
}

EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
    REAL("pread", ssize_t (*)(int, void*, size_t, off_t));
    return traced_io(Kind::read, fd, offset, buf, [&] { return real(fd, buf, n, offset); });
}

EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t offset) {
    REAL("pread64", ssize_t (*)(int, void*, size_t, off64_t));
    return traced_io(Kind::read, fd, offset, buf, [&] { return real(fd, buf, n, offset); });
}

EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t offset, size_t buflen) {
    if (n > buflen) {
        REAL("__pread_chk", ssize_t (*)(int, void*, size_t, off_t, size_t));
        return real(fd, buf, n, offset, buflen);
    }
    return pread(fd, buf, n, offset);
}

EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t offset, size_t buflen) {
    if (n > buflen) {
        REAL("__pread64_chk", ssize_t (*)(int, void*, size_t, off64_t, size_t));
        return real(fd, buf, n, offset, buflen);
    }
    return pread64(fd, buf, n, offset);
}

EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
    REAL("pwrite", ssize_t (*)(int, const void*, size_t, off_t));
    return traced_io(Kind::write, fd, offset, buf, [&] { return real(fd, buf, n, offset); });
}

EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t offset) {
    REAL("pwrite64", ssize_t (*)(int, const void*, size_t, off64_t));
    return traced_io(Kind::write, fd, offset, buf, [&] { return real(fd, buf, n, offset); });
}

EXPORT ssize_t readv(int fd, const struct iovec* iov, int count) {
    REAL("readv", ssize_t (*)(int, const struct iovec*, int));
    return traced_io(Kind::read, fd, -1, count > 0 ? iov[0].iov_base : nullptr, [&] { return real(fd, iov, count); });
}

EXPORT ssize_t writev(int fd, const struct iovec* iov, int count) {
    REAL("writev", ssize_t (*)(int, const struct iovec*, int));
    return traced_io(Kind::write, fd, -1, count > 0 ? iov[0].iov_base : nullptr, [&] { return real(fd, iov, count); });
}

// stdio at the stream's level: the position ftello gives before the call and
// the bytes the call moved. The read and write system calls stdio makes
// underneath are glibc's internal ones, which no preloaded library sees.
EXPORT size_t fread(void* buf, size_t size, size_t count, FILE* f) {
    REAL("fread", size_t (*)(void*, size_t, size_t, FILE*));
    const int fd = ::fileno(f);
    if (!traced() || !is_followed(fd)) return real(buf, size, count, f);
    Inside guard;
    const off_t offset = ::ftello(f);
    const std::uint64_t start = now();
    const size_t n = real(buf, size, count, f);
    KeepErrno e;
    moved(Kind::read, fd, offset < 0 ? 0 : offset, static_cast<ssize_t>(n * size), buf, start);
    return n;
}

EXPORT size_t fwrite(const void* buf, size_t size, size_t count, FILE* f) {
    REAL("fwrite", size_t (*)(const void*, size_t, size_t, FILE*));
    const int fd = ::fileno(f);
    if (!traced() || !is_followed(fd)) return real(buf, size, count, f);
    Inside guard;
    const off_t offset = ::ftello(f);
    const std::uint64_t start = now();
    const size_t n = real(buf, size, count, f);
    KeepErrno e;
    moved(Kind::write, fd, offset < 0 ? 0 : offset, static_cast<ssize_t>(n * size), buf, start);
    return n;
}

// ---- size, links, fcntl ---------------------------------------------------------------------

EXPORT int ftruncate(int fd, off_t length) {
    REAL("ftruncate", int (*)(int, off_t));
    if (!traced() || !is_followed(fd)) return real(fd, length);
    Inside guard;
    const std::uint64_t start = now();
    struct stat st{};
    const bool known = ::fstat(fd, &st) == 0;
    const int r = real(fd, length);
    KeepErrno e;
    if (r == 0 && known) resized(file_id(st.st_dev, st.st_ino), st.st_size, length, start);
    return r;
}

EXPORT int ftruncate64(int fd, off64_t length) { return ftruncate(fd, length); }

EXPORT int truncate(const char* path, off_t length) {
    REAL("truncate", int (*)(const char*, off_t));
    if (!traced()) return real(path, length);
    Inside guard;
    const std::uint64_t start = now();
    struct stat st{};
    const bool regular = ::stat(path, &st) == 0 && S_ISREG(st.st_mode);
    const int r = real(path, length);
    KeepErrno e;
    if (r == 0 && regular) resized(file_id(st.st_dev, st.st_ino), st.st_size, length, start);
    return r;
}

EXPORT int truncate64(const char* path, off64_t length) { return truncate(path, length); }

EXPORT int linkat(int olddir, const char* oldpath, int newdir, const char* newpath, int flags) {
    REAL("linkat", int (*)(int, const char*, int, const char*, int));
    if (!traced()) return real(olddir, oldpath, newdir, newpath, flags);
    Inside guard;
    const std::uint64_t start = now();
    const int r = real(olddir, oldpath, newdir, newpath, flags);
    KeepErrno e;
    struct stat st{};
    if (r == 0 && ::fstatat(newdir, newpath, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
        linked(Kind::link, st, st.st_nlink, start);
    }
    return r;
}

EXPORT int link(const char* oldpath, const char* newpath) { return linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0); }

EXPORT int unlinkat(int dir, const char* path, int flags) {
    REAL("unlinkat", int (*)(int, const char*, int));
    if (!traced() || (flags & AT_REMOVEDIR)) return real(dir, path, flags);
    Inside guard;
    const std::uint64_t start = now();
    struct stat st{};
    const bool regular = ::fstatat(dir, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    const int r = real(dir, path, flags);
    KeepErrno e;
    if (r == 0 && regular) linked(Kind::unlink, st, st.st_nlink > 0 ? st.st_nlink - 1 : 0, start);
    return r;
}

EXPORT int unlink(const char* path) { return unlinkat(AT_FDCWD, path, 0); }

}  // extern "C"

namespace {

// The argument as CHARISMA's int: the value of the commands that take an int
// (or none), 0 for those that take a pointer.
std::int32_t fcntl_int(int cmd, long arg) {
    switch (cmd) {
        case F_GETLK:
        case F_SETLK:
        case F_SETLKW:
        case F_OFD_GETLK:
        case F_OFD_SETLK:
        case F_OFD_SETLKW:
        case F_GETOWN_EX:
        case F_SETOWN_EX:
        case F_GET_RW_HINT:
        case F_SET_RW_HINT:
        case F_GET_FILE_RW_HINT:
        case F_SET_FILE_RW_HINT: return 0;
        default: return static_cast<std::int32_t>(arg);
    }
}

int traced_fcntl(int (*real)(int, int, ...), int fd, int cmd, long arg) {
    if (!traced() || !is_followed(fd)) return real(fd, cmd, arg);
    Inside guard;
    const std::uint64_t start = now();
    const int r = real(fd, cmd, arg);
    KeepErrno e;
    if (r != -1) {
        Event ev{};
        ev.kind = Kind::fcntl;
        ev.start = start;
        ev.fd = fd;
        ev.request = cmd;
        ev.arg = fcntl_int(cmd, arg);
        metatf::tracing::record(&ev);
    }
    return r;
}

}  // namespace

extern "C" {

EXPORT int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    const long arg = va_arg(ap, long);  // what glibc itself reads, whatever the command
    va_end(ap);
    REAL("fcntl", int (*)(int, int, ...));
    return traced_fcntl(real, fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    const long arg = va_arg(ap, long);
    va_end(ap);
    REAL("fcntl64", int (*)(int, int, ...));
    return traced_fcntl(real, fd, cmd, arg);
}

}  // extern "C"
