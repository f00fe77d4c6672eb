#include "diagnostics.hpp"

#include <algorithm>

namespace metatf {

std::string_view SourceFile::line_text(std::size_t line) const {
    std::size_t begin = 0;
    for (std::size_t n = 1; n < line; ++n) {
        begin = text.find('\n', begin);
        if (begin == std::string::npos) return {};
        ++begin;
    }
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin && text[end - 1] == '\r') --end;
    return std::string_view(text).substr(begin, end - begin);
}

std::string_view severity_name(Severity s) {
    switch (s) {
        case Severity::note: return "note";
        case Severity::warning: return "warning";
        case Severity::error: return "error";
    }
    return "error";
}

namespace {

std::string position_prefix(const Location& where) {
    std::string out = where.file ? where.file->name : std::string("<input>");
    if (where.line != 0) {
        out += ':' + std::to_string(where.line) + ':' + std::to_string(where.column);
    }
    return out;
}

// The source line, then a caret under the column. Tabs in the line are
// repeated in the caret line so the caret lines up in any terminal.
void append_excerpt(std::string& out, const Location& where) {
    if (!where.file || where.line == 0) return;
    const std::string_view line = where.file->line_text(where.line);
    out += "    ";
    out += line;
    out += "\n    ";
    for (std::size_t i = 0; i + 1 < where.column && i < line.size(); ++i) {
        out += line[i] == '\t' ? '\t' : ' ';
    }
    out += "^\n";
}

}  // namespace

std::string Diagnostic::render() const {
    std::string out = position_prefix(where) + ": " + std::string(severity_name(severity)) + ": " + message + '\n';
    append_excerpt(out, where);
    for (const Diagnostic& n : notes) out += n.render();
    return out;
}

std::string Diagnostic::brief() const {
    return std::to_string(where.line) + ':' + std::to_string(where.column) + ": " +
           std::string(severity_name(severity)) + ": " + message;
}

Diagnostic& Diagnostics::error(Location where, std::string message) {
    return items_.emplace_back(Diagnostic{Severity::error, std::move(where), std::move(message), {}});
}

Diagnostic& Diagnostics::warning(Location where, std::string message) {
    return items_.emplace_back(Diagnostic{Severity::warning, std::move(where), std::move(message), {}});
}

std::size_t Diagnostics::error_count() const {
    return static_cast<std::size_t>(std::count_if(
        items_.begin(), items_.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

void Diagnostics::sort_by_position() {
    std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
        // The predefined records come before the user's file.
        const bool a_user = a.where.file && a.where.file->name != "<predefined>";
        const bool b_user = b.where.file && b.where.file->name != "<predefined>";
        if (a_user != b_user) return !a_user;
        if (a.where.line != b.where.line) return a.where.line < b.where.line;
        return a.where.column < b.where.column;
    });
}

}  // namespace metatf
