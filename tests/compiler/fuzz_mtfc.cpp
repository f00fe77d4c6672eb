// libFuzzer harness of mtfc's whole pipeline, in memory: any bytes as a DTD
// are parsed and resolved; every diagnostic renders; a valid DTD goes on to
// its IR as JSON, its lowering to the runtime's tables and the C++ back end.
// A crash, a sanitizer report, a hang, an exception, or a DTD that is both
// valid and in error is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <metatf/core/descriptor.hpp>

#include "back/cpp.hpp"
#include "compile.hpp"
#include "ir/json.hpp"
#include "lower/lower.hpp"

namespace {

// Keeps the outputs from being optimized away.
volatile std::size_t sink = 0;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const metatf::Compilation c = metatf::compile("fuzz.dtd", std::string(reinterpret_cast<const char*>(data), size));
    for (const metatf::Diagnostic& d : c.diagnostics.all()) sink = sink + d.render().size();
    if (c.schema.has_value() == c.diagnostics.has_errors()) std::abort();
    if (!c.schema) return 0;
    sink = sink + metatf::ir::to_json_text(*c.schema).size();
    sink = sink + metatf::back::generate_cpp(*c.schema).size();
    sink = sink + metatf::rt::fingerprint(metatf::lower::lower(*c.schema).desc());
    return 0;
}
