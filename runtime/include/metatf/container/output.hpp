// Output files that never destroy what they should not.
//
// A regular file (new, or existing and replaced on request) is written
// under a unique temporary name in its directory and renamed into place by
// commit(); until then nothing exists at the path, and a failed or abandoned
// output leaves nothing behind. A FIFO, a character device, standard output
// ("-") or a descriptor named by path (descriptor_named()) is written in
// place, as a stream. Nothing else (a directory, a block device, a dangling
// link) is written at all. docs/mtf.md gives the rules as users see them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace metatf::rt {

// An output that cannot be opened, written or committed; the message names the file.
struct OutputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct OutputOptions {
    bool replace = false;             // an existing regular file may be replaced (-f)
    std::vector<std::string> inputs;  // files being read: the output may not be one of them ("-" is stdin)
};

class OutputFile {
public:
    // "-" is standard output. Throws OutputError when the path may not be written.
    OutputFile(const std::string& path, const OutputOptions& options = {});
    // Without commit(), removes the temporary file.
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(const void* data, std::size_t n);
    // Rewrites bytes already written (not on a stream).
    void patch(std::uint64_t offset, const void* data, std::size_t n);
    // Flushes, and for a regular file syncs and renames it into place.
    void commit();
    // Hands what is buffered to the file, so that it can be read before commit().
    void flush();
    // Removes the temporary file now (a failed output); idempotent.
    void discard();

    std::uint64_t position() const { return position_; }
    // Whether the output is written in place (standard output, a descriptor, a FIFO, a device).
    bool streaming() const { return temporary_.empty(); }
    const std::string& path() const { return path_; }
    // Where the bytes are until commit(): the temporary file, or the path of a stream.
    const std::string& written_to() const { return temporary_.empty() ? path_ : temporary_; }
    // The name for messages: the path, or "stdout".
    const std::string& name() const { return name_; }

private:
    [[noreturn]] void fail(const std::string& what) const;
    void open_descriptor(int fd, const OutputOptions& options);
    void check_descriptor();
    std::string path_, name_, target_, temporary_;
    std::FILE* file_ = nullptr;
    static int keep_apart(int fd);
    bool replace_ = false, done_ = false;
    std::uint64_t position_ = 0;
    std::uint64_t device_ = 0, inode_ = 0;  // the temporary file's, checked before each write
};

// The descriptor "/dev/stdout", "/dev/stderr", "/dev/fd/N" or
// "/proc/self/fd/N" names, or -1 for any other path. Those are links to
// whatever the descriptor holds (a pipe's is a link to nowhere), which
// OutputFile writes through the descriptor, never by rename through the link.
int descriptor_named(const std::string& path);

// Whether two paths name the same existing file ("-" is standard input).
bool same_file(const std::string& a, const std::string& b);

// Removes every temporary file that is still open. Async-signal-safe: a tool
// calls it from its SIGINT/SIGTERM handler before it dies.
void remove_temporary_files() noexcept;

// Installs SIGINT, SIGTERM and SIGHUP handlers that call remove_temporary_files()
// and then die of the signal. For command-line tools, not for libraries.
void remove_temporary_files_on_signals();

}  // namespace metatf::rt
