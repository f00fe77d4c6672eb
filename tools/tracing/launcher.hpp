// What the launchers metatf-heaptrace and metatf-iotrace share: options,
// the library found beside the launcher or in the library directory,
// LD_PRELOAD and the environment the library reads, then exec.
#pragma once

#include <vector>

namespace metatf::tracing {

// A yes/no option of one tracer, passed as PREFIX+env = "1" or "0".
struct Flag {
    const char* option;  // "--threads"
    const char* env;     // "THREADS"
};

struct Launcher {
    const char* program;         // "metatf-heaptrace"
    const char* library;         // "libmetatf_heaptrace.so"
    const char* env_prefix;      // "METATF_HEAPTRACE_"
    const char* default_output;  // "heap.%p.mtf"
    const char* help;            // the whole of --help's text
    std::vector<Flag> flags;     // besides -o, -f, --no-fork, -h, -V
};

// Parses the command line, sets the environment and execs the program; returns
// (as main's status) only when that fails.
int launch(const Launcher& l, int argc, char** argv);

}  // namespace metatf::tracing
