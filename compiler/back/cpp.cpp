#include "cpp.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "../lower/lower.hpp"
#include "cpp_parts.hpp"
#include "version.hpp"

namespace metatf::back {

namespace {

// Names a generated identifier must not take, so it gets a trailing '_': the C++
// keywords and alternative tokens; "type" and "tag", which every generated record
// struct uses itself; names the C and C++ standard libraries define as macros
// (lowercase ones, and EOF and NULL); and the macros GCC and Clang predefine in
// their default GNU mode. docs/dtd-language.md (section 11) lists them.
const std::set<std::string, std::less<>> reserved_names = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
    "volatile", "wchar_t", "while", "xor", "xor_eq", "type", "tag",
    "assert", "errno", "offsetof", "setjmp", "stderr", "stdin", "stdout", "va_arg", "va_copy", "va_end", "va_start",
    "EOF", "NULL", "linux", "unix", "i386"};

}  // namespace

std::string identifier(const std::string& name) {
    std::string out;
    for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
    if (reserved_names.count(out)) out += '_';
    return out;
}

std::string cpp_namespace(const std::string& dtd_name) { return identifier(dtd_name); }

std::string namespace_problem(std::string_view ns) {
    if (identifier(std::string(ns)) == ns) return {};  // the rule keeps it as it is
    return reserved_names.count(ns) ? "is a C++ keyword or a name that may be a macro"
                                    : "is not a C++ identifier (letters, digits and '_', not starting with a digit)";
}

namespace {

std::string pascal(const std::string& name) {
    std::string out = identifier(name);
    if (out[0] != '_') out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
}

}  // namespace

std::string literal(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n\"\n    \""; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c >= 0x7f) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\%03o", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

namespace {

const char* member_type(ir::Type t) {
    switch (t) {
        case ir::Type::unsigned_int: return "std::uint64_t";
        case ir::Type::signed_int: return "std::int64_t";
        case ir::Type::floating: return "double";
        case ir::Type::bytes: return "std::span<const std::byte>";
    }
    return "";
}

// A member's initializer: the field's fixed value, which writers then fill in.
std::string fixed_value(const ir::Field& f) {
    if (!f.value) return "";
    if (f.type == ir::Type::signed_int) return signed_literal(static_cast<std::int64_t>(*f.value));
    return std::to_string(*f.value) + "u";
}

// How one record type becomes C++: names for its struct, members and groups.
class RecordCode {
public:
    RecordCode(const ir::Record& r, std::uint32_t slot, std::string struct_name)
        : record_(r), slot_(slot), struct_(std::move(struct_name)) {
        // The struct's own name would read as a constructor, RecordType as the enum.
        std::set<std::string> taken{"type", "tag", "slot", struct_, "RecordType"};
        for (const ir::Field& f : r.fields) {
            std::string m = identifier(f.path);
            while (!taken.insert(m).second) m += '_';
            member_.push_back(m);
        }
        name_groups(r.layout, taken);
        name_parts(taken);
        name_texts(taken);
    }

    const std::string& name() const { return struct_; }
    std::uint32_t slot() const { return slot_; }
    const ir::Record& record() const { return record_; }

    void emit_struct(std::ostream& o) const {
        o << "// " << record_.name << ": tag " << record_.tag
          << (record_.section ? ", section " + std::to_string(record_.section) : std::string(", any section")) << "\n";
        o << "struct " << struct_ << " {\n";
        o << "    static constexpr RecordType type = RecordType::" << struct_ << ";\n";
        o << "    static constexpr std::uint64_t tag = " << record_.tag << "u;\n";
        o << "    // Field indices, for metadata changes.\n";
        for (const ir::Field& f : record_.fields) {
            if (f.index != 0) o << "    static constexpr std::uint32_t " << member_[f.index] << "_field = " << f.index << ";\n";
        }
        emit_members(o, record_.layout, "    ", true);
        o << "};\n\n";
    }

    void emit_equality(std::ostream& o) const { emit_equality(o, record_.layout, struct_); }

    // Records with no field but the tag leave the generated parameters unused.
    const char* unused() const { return record_.fields.size() <= 1 ? "[[maybe_unused]] " : ""; }

    void emit_visit(std::ostream& o) const {
        o << "template <typename Visitor>\nMETATF_INLINE void visit_fields(" << unused() << struct_ << "& o, " << unused()
          << "Visitor&& v) {\n";
        emit_visit_items(o, record_.layout, "o", "    ", 0);
        o << "}\n\n";
    }

private:
    void name_groups(const std::vector<ir::LayoutItem>& items, std::set<std::string>& taken) {
        for (const auto& item : items) {
            if (const auto* rep = std::get_if<ir::Repeat>(&item)) {
                // Groups over one count (n*x, n*y) share a base name; the suffix keeps
                // both the member and its struct type apart.
                const std::string member = member_[rep->count] + "_items", type = pascal(member_[rep->count]) + "Item";
                std::string suffix;
                while (taken.count(member + suffix) || taken.count(type + suffix)) suffix += '_';
                taken.insert({member + suffix, type + suffix});
                group_member_[&rep->items] = member + suffix;
                group_struct_[&rep->items] = type + suffix;
                name_groups(rep->items, taken);
            }
        }
    }

