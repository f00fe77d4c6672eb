#include "diagnostics.hpp"

#include <algorithm>
#include <utility>

namespace metatf {

SourceFile::SourceFile(std::string file_name, std::string contents)
    : name(std::move(file_name)), text(std::move(contents)) {
    line_starts_.push_back(0);
    for (std::size_t i = text.find('\n'); i != std::string::npos; i = text.find('\n', i + 1)) {
        line_starts_.push_back(i + 1);
    }
}

std::string_view SourceFile::line_text(std::size_t line) const {
    if (line == 0 || line > line_starts_.size()) return {};
    const std::size_t begin = line_starts_[line - 1];
    std::size_t end = line < line_starts_.size() ? line_starts_[line] - 1 : text.size();
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

// Bytes of a long source line shown on each side of the column. Without a
// bound, a DTD written on one line would print the whole file per diagnostic.
constexpr std::size_t excerpt_context = 60;

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The source line, then a caret under the column. Tabs in the line are
// repeated in the caret line so the caret lines up in any terminal. A line
// longer than twice excerpt_context is cut around the column, marked "...".
void append_excerpt(std::string& out, const Location& where) {
    if (!where.file || where.line == 0) return;
    const std::string_view line = where.file->line_text(where.line);
    const std::size_t at = std::min(where.column > 0 ? where.column - 1 : 0, line.size());
    std::size_t begin = 0, end = line.size();
    if (line.size() > 2 * excerpt_context) {
        begin = at > excerpt_context ? at - excerpt_context : 0;
        end = std::min(line.size(), at + excerpt_context);
        while (begin < at && utf8_continuation(line[begin])) ++begin;
        while (end < line.size() && end > at && utf8_continuation(line[end])) --end;
    }
    const std::string_view cut = begin > 0 ? "..." : "";
    out += "    ";
    out += cut;
    out += line.substr(begin, end - begin);
    if (end < line.size()) out += "...";
    out += "\n    ";
    out.append(cut.size(), ' ');
    for (std::size_t i = begin; i < at; ++i) out += line[i] == '\t' ? '\t' : ' ';
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
