#include "compile.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

#include "front/parser.hpp"
#include "front/prelude.hpp"
#include "front/resolver.hpp"

namespace metatf {

namespace {

struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads `f` to its end into `text`; on failure, returns the system's reason.
std::optional<std::string> read_all(std::FILE* f, std::string& text) {
    char buffer[1 << 16];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
    if (std::ferror(f)) return std::string(std::strerror(errno));
    return std::nullopt;
}

Compilation unreadable(const std::string& file_name, const std::string& reason) {
    Compilation out;
    out.diagnostics.error(Location{std::make_shared<const SourceFile>(file_name, ""), 0, 0},
                          "cannot read the file: " + reason);
    return out;
}

}  // namespace

std::string dtd_name_of(const std::string& file_name) { return std::filesystem::path(file_name).stem().string(); }

Compilation compile(std::string file_name, std::string text, std::optional<std::string> name) {
    Compilation out;
    if (!name) name = dtd_name_of(file_name);
    auto source = std::make_shared<const SourceFile>(std::move(file_name), std::move(text));
    auto dtd = front::parse_dtd(source, out.diagnostics);
    if (dtd) out.schema = front::resolve(*dtd, front::prelude(), std::move(*name), out.diagnostics);
    if (out.schema) out.schema->source = source->text;
    return out;
}

Compilation compile_file(const std::string& path, std::optional<std::string> name) {
    const std::unique_ptr<std::FILE, Closer> f(std::fopen(path.c_str(), "rb"));
    if (!f) return unreadable(path, std::strerror(errno));
    std::string text;
    if (auto reason = read_all(f.get(), text)) return unreadable(path, *reason);
    return compile(path, std::move(text), std::move(name));
}

Compilation compile_stdin(std::optional<std::string> name) {
    std::string text;
    if (auto reason = read_all(stdin, text)) return unreadable("stdin", *reason);
    return compile("stdin", std::move(text), std::move(name));
}

std::string first_error(const Compilation& c) {
    for (const Diagnostic& d : c.diagnostics.all()) {
        if (d.severity != Severity::error) continue;
        std::string where = d.where.file ? d.where.file->name : "";
        if (d.where.line) where += ":" + std::to_string(d.where.line) + ":" + std::to_string(d.where.column);
        return where + ": " + d.message;
    }
    return "the DTD has errors";
}

}  // namespace metatf