    // A string (a bytes field its text form spells) gets NAME_text(), its bytes as a std::string_view.
    void name_texts(std::set<std::string>& taken) {
        if (!record_.mnemonic) return;
        for (const ir::Field& f : record_.fields) {
            const ir::TextFormat t = f.text.format;
            if (f.type != ir::Type::bytes || (t != ir::TextFormat::string && t != ir::TextFormat::line && t != ir::TextFormat::nested)) continue;
            std::string m = member_[f.index] + "_text";
            while (!taken.insert(m).second) m += '_';
            text_[f.index] = m;
        }
    }

    // A field's parts ('bits') get a getter and a setter each, named after the part.
    void name_parts(std::set<std::string>& taken) {
        for (const std::string& m : member_) taken.insert(m + "_field");  // the field index constants
        for (const ir::Field& f : record_.fields) {
            if (f.rules.naming != rt::Naming::parts) continue;
            for (const ir::NamedValue& part : f.rules.names) {
                std::string m = identifier(part.name);
                while (taken.count(m) || taken.count("set_" + m)) m += '_';
                taken.insert({m, "set_" + m});
                part_member_[{f.index, part.name}] = m;
            }
        }
    }

    void emit_parts(std::ostream& o, const ir::Field& f, const std::string& indent) const {
        if (f.rules.naming != rt::Naming::parts) return;
        o << indent << "// The parts of " << member_[f.index] << ", from its least significant bit.\n";
        for (const ir::NamedValue& part : f.rules.names) {
            const std::string& m = part_member_.at({f.index, part.name});
            const std::string at = std::to_string(std::countr_zero(part.value)) + ", " + std::to_string(std::popcount(part.value));
            o << indent << "std::uint64_t " << m << "() const { return rt::get_part(" << member_[f.index] << ", " << at << "); }\n";
            // this->: the member may be called `part`.
            o << indent << "void set_" << m << "(std::uint64_t part) { this->" << member_[f.index] << " = rt::with_part(this->" << member_[f.index]
              << ", " << at << ", part, \"" << part.name << "\"); }\n";
        }
    }

    void emit_members(std::ostream& o, const std::vector<ir::LayoutItem>& items, const std::string& indent,
                      bool top) const {
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (top && *index == 0) continue;  // the tag is the struct's type
                const ir::Field& f = record_.fields[*index];
                o << indent << member_type(f.type) << " " << member_[*index] << "{" << fixed_value(f) << "};\n";
                emit_parts(o, f, indent);
                if (const auto text = text_.find(*index); text != text_.end()) {
                    o << indent << "std::string_view " << text->second << "() const { return rt::as_text(" << member_[*index] << "); }\n";
                }
                continue;
            }
            const auto& rep = std::get<ir::Repeat>(item);
            o << indent << "struct " << group_struct_.at(&rep.items) << " {\n";
            emit_members(o, rep.items, indent + "    ", false);
            o << indent << "};\n";
            o << indent << "std::vector<" << group_struct_.at(&rep.items) << "> " << group_member_.at(&rep.items)
              << ";  // " << member_[rep.count] << " of them\n";
        }
    }

    void emit_equality(std::ostream& o, const std::vector<ir::LayoutItem>& items, const std::string& type) const {
        for (const auto& item : items) {
            if (const auto* rep = std::get_if<ir::Repeat>(&item)) {
                emit_equality(o, rep->items, type + "::" + group_struct_.at(&rep->items));
            }
        }
        const bool empty = std::all_of(items.begin(), items.end(), [](const ir::LayoutItem& item) {
            const auto* index = std::get_if<std::uint32_t>(&item);
            return index && *index == 0;
        });
        const char* unused = empty ? "[[maybe_unused]] " : "";
        o << "inline bool operator==(" << unused << "const " << type << "& a, " << unused << "const " << type
          << "& b) {\n    return true";
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (*index == 0) continue;
                const std::string& m = member_[*index];
                if (record_.fields[*index].type == ir::Type::bytes) {
                    o << "\n        && rt::same_bytes(a." << m << ", b." << m << ")";
                } else {
                    o << "\n        && a." << m << " == b." << m;
                }
            } else {
                const std::string& m = group_member_.at(&std::get<ir::Repeat>(item).items);
                o << "\n        && a." << m << " == b." << m;
            }
        }
        o << ";\n}\n\n";
    }

    void emit_visit_items(std::ostream& o, const std::vector<ir::LayoutItem>& items, const std::string& var,
                          const std::string& indent, int depth) const {
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (*index != 0) o << indent << "v.field(rt::field_index<" << *index << ">, " << var << "." << member_[*index] << ");\n";
                continue;
            }
            const auto& rep = std::get<ir::Repeat>(item);
            const std::string element = "e" + std::to_string(depth);
            o << indent << "v.repeat(rt::field_index<" << rep.count << ">, " << var << "." << group_member_.at(&rep.items)
              << ", [&](auto& " << element << ") {\n";
            emit_visit_items(o, rep.items, element, indent + "    ", depth + 1);
            o << indent << "});\n";
        }
    }

    const ir::Record& record_;
    std::uint32_t slot_;
    std::string struct_;
    std::vector<std::string> member_;  // by field index
    std::map<const std::vector<ir::LayoutItem>*, std::string> group_member_, group_struct_;
    std::map<std::pair<std::uint32_t, std::string>, std::string> part_member_;  // by field index and part name: the getter
    std::map<std::uint32_t, std::string> text_;  // by field index: a string's NAME_text() accessor
};

}  // namespace

