#include "metatf/container/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace metatf::rt {

namespace {

// The temporary files of live outputs, kept where a signal handler can reach
// them without allocating or locking.
struct TemporarySlot {
    std::atomic<bool> used{false};
    char path[PATH_MAX] = {};
};
std::array<TemporarySlot, 64> temporaries;

int register_temporary(const std::string& path) {
    if (path.size() >= PATH_MAX) return -1;
    for (std::size_t i = 0; i < temporaries.size(); ++i) {
        if (temporaries[i].used.load()) continue;
        std::memcpy(temporaries[i].path, path.c_str(), path.size() + 1);
        temporaries[i].used.store(true);
        return static_cast<int>(i);
    }
    return -1;  // more than 64 open outputs: the rest are cleaned up by their destructors only
}

void unregister_temporary(const std::string& path) {
    for (TemporarySlot& slot : temporaries) {
        if (slot.used.load() && path == slot.path) slot.used.store(false);
    }
}

std::string error_text() { return std::strerror(errno); }

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

mode_t new_file_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

bool stat_of(const std::string& path, struct stat& st) {
    return path == "-" ? ::fstat(STDIN_FILENO, &st) == 0 : ::stat(path.c_str(), &st) == 0;
}

bool same_inode(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

bool is_input(const struct stat& output, const OutputOptions& options) {
    for (const std::string& input : options.inputs) {
        struct stat in{};
        if (stat_of(input, in) && same_inode(in, output)) return true;
    }
    return false;
}

// Renames without replacing an existing file, where the file system allows it atomically.
int rename_no_replace(const char* from, const char* to) {
#ifdef RENAME_NOREPLACE
    if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
    if (::link(from, to) != 0) return -1;
    ::unlink(from);
    return 0;
}

// The file a link to nothing names, to be created there as `cp` would.
// Only one level: a link to another dangling link is refused.
std::string dangling_target(const std::string& link) {
    char buffer[PATH_MAX];
    const ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer - 1);
    struct stat st{};
    std::string target = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
    if (!target.empty() && target[0] != '/') target = directory_of(link) + "/" + target;
    if (target.empty() || ::lstat(target.c_str(), &st) == 0 || errno != ENOENT) {
        throw OutputError(link + ": a symbolic link that leads nowhere a file can be made");
    }
    return target;
}

}  // namespace

int descriptor_named(const std::string& path) {
    if (path == "/dev/stdout") return STDOUT_FILENO;
    if (path == "/dev/stderr") return STDERR_FILENO;
    for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        if (!path.starts_with(prefix) || path.size() == prefix.size() || path.size() > prefix.size() + 9) continue;
        const std::string_view digits = std::string_view(path).substr(prefix.size());
        if (digits.find_first_not_of("0123456789") != std::string_view::npos) return -1;
        return std::stoi(std::string(digits));
    }
    return -1;
}

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa{}, sb{};
    return stat_of(a, sa) && stat_of(b, sb) && same_inode(sa, sb);
}

OutputFile::OutputFile(const std::string& path, const OutputOptions& options)
    : path_(path), name_(path == "-" ? "stdout" : path), target_(path), replace_(options.replace) {
    if (const int fd = path == "-" ? STDOUT_FILENO : descriptor_named(path); fd >= 0) {
        open_descriptor(fd, options);
        return;
    }
    struct stat st{};
    bool exists = false;
    if (::lstat(path.c_str(), &st) == 0) {
        exists = true;
        if (S_ISLNK(st.st_mode)) {
            // Write through the link to its target; the link itself stays.
            char resolved[PATH_MAX];
            if (::stat(path.c_str(), &st) == 0 && ::realpath(path.c_str(), resolved)) {
                target_ = resolved;
            } else {
                exists = false;
                target_ = dangling_target(path);
            }
        }
    } else if (errno != ENOENT) {
        fail(error_text());
    }
    if (exists && is_input(st, options)) fail("is also an input; write the output to another file");
    if (exists) {
        if (S_ISDIR(st.st_mode)) fail("is a directory, not a file");
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
            file_ = std::fopen(path.c_str(), "wb");
            if (!file_) fail(error_text());
            return;
        }
        if (!S_ISREG(st.st_mode)) fail("is not a regular file, a FIFO or a character device; refusing to write to it");
        if (!replace_) fail("exists; use -f (--force) to replace it");
    }
    std::string name = directory_of(target_) + "/" + base_of(target_) + ".XXXXXX.partial";
    const int fd = keep_apart(::mkstemps(name.data(), 8));
    if (fd < 0) fail("cannot create a temporary file beside it: " + error_text());
    temporary_ = name;
    register_temporary(temporary_);
    if (::fchmod(fd, new_file_mode()) != 0 || !(file_ = ::fdopen(fd, "wb"))) {
        const std::string why = error_text();
        ::close(fd);
        discard();
        fail(why);
    }
    // Writers hand over whole segments; stdio's buffer would only hold bytes
    // back from a crash, or from a tracer that must abandon the descriptor.
    std::setvbuf(file_, nullptr, _IONBF, 0);
    if (::fstat(fd, &st) == 0) {
        device_ = st.st_dev;
        inode_ = st.st_ino;
    }
}

