// libFuzzer harness: any bytes, read as a trace by the generated HATF 1.0
// reader, must give records or a TraceError; a crash, a sanitizer report, a
// hang or any other exception is a bug in the runtime or the generated code.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include <hatf10.hpp>

#include "trace_support.hpp"

namespace {

// The reader opens a path, so every input goes through one file per process,
// removed when the fuzzer exits.
struct Scratch {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("metatf-fuzz-hatf10-" + std::to_string(::getpid()) + ".mtf"))
                           .string();
    ~Scratch() { std::remove(path.c_str()); }
};

Scratch scratch;

// Keeps the reads of every field and view from being optimized away.
volatile std::uint64_t sink = 0;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(scratch.path.c_str(), "wb");
    if (!f) std::abort();
    if (size != 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    if (std::fclose(f) != 0) std::abort();
    try {
        hatf10::Reader reader(scratch.path);
        metatf::test::Toucher touch;
        while (reader.next()) reader.dispatch(touch);
        sink = touch.sum;
    } catch (const metatf::rt::TraceError&) {
        // the expected outcome for malformed input
    }
    return 0;
}
