#include "metatf/container/split.hpp"

#include <charconv>
#include <optional>

#include "metatf/core/error.hpp"

namespace metatf::rt {
namespace {

std::string section_line(std::uint8_t n) {
    const std::string number = std::to_string(n);
    return "section split_" + number + " " + number + " { }\n";
}

[[noreturn]] void bad_block(const std::string& why, std::uint64_t offset) {
    throw TraceError(ErrorKind::bad_header, "the embedded DTD's added sections: " + why, offset, -1, 0);
}

// The section a line `section split_N N { }` adds, or 0 for any other line.
unsigned added_section(std::string_view line) {
    constexpr std::string_view prefix = "section split_";
    if (!line.starts_with(prefix)) return 0;
    unsigned n = 0;
    const char* first = line.data() + prefix.size();
    const auto [end, ec] = std::from_chars(first, line.data() + line.size(), n);
    if (ec != std::errc{} || n == 0 || n > 255) return 0;
    return std::string(line) + "\n" == section_line(static_cast<std::uint8_t>(n)) ? n : 0;
}

}  // namespace

std::string added_sections_text(std::span<const std::uint8_t> numbers) {
    std::string text(added_sections_marker);
    for (std::uint8_t n : numbers) text += section_line(n);
    return text;
}

EmbeddedDtd split_embedded_dtd(std::string_view text, std::uint64_t offset) {
    const std::size_t at = text.rfind(added_sections_marker);
    if (at == std::string_view::npos) return {text, {}};
    EmbeddedDtd out{text.substr(0, at), {}};
    std::size_t pos = at + added_sections_marker.size();
    while (pos < text.size()) {
        const std::size_t eol = text.find('\n', pos);
        const std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        const unsigned n = eol == std::string_view::npos ? 0 : added_section(line);
        if (n == 0) bad_block("'" + std::string(line.substr(0, 80)) + "' is not a line 'section split_N N { }'", offset + pos);
        for (std::uint8_t seen : out.added) {
            if (seen == n) bad_block("section " + std::to_string(n) + " is added twice", offset + pos);
        }
        out.added.push_back(static_cast<std::uint8_t>(n));
        pos = eol + 1;
    }
    return out;
}

DtdWithSections::DtdWithSections(const DtdDesc& dtd, std::span<const std::uint8_t> added, std::uint64_t offset) : desc_(dtd) {
    names_.reserve(added.size());
    sections_.assign(dtd.sections, dtd.sections + dtd.section_count);
    for (std::uint8_t n : added) {
        if (defines_section(dtd, n)) bad_block("section " + std::to_string(n) + " is the DTD's own", offset);
        names_.push_back("split_" + std::to_string(n));
        sections_.push_back({n, names_.back().c_str()});
    }
    desc_.sections = sections_.data();
    desc_.section_count = static_cast<std::uint32_t>(sections_.size());
}

namespace {

[[noreturn]] void bad_split(const std::string& why) { throw TraceError(ErrorKind::usage, "split streams: " + why); }

// The slot of the one record called `name`.
std::uint32_t record_named(const DtdDesc& dtd, std::string_view name) {
    std::optional<std::uint32_t> found;
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        if (dtd.records[i].name != name) continue;
        if (found) bad_split("more than one record is called '" + std::string(name) + "'");
        found = i;
    }
    if (!found) bad_split("the DTD has no record '" + std::string(name) + "'");
    const RecordDesc& r = dtd.records[*found];
    if (r.predefined != Predefined::none) bad_split("'" + std::string(name) + "' is a record of the trace's own");
    // Its metadata goes before the first record, in section 0.
    if (r.section != 0) {
        bad_split("record '" + std::string(name) + "' belongs to section " + std::to_string(r.section) +
                  "; only the fields of global records can be split");
    }
    return *found;
}

SplitField split_field(const DtdDesc& dtd, std::string_view name) {
    const std::size_t dot = name.find('.');
    if (dot == std::string_view::npos) bad_split("'" + std::string(name) + "' is not record.field");
    const std::uint32_t slot = record_named(dtd, name.substr(0, dot));
    const RecordDesc& r = dtd.records[slot];
    const std::string_view path = name.substr(dot + 1);
    for (std::uint32_t f = 1; f < r.field_count; ++f) {  // field 0 is the tag
        if (r.fields[f].path != path) continue;
        const Type t = r.fields[f].type;
        if (t != Type::unsigned_int && t != Type::signed_int) bad_split("field '" + std::string(path) + "' of record '" + r.name + "' is not an integer");
        return {slot, f, 0};
    }
    bad_split("record '" + std::string(r.name) + "' has no field '" + std::string(path) + "'");
}

}  // namespace

std::vector<SplitField> split_fields(const DtdDesc& dtd, std::span<const std::string> names) {
    std::vector<SplitField> out;
    unsigned n = 0;
    for (const std::string& group : names) {
        do ++n; while (n <= 255 && defines_section(dtd, static_cast<std::uint8_t>(n)));
        if (n > 255) bad_split("the DTD leaves no section number for '" + group + "'");
        for (std::size_t start = 0; start <= group.size();) {
            const std::size_t plus = std::min(group.find('+', start), group.size());
            const std::string name = group.substr(start, plus - start);
            SplitField f = split_field(dtd, name);
            for (const SplitField& seen : out) {
                if (seen.slot == f.slot && seen.field == f.field) bad_split("'" + name + "' is named twice");
            }
            f.section = static_cast<std::uint8_t>(n);
            out.push_back(f);
            start = plus + 1;
        }
    }
    return out;
}

std::vector<std::uint8_t> sections_of(std::span<const SplitField> fields) {
    std::vector<std::uint8_t> out;
    for (const SplitField& f : fields) {
        if (out.empty() || out.back() != f.section) out.push_back(f.section);
    }
    return out;
}

}  // namespace metatf::rt
