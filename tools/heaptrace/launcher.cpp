// metatf-heaptrace: runs a program with libmetatf_heaptrace.so preloaded
// (docs/tracers.md); the work is tools/tracing's launcher.
#include "launcher.hpp"

int main(int argc, char** argv) {
    const metatf::tracing::Launcher launcher{
        "metatf-heaptrace", "libmetatf_heaptrace.so", "METATF_HEAPTRACE_", "heap.%p.mtf",
        "Usage: metatf-heaptrace [OPTIONS] [--] PROGRAM [ARGS...]\n"
        "Runs PROGRAM and records its heap allocations (malloc, calloc, realloc,\n"
        "reallocarray, free, memalign, posix_memalign, aligned_alloc, valloc, pvalloc)\n"
        "as a HATF 1.0 Meta-TF trace. Programs it starts are traced too.\n\n"
        "Options:\n"
        "  -o, --output PATH  the trace; %p becomes the process id (default heap.%p.mtf)\n"
        "  --threads          record the thread of each event, and createThread and\n"
        "                     destroyThread records\n"
        "  --time             record CLOCK_MONOTONIC nanoseconds (delta-encoded)\n"
        "  --no-compress      write the trace's chunks as they are (by default each is\n"
        "                     compressed with zstd as it is written)\n"
        "  --fast             about half the tracer's time for a trace 1.5-9 times\n"
        "                     larger: addresses as deltas, 256 KiB segments at zstd\n"
        "                     level 1 (by default addresses are references to live and\n"
        "                     freed blocks, in 4 MiB segments compressed on a thread of\n"
        "                     their own, at zstd level 7 for the first 8 MiB of records\n"
        "                     and 5 after them, near what 'mtf recode --compress' makes)\n"
        "  --compact          the default; wins over --fast\n"
        "  --no-fork          forked children write no trace (by default each writes\n"
        "                     its own, to PATH with its pid, or PATH.PID without %p)\n"
        "  -f, --force        replace an existing trace\n"
        "  -h, --help         show this help\n"
        "  -V, --version      show the version\n\n"
        "The exit status is PROGRAM's; 127 when it cannot be found, 126 when it cannot\n"
        "be run, 2 for a mistake on this command line. Needs glibc and a dynamically\n"
        "linked PROGRAM; see docs/tracers.md.\n",
        {{"--threads", "THREADS"}, {"--time", "TIME"}, {"--no-compress", "NO_COMPRESS"}, {"--fast", "FAST"},
         {"--compact", "COMPACT"}}};
    return metatf::tracing::launch(launcher, argc, argv);
}
