// The compiler as a library: DTD text in, diagnostics and (when it is valid) the IR out.
#pragma once

#include <optional>
#include <string>
#include <vector>


#include "diagnostics.hpp"
#include "ir/schema.hpp"

namespace metatf {

struct Compilation {
    Diagnostics diagnostics;
    std::optional<ir::Schema> schema;  // set only when there was no error
};

// The name of the DTD in a file: the file name without directory and without
// its last extension ("lackey.v2" for "dir/lackey.v2.dtd").
std::string dtd_name_of(const std::string& file_name);

// Compiles DTD text. `file_name` names it in diagnostics; `name` is the DTD's
// name, by default dtd_name_of(file_name).
Compilation compile(std::string file_name, std::string text, std::optional<std::string> name = std::nullopt);

// Reads and compiles a DTD file; an unreadable file is reported as a diagnostic.
Compilation compile_file(const std::string& path, std::optional<std::string> name = std::nullopt);

// Reads and compiles a DTD from standard input, named "stdin" in diagnostics
// and, by default, as the DTD's name.
Compilation compile_stdin(std::optional<std::string> name = std::nullopt);


// The DTD file a command line's NAME stands for: NAME itself when something
// other than a directory exists there; otherwise, for a NAME without '/', the first NAME or
// NAME.dtd in dtd_search_dirs(). Nothing when neither is found.
std::optional<std::string> find_dtd(const std::string& name);

// Where shipped DTDs are looked for, in order: each directory of
// $METATF_DTD_PATH (separated by ':'), the installed PREFIX/share/metatf/dtds
// (found above the program or module, wherever the install was moved), and
// the source tree's dtds/ for programs run from a build tree.
std::vector<std::string> dtd_search_dirs();

// "NAME: no such file, and no shipped DTD of that name in DIR, DIR".
std::string dtd_not_found(const std::string& name);

// "FILE:LINE:COL: MESSAGE" of the compilation's first error.
std::string first_error(const Compilation& c);

}  // namespace metatf
