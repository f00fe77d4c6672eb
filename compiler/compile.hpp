// The compiler as a library: DTD text in, diagnostics and (when it is valid) the IR out.
#pragma once

#include <optional>
#include <string>

#include "diagnostics.hpp"
#include "ir/schema.hpp"

namespace metatf {

struct Compilation {
    Diagnostics diagnostics;
    std::optional<ir::Schema> schema;  // set only when there was no error
};

// Compiles DTD text. `file_name` names it in diagnostics; the DTD's name is the
// file name without directory and extension.
Compilation compile(std::string file_name, std::string text);

// Reads and compiles a DTD file; an unreadable file is reported as a diagnostic.
Compilation compile_file(const std::string& path);

}  // namespace metatf