// Standard output, or a descriptor a path names, is written where it stands
// (at its offset, or its end under O_APPEND), as a stream: what is behind it
// was opened by the shell or the caller, which chose to truncate or append,
// so nothing there is replaced by rename, and a pipe works as `-` does.
void OutputFile::open_descriptor(int fd, const OutputOptions& options) {
    struct stat st{};
    if (::fstat(fd, &st) != 0) fail("descriptor " + std::to_string(fd) + " is not open");
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) fail("descriptor " + std::to_string(fd) + " is not open for writing");
    if (S_ISDIR(st.st_mode)) fail("is a directory, not a file");
    if (is_input(st, options)) fail("is also an input; write the output to another file");
    if (fd == STDOUT_FILENO) {
        file_ = stdout;
        return;
    }
    // A duplicate shares the descriptor's offset and flags; closing it leaves the caller's open.
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0 || !(file_ = ::fdopen(copy, "w"))) {
        const std::string why = error_text();
        if (copy >= 0) ::close(copy);
        fail(why);
    }
}

// A trace may be written from inside another program (the tracers): its
// descriptor moves out of the low numbers that program reuses first, so
// that a descriptor it closes by mistake is not soon reopened for one of its
// own files with trace bytes landing in it, and it is close-on-exec, so that
// programs it execs do not inherit it.
int OutputFile::keep_apart(int fd) {
    if (fd < 0) return fd;
    constexpr int floor = 512;  // under the usual soft limit of 1024; above it, F_DUPFD fails and fd stays
    const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (high < 0) {
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        return fd;
    }
    ::close(fd);
    return high;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::fail(const std::string& what) const { throw OutputError(name_ + ": " + what); }

// A trace written from inside another program (the tracers) may find its
// descriptor closed by that program, or reused for a file of its own, before
// a segment written on the writer's thread reaches it: nothing is written
// then, and the descriptor, no longer the writer's, is not closed.
void OutputFile::check_descriptor() {
    if (temporary_.empty() || inode_ == 0) return;
    struct stat st{};
    const int fd = ::fileno(file_);
    if (::fstat(fd, &st) == 0 && st.st_dev == device_ && st.st_ino == inode_) return;
    file_ = nullptr;  // left open: the number may be the program's now
    discard();
    fail("cannot write: its descriptor " + std::to_string(fd) + " was closed or now names another file");
}

void OutputFile::write(const void* data, std::size_t n) {
    if (n != 0) check_descriptor();
    if (n != 0 && std::fwrite(data, 1, n, file_) != n) {
        const std::string why = error_text();
        discard();
        throw OutputError(name_ + ": cannot write: " + why);
    }
    position_ += n;
}

void OutputFile::patch(std::uint64_t offset, const void* data, std::size_t n) {
    if (!streaming()) check_descriptor();
    if (streaming() || std::fflush(file_) != 0 ||
        ::pwrite(::fileno(file_), data, n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n)) {
        const std::string why = streaming() ? "it is a stream" : error_text();
        discard();
        throw OutputError(name_ + ": cannot rewrite the start: " + why);
    }
}

void OutputFile::commit() {
    if (done_) return;
    check_descriptor();
    bool ok = std::fflush(file_) == 0;
    if (ok && !temporary_.empty()) ok = ::fsync(::fileno(file_)) == 0;
    const std::string why = error_text();
    if (file_ != stdout) {
        ok = std::fclose(file_) == 0 && ok;
        file_ = nullptr;
    }
    if (!ok) {
        discard();
        throw OutputError(name_ + ": cannot write: " + why);
    }
    if (!temporary_.empty()) {
        const int renamed = replace_ ? std::rename(temporary_.c_str(), target_.c_str())
                                     : rename_no_replace(temporary_.c_str(), target_.c_str());
        if (renamed != 0) {
            const std::string reason = errno == EEXIST ? "appeared while it was being written; use -f (--force) to replace it"
                                                       : "cannot be put in place: " + error_text();
            discard();
            throw OutputError(name_ + ": " + reason);
        }
        unregister_temporary(temporary_);
    }
    done_ = true;
}

void OutputFile::flush() {
    if (std::fflush(file_) != 0) fail("cannot write: " + error_text());
}

void OutputFile::discard() {
    if (done_) return;
    done_ = true;
    if (file_ && file_ != stdout) std::fclose(file_);
    file_ = nullptr;
    if (!temporary_.empty()) {
        ::unlink(temporary_.c_str());
        unregister_temporary(temporary_);
    }
}

void remove_temporary_files() noexcept {
    for (TemporarySlot& slot : temporaries) {
        if (slot.used.load()) ::unlink(slot.path);
    }
}

namespace {

void die_cleanly(int signal) {
    remove_temporary_files();
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

}  // namespace

void remove_temporary_files_on_signals() {
    for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, die_cleanly);
}

}  // namespace metatf::rt
