// The C++ back end: a DTD's IR in, a header with a reader and a writer out.
#pragma once

#include <string>
#include <string_view>

#include "../ir/schema.hpp"

namespace metatf::back {

// The name of the generated header for a schema: "<dtd name>.hpp".
std::string cpp_header_name(const ir::Schema& schema);

// The namespace of a DTD's generated code unless one is given: the DTD's name
// made an identifier that compiles (docs/dtd-language.md, section 11).
std::string cpp_namespace(const std::string& dtd_name);
// Why `ns` cannot be the namespace of generated code; empty when it can.
std::string namespace_problem(std::string_view ns);

// The generated header: record structs, the DTD's descriptor tables, and the
// Reader and Writer classes, all against the runtime in runtime/include/metatf,
// in namespace `ns` (by default cpp_namespace(schema.name)).
std::string generate_cpp(const ir::Schema& schema, const std::string& ns);
std::string generate_cpp(const ir::Schema& schema);

}  // namespace metatf::back
