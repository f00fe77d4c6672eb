// metatf-iotrace: runs a program with libmetatf_iotrace.so preloaded
// (docs/tracers.md); the work is tools/tracing's launcher.
#include "launcher.hpp"

int main(int argc, char** argv) {
    const metatf::tracing::Launcher launcher{
        "metatf-iotrace", "libmetatf_iotrace.so", "METATF_IOTRACE_", "io.%p.mtf",
        "Usage: metatf-iotrace [OPTIONS] [--] PROGRAM [ARGS...]\n"
        "Runs PROGRAM and records its file I/O on regular files as a CHARISMA Meta-TF\n"
        "trace: open, openat, creat, fopen (and their 64 and _2 forms), close,\n"
        "fclose, read, pread, readv, fread, write, pwrite, writev, fwrite, ftruncate,\n"
        "truncate, link, linkat, unlink, unlinkat and fcntl, with nanosecond times.\n"
        "Not seen: stdio's other calls (fgets, fprintf, getc...), mmap, sendfile,\n"
        "copy_file_range, dup, io_uring, system calls made without libc, and\n"
        "descriptors opened before the program started. Programs it starts are traced too.\n\n"
        "Options:\n"
        "  -o, --output PATH  the trace; %p becomes the process id (default io.%p.mtf)\n"
        "  --no-compress      write the trace's chunks as they are (by default each is\n"
        "                     compressed with zstd as it is written)\n"
        "  --no-fork          forked children write no trace (by default each writes\n"
        "                     its own, to PATH with its pid, or PATH.PID without %p)\n"
        "  -f, --force        replace an existing trace\n"
        "  -h, --help         show this help\n"
        "  -V, --version      show the version\n\n"
        "The exit status is PROGRAM's; 127 when it cannot be found, 126 when it cannot\n"
        "be run, 2 for a mistake on this command line. Needs glibc and a dynamically\n"
        "linked PROGRAM; see docs/tracers.md.\n",
        {{"--no-compress", "NO_COMPRESS"}}};
    return metatf::tracing::launch(launcher, argc, argv);
}
