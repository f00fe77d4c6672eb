// The C++ back end: a DTD's IR in, a header with a reader and a writer out.
#pragma once

#include <string>

#include "../ir/schema.hpp"

namespace metatf::back {

// The name of the generated header for a schema: "<dtd name>.hpp".
std::string cpp_header_name(const ir::Schema& schema);

// The generated header: record structs, the DTD's descriptor tables, and the
// Reader and Writer classes, all against the runtime in runtime/include/metatf.
std::string generate_cpp(const ir::Schema& schema);

}  // namespace metatf::back