std::string cpp_header_name(const ir::Schema& schema) { return schema.name + ".hpp"; }

std::string generate_cpp(const ir::Schema& schema) { return generate_cpp(schema, cpp_namespace(schema.name)); }

std::string generate_cpp(const ir::Schema& schema, const std::string& ns) {
    std::vector<RecordCode> records;
    std::set<std::string> struct_names{"RecordType", "Records", "Codec", "Reader", "Writer", "Comment", "Section", "Metadata"};
    for (std::uint32_t slot = 0; slot < schema.records.size(); ++slot) {
        const ir::Record& r = schema.records[slot];
        std::string name = pascal(r.name);
        if (r.predefined == ir::Predefined::none) {
            while (!struct_names.insert(name).second) name += '_';
        }
        records.emplace_back(r, slot, name);
    }
    auto user = [](const RecordCode& c) { return c.record().predefined == ir::Predefined::none; };
    std::map<std::uint64_t, int> records_with_tag;
    for (const auto& c : records) ++records_with_tag[c.record().tag];
    // The records the fast loops find by their tag alone.
    auto by_tag = [&](const RecordCode& c) { return user(c) && records_with_tag[c.record().tag] == 1; };

    std::ostringstream o;
    o << "// Generated by mtfc " << version << " from the DTD '" << schema.name << "'. Do not edit:\n"
      << "// regenerate with `mtfc --emit=cpp`. Reads and writes Meta-TF traces of this DTD\n"
      << "// through the Meta-TF runtime (the file format: Meta-TF's docs/trace-format.md).\n"
      << "#pragma once\n\n"
      << "#include <cstdint>\n#include <span>\n#include <string_view>\n#include <tuple>\n#include <type_traits>\n#include <vector>\n\n"
      << "#include <metatf/typed.hpp>\n";
    emit_form_includes(o, schema);
    o << "\n"
      << "namespace " << ns << " {\n\nnamespace rt = metatf::rt;\n\n";

    o << "// Every record type, numbered as the runtime numbers them.\nenum class RecordType : std::uint32_t {\n";
    for (const auto& c : records) o << "    " << c.name() << " = " << c.slot() << ",\n";
    o << "};\n\n";

    o << "using Comment = rt::Comment<RecordType>;\nusing Section = rt::Section<RecordType>;\n"
      << "using Metadata = rt::Metadata<RecordType>;\n\n";
    for (const auto& c : records) {
        if (user(c)) c.emit_struct(o);
    }
    for (const auto& c : records) {
        if (user(c)) c.emit_equality(o);
    }
    o << "// Every record struct, in RecordType order.\nusing Records = std::tuple<";
    for (std::size_t i = 0; i < records.size(); ++i) o << (i ? ", " : "") << records[i].name();
    o << ">;\n\n";

    o << "// Calls v.field(index, member) for every field and v.repeat(count index, vector, body)\n"
      << "// for every repeated group, in layout order: generic code over any record.\n";
    for (const auto& c : records) {
        if (user(c)) c.emit_visit(o);
    }

    emit_tables(o, lower::lower(schema).desc());

    std::vector<const RecordCode*> tagged;  // by tag, for the runtime's search (typed.hpp's detail::by_tag)
    for (const auto& c : records) {
        if (by_tag(c)) tagged.push_back(&c);
    }
    std::ranges::sort(tagged, {}, [](const RecordCode* c) { return c->record().tag; });
    o << "// What the runtime's reader and writer need of this DTD: its types and\n"
      << "// descriptor, and the records that a tag names alone, in the order of their tags.\n"
      << "struct Codec {\n    using RecordType = " << ns << "::RecordType;\n    using Records = " << ns << "::Records;\n"
      << "    static constexpr const rt::DtdDesc& dtd = " << ns << "::dtd;\n"
      << "    using ByTag = std::tuple<";
    // Qualified: a record named `byTag` has the struct ByTag, which the member would hide.
    for (std::size_t i = 0; i < tagged.size(); ++i) o << (i ? ", " : "") << ns << "::" << tagged[i]->name();
    o << ">;\n};\n\n"
      << "// Reads a trace of this DTD: pull records with next(), or pass a visitor to visit().\n"
      << "using Reader = rt::TypedReader<Codec>;\n"
      << "// Writes a trace of this DTD. close() finishes it; without close() nothing is left at `path`.\n"
      << "using Writer = rt::TypedWriter<Codec>;\n\n";
    emit_form_codecs(o, schema);
    o << "}  // namespace " << ns << "\n";
    return o.str();
}

}  // namespace metatf::back
