// Diagnostics: what the compiler tells a DTD author, with a position in a source file.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace metatf {

// A DTD's text, kept alive for as long as diagnostics may point into it.
class SourceFile {
public:
    SourceFile(std::string name, std::string text);

    const std::string name;  // as given on the command line, or "<predefined>"
    const std::string text;

    // The text of 1-based line `line`, without its line terminator; empty past the end.
    std::string_view line_text(std::size_t line) const;

private:
    // The offset of every line's first byte, so that rendering a diagnostic
    // costs the same on line 1 and on line 10^6 (a DTD may draw one per line).
    std::vector<std::size_t> line_starts_;
};

struct Location {
    std::shared_ptr<const SourceFile> file;
    std::size_t line = 0;    // 1-based; 0 means "no position"
    std::size_t column = 0;  // 1-based, in bytes
};

enum class Severity { note, warning, error };

struct Diagnostic {
    Severity severity = Severity::error;
    Location where;
    std::string message;
    std::vector<Diagnostic> notes;  // follow-up notes pointing at related places

    // "FILE:LINE:COL: error: MESSAGE", the source line and a caret, then the notes.
    std::string render() const;
    // "LINE:COL: error: MESSAGE", the short form the tests compare against.
    std::string brief() const;
};

// Collects diagnostics in the order they are reported.
class Diagnostics {
public:
    Diagnostic& error(Location where, std::string message);
    Diagnostic& warning(Location where, std::string message);

    const std::vector<Diagnostic>& all() const { return items_; }
    std::size_t error_count() const;
    bool has_errors() const { return error_count() != 0; }
    // Orders the diagnostics by file position (stable for equal positions).
    void sort_by_position();

private:
    std::vector<Diagnostic> items_;
};

std::string_view severity_name(Severity s);

// A name as messages show it: 'name'.
inline std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace metatf
