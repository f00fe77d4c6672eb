#include "compile.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "front/parser.hpp"
#include "front/prelude.hpp"
#include "front/resolver.hpp"

namespace metatf {

Compilation compile(std::string file_name, std::string text) {
    Compilation out;
    std::string name = std::filesystem::path(file_name).stem().string();
    auto source = std::make_shared<const SourceFile>(SourceFile{std::move(file_name), std::move(text)});
    auto dtd = front::parse_dtd(source, out.diagnostics);
    if (dtd) out.schema = front::resolve(*dtd, front::prelude(), std::move(name), out.diagnostics);
    if (out.schema) out.schema->source = source->text;
    return out;
}

Compilation compile_file(const std::string& path) {
    std::ifstream in;
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) in.open(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.is_open() || in.bad()) {
        Compilation out;
        out.diagnostics.error(Location{std::make_shared<const SourceFile>(SourceFile{path, ""}), 0, 0},
                              "cannot read the file");
        return out;
    }
    return compile(path, std::move(text).str());
}

}  // namespace metatf
