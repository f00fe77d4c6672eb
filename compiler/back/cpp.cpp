#include "cpp.hpp"

#include <algorithm>
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

// How one record type becomes C++: names for its struct, members and groups.
class RecordCode {
public:
    RecordCode(const ir::Record& r, std::uint32_t slot, std::string struct_name)
        : record_(r), slot_(slot), struct_(std::move(struct_name)) {
        std::set<std::string> taken{"type", "tag", "slot"};
        for (const ir::Field& f : r.fields) {
            std::string m = identifier(f.path);
            while (!taken.insert(m).second) m += '_';
            member_.push_back(m);
        }
        name_groups(r.layout, taken);
        plan_fast_path();
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

    bool has_fast_path() const { return fast_; }
    // Run::fast() covers the tags below 64.
    bool fast_by_tag() const { return fast_ && record_.tag < 64; }
    std::uint32_t fast_size() const { return fast_size_; }

    // The record in the DTD's own layout: constant widths at constant offsets,
    // one bounds check. The fields that store nothing are the DTD's constants;
    // set_defaults() assigns them once per struct, not once per record.
    void emit_decode_fast(std::ostream& o) const {
        if (!fast_) return;
        o << "    METATF_INLINE bool decode_fast(" << unused() << struct_ << "& o) {\n"
          << "        if (!r_.initial(" << slot_ << ")) return false;\n"
          << "        load_fast(o, r_.fixed(" << fast_size_ << "));\n"
          << "        return true;\n    }\n";
        o << "    // The stored fields, from p: the first byte after the tag.\n"
          << "    static METATF_INLINE void load_fast([[maybe_unused]] " << struct_ << "& o, [[maybe_unused]] const std::byte* p) {\n";
        for (const FastField& f : fast_fields_) {
            if (!constant(f)) o << "        o." << member_[f.index] << " = " << fast_load(f) << ";\n";
        }
        o << "    }\n";
        o << "    static void set_defaults([[maybe_unused]] " << struct_ << "& o) {\n";
        for (const FastField& f : fast_fields_) {
            if (constant(f)) o << "        o." << member_[f.index] << " = " << fast_load(f) << ";\n";
        }
        o << "    }\n";
    }

    // The constructor's part: the constants of the fast path in the reader's struct.
    void emit_set_defaults_call(std::ostream& o) const {
        if (fast_) o << "        set_defaults(std::get<" << struct_ << ">(records_));\n";
    }

    // A case of step()'s switch on the tag: the record in its initial layout,
    // or through the runtime's primitives, into the reader's struct. Only for
    // a tag no other record has, so that the case knows its record.
    void emit_step_case(std::ostream& o, unsigned tag_width) const {
        const std::string record = "std::get<" + struct_ + ">(records_)";
        o << "                case " << record_.tag << "u:\n";
        if (fast_by_tag()) {
            const std::string size = std::to_string(tag_width + fast_size_);
            o << "                    if (run.fast(" << record_.tag << "u)) return take_fast(" << record << ", run, " << size
              << ", then);\n";
        }
        o << "                    if (run.slot_of(tag) == " << slot_ << ") return take_general(" << record
          << ", run, then);\n"
          << "                    break;\n";
    }

    // A case of visit_fast(): the record straight from the chunk into a local,
    // or through the runtime's primitives into the reader's struct.
    void emit_visit_case(std::ostream& o, unsigned tag_width) const {
        o << "                case " << record_.tag << "u:\n";
        if (fast_by_tag()) {
            o << "                    if (run.fast(" << record_.tag << "u)) {\n"
              << "                        visit_local<" << struct_ << ">(run, " << tag_width + fast_size_ << ", v, records);\n"
              << "                        break;\n"
              << "                    }\n";
        }
        o << "                    if (run.slot_of(tag) != " << slot_ << ") return run;\n"
          << "                    visit_general(std::get<" << struct_ << ">(records_), run, v, records);\n"
          << "                    break;\n";
    }

    // take_general()'s decoding: the fast path when the layout is the DTD's.
    void emit_decode_general(std::ostream& o) const {
        o << "    void decode_general(" << struct_ << "& o) {\n"
          << (fast_ ? "        if (!decode_fast(o)) decode(o);\n" : "        decode(o);\n") << "    }\n";
    }

    // Field by field, under the encodings metadata has set.
    void emit_decode(std::ostream& o) const {
        o << "    void decode(" << unused() << struct_ << "& o) {\n";
        o << "        " << unused() << "rt::FieldState* s = r_.states(" << slot_ << ");\n";
        Scopes scopes{{"o", record_.layout}};
        emit_decode_items(o, record_.layout, scopes, "        ");
        o << "    }\n";
    }

    void emit_write(std::ostream& o, unsigned tag_width) const {
        o << "    // Writes one record; returns its byte offset within its section.\n";
        o << "    METATF_INLINE std::uint64_t write(" << unused() << "const " << struct_ << "& o) {\n";
        if (fast_) {
            o << "        if (w_.initial(" << slot_ << ")";
            for (const FastField& f : fast_fields_) {
                if (const std::string c = fast_check(f); !c.empty()) o << "\n            && " << c;
            }
            o << ") {  // the DTD's own layout: constant widths\n"
              << "            std::uint64_t offset = 0;\n"
              << "            [[maybe_unused]] std::byte* p = w_.reserve_record<" << tag_width << ">(" << slot_ << ", " << fast_size_ << ", offset);\n";
            for (const FastField& f : fast_fields_) {
                if (const std::string st = fast_store(f); !st.empty()) o << "            " << st << ";\n";
            }
            o << "            w_.end_record();\n            return offset;\n        }\n";
        }
        o << "        return write_fields(o);\n    }\n";
    }

    // Field by field, under the encodings metadata has set; reports what does not fit.
    void emit_write_fields(std::ostream& o) const {
        o << "    std::uint64_t write_fields(" << unused() << "const " << struct_ << "& o) {\n";
        o << "        " << unused() << "rt::FieldState* s = w_.states(" << slot_ << ");\n";
        o << "        const std::uint64_t offset = w_.begin_record(" << slot_ << ");\n";
        Scopes scopes{{"o", record_.layout}};
        emit_write_items(o, record_.layout, scopes, "        ");
        o << "        w_.end_record();\n        return offset;\n    }\n";
    }

    void emit_visit(std::ostream& o) const {
        o << "template <typename Visitor>\nvoid visit_fields(" << unused() << struct_ << "& o, " << unused()
          << "Visitor&& v) {\n";
        emit_visit_items(o, record_.layout, "o", "    ", 0);
        o << "}\n\n";
    }

private:
    // A field of the fast path: where it sits in the record under the DTD's
    // initial encoding, and how many bytes it takes there.
    struct FastField {
        std::uint32_t index, offset, width;
        bool stored;  // false for `default`: the value is the constant
    };

    // A record whose initial encoding has only `none`, `sectionOffset` and
    // `default` fields and no repetition has a layout fixed at generation time.
    void plan_fast_path() {
        if (record_.predefined != ir::Predefined::none) return;
        std::uint32_t offset = 0;
        for (const auto& item : record_.layout) {
            const auto* index = std::get_if<std::uint32_t>(&item);
            if (!index) return;
            if (*index == 0) continue;
            const ir::Field& f = record_.fields[*index];
            const auto kind = f.interpretation.kind;
            if (kind == ir::InterpretationKind::default_value) {
                fast_fields_.push_back({*index, offset, 0, false});
                continue;
            }
            if (kind != ir::InterpretationKind::none && kind != ir::InterpretationKind::section_offset) return;
            std::uint32_t width = f.width;
            if (f.width_from) {
                const ir::Field& source = record_.fields[*f.width_from];
                if (source.interpretation.kind != ir::InterpretationKind::default_value ||
                    source.interpretation.value > 65535) {
                    return;
                }
                width = static_cast<std::uint32_t>(source.interpretation.value);
            }
            fast_fields_.push_back({*index, offset, width, true});
            offset += width;
        }
        fast_ = true;
        fast_size_ = offset;
    }

    std::string at(const FastField& f) const { return "p + " + std::to_string(f.offset); }

    // A fast field whose value does not depend on the record's bytes.
    bool constant(const FastField& f) const {
        return !f.stored || (f.width == 0 && record_.fields[f.index].type == ir::Type::bytes);
    }

    std::string fast_load(const FastField& f) const {
        const ir::Field& d = record_.fields[f.index];
        const std::string w = std::to_string(f.width);
        if (!f.stored) {
            const std::string v = std::to_string(d.interpretation.value) + "u";
            return d.type == ir::Type::signed_int ? "static_cast<std::int64_t>(" + v + ")" : v;
        }
        const std::string raw = "rt::load_native<" + w + ">(" + at(f) + ")";
        switch (d.type) {
            case ir::Type::unsigned_int: return raw;
            case ir::Type::signed_int:
                return d.interpretation.kind == ir::InterpretationKind::section_offset
                           ? "static_cast<std::int64_t>(" + raw + ")"
                           : "static_cast<std::int64_t>(rt::sign_extend(" + raw + ", " + w + "))";
            case ir::Type::floating: return "rt::float_from_bits(" + raw + ", " + w + ")";
            case ir::Type::bytes:
                return f.width == 0 ? "std::span<const std::byte>()"
                                    : "std::span<const std::byte>(" + at(f) + ", " + w + ")";
        }
        return raw;
    }

    // What a value must satisfy for the fast path; the general path reports the rest.
    std::string fast_check(const FastField& f) const {
        const ir::Field& d = record_.fields[f.index];
        const std::string m = "o." + member_[f.index], w = std::to_string(f.width);
        if (!f.stored) {
            const std::string v = std::to_string(d.interpretation.value) + "u";
            return d.type == ir::Type::signed_int ? "static_cast<std::uint64_t>(" + m + ") == " + v : m + " == " + v;
        }
        switch (d.type) {
            case ir::Type::unsigned_int: return "rt::fits_unsigned(" + m + ", " + w + ")";
            case ir::Type::signed_int:
                return d.interpretation.kind == ir::InterpretationKind::section_offset
                           ? "rt::fits_unsigned(static_cast<std::uint64_t>(" + m + "), " + w + ")"
                           : "rt::fits_signed(static_cast<std::uint64_t>(" + m + "), " + w + ")";
            case ir::Type::floating: return "";
            case ir::Type::bytes: return m + ".size() == " + w;
        }
        return "";
    }

    std::string fast_store(const FastField& f) const {
        const ir::Field& d = record_.fields[f.index];
        const std::string m = "o." + member_[f.index], w = std::to_string(f.width);
        if (!f.stored || f.width == 0) return "";
        switch (d.type) {
            case ir::Type::unsigned_int: return "rt::store_native<" + w + ">(" + at(f) + ", " + m + ")";
            case ir::Type::signed_int:
                return "rt::store_native<" + w + ">(" + at(f) + ", static_cast<std::uint64_t>(" + m + "))";
            case ir::Type::floating:
                return "rt::store_native<" + w + ">(" + at(f) + ", rt::float_to_bits(" + m + ", " + w + "))";
            case ir::Type::bytes: return "std::memcpy(" + at(f) + ", " + m + ".data(), " + w + ")";
        }
        return "";
    }

    struct Scope {
        std::string var;
        const std::vector<ir::LayoutItem>& items;
    };
    using Scopes = std::vector<Scope>;

    static bool holds(const std::vector<ir::LayoutItem>& items, std::uint32_t index) {
        for (const auto& item : items) {
            if (const auto* f = std::get_if<std::uint32_t>(&item); f && *f == index) return true;
        }
        return false;
    }

    // The C++ expression for the latest value of field `index`, seen from the innermost scope.
    std::string value_of(const Scopes& scopes, std::uint32_t index) const {
        for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
            if (holds(it->items, index)) return it->var + "." + member_[index];
        }
        return "o." + member_[index];
    }

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

    void emit_members(std::ostream& o, const std::vector<ir::LayoutItem>& items, const std::string& indent,
                      bool top) const {
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (top && *index == 0) continue;  // the tag is the struct's type
                const ir::Field& f = record_.fields[*index];
                o << indent << member_type(f.type) << " " << member_[*index] << "{};"
                  << "\n";
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

    void emit_decode_items(std::ostream& o, const std::vector<ir::LayoutItem>& items, Scopes& scopes,
                           const std::string& indent) const {
        const std::string var = scopes.back().var;  // a copy: pushing a scope moves the vector
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (*index == 0) continue;
                const ir::Field& f = record_.fields[*index];
                const std::string target = var + "." + member_[*index];
                const std::string state = "s[" + std::to_string(*index) + "]";
                switch (f.type) {
                    case ir::Type::unsigned_int: o << indent << target << " = r_.read_int(" << state << ");\n"; break;
                    case ir::Type::signed_int:
                        o << indent << target << " = static_cast<std::int64_t>(r_.read_int(" << state << "));\n";
                        break;
                    case ir::Type::floating: o << indent << target << " = r_.read_float(" << state << ");\n"; break;
                    case ir::Type::bytes:
                        o << indent << target << " = r_.read_bytes(" << state << ", "
                          << (f.width_from ? value_of(scopes, *f.width_from) : "0") << ");\n";
                        break;
                }
                continue;
            }
            const auto& rep = std::get<ir::Repeat>(item);
            const std::string vec = var + "." + group_member_.at(&rep.items);
            const std::string element = "e" + std::to_string(scopes.size());
            o << indent << vec << ".resize(r_.check_count(" << value_of(scopes, rep.count) << ", s[" << rep.count
              << "]));\n";
            o << indent << "for (auto& " << element << " : " << vec << ") {\n";
            scopes.push_back({element, rep.items});
            emit_decode_items(o, rep.items, scopes, indent + "    ");
            scopes.pop_back();
            o << indent << "}\n";
        }
    }

    void emit_write_items(std::ostream& o, const std::vector<ir::LayoutItem>& items, Scopes& scopes,
                          const std::string& indent) const {
        const std::string var = scopes.back().var;  // a copy: pushing a scope moves the vector
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (*index == 0) continue;
                const ir::Field& f = record_.fields[*index];
                const std::string source = var + "." + member_[*index];
                const std::string state = "s[" + std::to_string(*index) + "]";
                switch (f.type) {
                    case ir::Type::unsigned_int: o << indent << "w_.write_int(" << state << ", " << source << ");\n"; break;
                    case ir::Type::signed_int:
                        o << indent << "w_.write_int(" << state << ", static_cast<std::uint64_t>(" << source << "));\n";
                        break;
                    case ir::Type::floating: o << indent << "w_.write_float(" << state << ", " << source << ");\n"; break;
                    case ir::Type::bytes:
                        o << indent << "w_.write_bytes(" << state << ", " << source << ", "
                          << (f.width_from ? value_of(scopes, *f.width_from) : "0") << ");\n";
                        break;
                }
                continue;
            }
            const auto& rep = std::get<ir::Repeat>(item);
            const std::string vec = var + "." + group_member_.at(&rep.items);
            const std::string element = "e" + std::to_string(scopes.size());
            o << indent << "w_.check_count(s[" << rep.count << "], " << value_of(scopes, rep.count) << ", " << vec
              << ".size());\n";
            o << indent << "for (const auto& " << element << " : " << vec << ") {\n";
            scopes.push_back({element, rep.items});
            emit_write_items(o, rep.items, scopes, indent + "    ");
            scopes.pop_back();
            o << indent << "}\n";
        }
    }

    void emit_visit_items(std::ostream& o, const std::vector<ir::LayoutItem>& items, const std::string& var,
                          const std::string& indent, int depth) const {
        for (const auto& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (*index != 0) o << indent << "v.field(" << *index << "u, " << var << "." << member_[*index] << ");\n";
                continue;
            }
            const auto& rep = std::get<ir::Repeat>(item);
            const std::string element = "e" + std::to_string(depth);
            o << indent << "v.repeat(" << rep.count << "u, " << var << "." << group_member_.at(&rep.items)
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
    bool fast_ = false;
    std::uint32_t fast_size_ = 0;
    std::vector<FastField> fast_fields_;
};

}  // namespace

std::string cpp_header_name(const ir::Schema& schema) { return schema.name + ".hpp"; }

std::string generate_cpp(const ir::Schema& schema) { return generate_cpp(schema, cpp_namespace(schema.name)); }

std::string generate_cpp(const ir::Schema& schema, const std::string& ns) {
    std::vector<RecordCode> records;
    std::set<std::string> struct_names{"RecordType", "Reader", "Writer", "Comment", "Section", "Metadata"};
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
    // The records the fast loops switch to by their tag alone.
    auto by_tag = [&](const RecordCode& c) { return user(c) && records_with_tag[c.record().tag] == 1; };

    std::ostringstream o;
    o << "// Generated by mtfc " << version << " from the DTD '" << schema.name << "'. Do not edit:\n"
      << "// regenerate with `mtfc --emit=cpp`. Reads and writes Meta-TF traces of this DTD\n"
      << "// through the Meta-TF runtime (the file format: Meta-TF's docs/trace-format.md).\n"
      << "#pragma once\n\n"
      << "#include <cstdint>\n#include <cstring>\n#include <span>\n#include <string>\n#include <string_view>\n#include <tuple>\n"
      << "#include <vector>\n\n"
      << "#include <metatf/reader.hpp>\n#include <metatf/writer.hpp>\n";
    emit_text_includes(o, schema);
    o << "\n"
      << "namespace " << ns << " {\n\nnamespace rt = metatf::rt;\n\n";

    o << "// Every record type, numbered as the runtime numbers them.\nenum class RecordType : std::uint32_t {\n";
    for (const auto& c : records) o << "    " << c.name() << " = " << c.slot() << ",\n";
    o << "};\n\n";

    o << "// The predefined records.\n"
      << "struct Comment {\n    static constexpr RecordType type = RecordType::Comment;\n    std::string_view text;\n};\n\n"
      << "struct Section {\n    static constexpr RecordType type = RecordType::Section;\n    std::uint8_t number = 0;\n};\n\n"
      << "struct Metadata {\n    static constexpr RecordType type = RecordType::Metadata;\n"
      << "    RecordType record{};  // the record type changed\n    std::uint32_t field = 0;  // its field index\n"
      << "    rt::MetaOp op = rt::MetaOp::width;\n    std::uint64_t a = 0, b = 0;\n};\n\n";
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

    // ---- the reader
    o << "// Reads a trace of this DTD: pull records with next(), or pass a visitor to visit().\n"
      << "class Reader {\npublic:\n"
      << "    explicit Reader(const std::string& path) : r_(path, dtd) {\n";
    std::uint32_t window = schema.tag_width;
    for (const auto& c : records) {
        if (by_tag(c) && c.fast_by_tag()) window = std::max(window, schema.tag_width + c.fast_size());
    }
    o << "        r_.set_fast_window(" << window << ");  // the longest record the fast loops read\n";
    for (const auto& c : records) {
        if (user(c)) c.emit_set_defaults_call(o);
    }
    o << "    }\n\n"
      << "    // Moves to the next record; false at the end of the trace. Throws rt::TraceError.\n"
      << "    METATF_INLINE bool next() {\n        return step([](const auto&) {});\n    }\n\n"
      << "    RecordType type() const { return type_; }\n"
      << "    // The current record; valid until the next call of next().\n"
      << "    template <typename Record>\n    const Record& get() const { return std::get<Record>(records_); }\n\n"
      << "    // Calls v(record) with the current record's struct.\n"
      << "    template <typename Visitor>\n    void dispatch(Visitor&& v) const {\n        switch (type_) {\n";
    for (const auto& c : records) {
        o << "            case RecordType::" << c.name() << ": v(std::get<" << c.name() << ">(records_)); break;\n";
    }
    o << "        }\n    }\n\n"
      << "    // Reads the rest of the trace, calling v(record) for every record.\n"
      << "    template <typename Visitor>\n    void visit(Visitor&& v) {\n"
      << "        do {\n            std::uint64_t records = 0;\n"
      << "            const rt::TraceReader::Run stop = visit_fast(v, records);\n"
      << "            r_.advance(stop.pos, records);\n"
      << "        } while (step_general(v));\n    }\n\n"
      << "    // Reads the record at `offset` of table section `section` (the target of a\n"
      << "    // sectionOffset field) with the DTD's initial encodings, and calls v(record).\n"
      << "    template <typename Visitor>\n    void visit_table_record(std::uint8_t section, std::uint64_t offset, Visitor&& v) {\n"
      << "        r_.table_record(section, offset, [&](rt::TraceReader& r) {\n            switch (r.slot()) {\n";
    for (const auto& c : records) {
        if (!user(c)) continue;
        o << "                case " << c.slot() << ": visit_decoded<" << c.name() << ">(v); break;\n";
    }
    o << "                default: r.fail(rt::ErrorKind::unknown_tag, \"a table holds no predefined records\");\n"
      << "            }\n        });\n    }\n\n"
      << "    rt::TraceReader& runtime() { return r_; }\n\nprivate:\n"
      << "    // Hands the record just read to `then` as the current one.\n"
      << "    template <typename Record, typename Then>\n"
      << "    METATF_INLINE bool deliver(Record& record, Then& then) {\n"
      << "        type_ = Record::type;\n"
      << "        then(record);\n"
      << "        return true;\n    }\n\n"
      << "    // Reads one record and hands it to `then`. Before run.limit every fast\n"
      << "    // record fits in the chunk, so a record in its initial layout needs no\n"
      << "    // length test: the switch on its tag, one mask test, loads at constant\n"
      << "    // offsets. Another user record goes to take_general(); step_general()\n"
      << "    // reads the rest (the chunk's tail, predefined records, shared tags).\n"
      << "    template <typename Then>\n    METATF_INLINE bool step(Then&& then) {\n"
      << "        const rt::TraceReader::Run run = r_.run();\n"
      << "        if (run.pos < run.limit) {\n"
      << "            const std::uint64_t tag = rt::load_native<" << schema.tag_width << ">(run.pos);\n"
      << "            switch (tag) {\n";
    for (const auto& c : records) {
        if (by_tag(c)) c.emit_step_case(o, schema.tag_width);
    }
    o << "                default: break;\n            }\n        }\n        return step_general(then);\n    }\n\n"
      << "    template <typename Record, typename Then>\n"
      << "    METATF_INLINE bool take_fast(Record& record, const rt::TraceReader::Run& run, std::size_t size, Then& then) {\n"
      << "        load_fast(record, run.pos + " << schema.tag_width << ");\n"
      << "        r_.advance(run.pos + size, 1);\n"
      << "        return deliver(record, then);\n    }\n\n"
      << "    // The user record at run.pos when it is not in its initial layout: the\n"
      << "    // runtime reads its fields under the encodings metadata has set, out of\n"
      << "    // line. The record type stays visible here, so the caller's switch on\n"
      << "    // type() or its visitor needs no second dispatch.\n"
      << "    template <typename Record, typename Then>\n"
      << "    METATF_INLINE bool take_general(Record& record, const rt::TraceReader::Run& run, Then& then) {\n"
      << "        read_at(record, run);\n"
      << "        return deliver(record, then);\n    }\n\n"
      << "    template <typename Record>\n"
      << "    [[gnu::noinline]] void read_at(Record& record, const rt::TraceReader::Run& run) {\n"
      << "        r_.begin_record(run, static_cast<std::uint32_t>(Record::type));\n"
      << "        decode_general(record);\n"
      << "        r_.end_record();\n    }\n\n"
      << "    // Any record, through the runtime's primitives.\n"
      << "    template <typename Then>\n    bool step_general(Then&& then) {\n"
      << "        if (!r_.begin_record()) return false;\n        switch (r_.slot()) {\n";
    for (const auto& c : records) {
        o << "            case " << c.slot() << ": {\n                auto& record = std::get<" << c.name()
          << ">(records_);\n";
        switch (c.record().predefined) {
            case ir::Predefined::comment: o << "                record.text = r_.read_comment();\n"; break;
            case ir::Predefined::section: o << "                record.number = r_.read_section();\n"; break;
            case ir::Predefined::metadata: o << "                read_metadata(record);\n"; break;
            case ir::Predefined::none: o << "                decode_general(record);\n"; break;
        }
        o << "                r_.end_record();\n                return deliver(record, then);\n            }\n";
    }
    o << "        }\n        return true;\n    }\n\n";
    o << "    // Reads records in the DTD's own layout straight from the chunk, with the\n"
      << "    // cursor and the record in locals (registers); user records in other\n"
      << "    // layouts go through take_general() on the way. Stops at what only\n"
      << "    // step_general() reads (a predefined record, the chunk's tail, an unknown\n"
      << "    // tag) and returns where that is; `records` counts the records read since\n"
      << "    // the cursor was last handed back.\n"
      << "    template <typename Visitor>\n"
      << "    METATF_INLINE rt::TraceReader::Run visit_fast([[maybe_unused]] Visitor& v, [[maybe_unused]] std::uint64_t& records) {\n"
      << "        rt::TraceReader::Run run = r_.run();\n"
      << "        while (run.pos < run.limit) {\n"
      << "            const std::uint64_t tag = rt::load_native<" << schema.tag_width << ">(run.pos);\n"
      << "            switch (tag) {\n";
    for (const auto& c : records) {
        if (by_tag(c)) c.emit_visit_case(o, schema.tag_width);
    }
    o << "                default: return run;\n            }\n        }\n        return run;\n    }\n\n"
      << "    // visit_fast()'s record in its initial layout, built in a local so that\n"
      << "    // its fields stay in registers.\n"
      << "    template <typename Record, typename Visitor>\n"
      << "    METATF_INLINE void visit_local(rt::TraceReader::Run& run, std::size_t size, Visitor& v, std::uint64_t& records) {\n"
      << "        Record record;\n"
      << "        set_defaults(record);\n"
      << "        load_fast(record, run.pos + " << schema.tag_width << ");\n"
      << "        run.pos += size;\n"
      << "        ++records;\n"
      << "        v(record);\n    }\n\n"
      << "    // visit_fast()'s record in another layout: the runtime gets the cursor\n"
      << "    // back to read it, and the loop copies it out again.\n"
      << "    template <typename Record, typename Visitor>\n"
      << "    METATF_INLINE void visit_general(Record& record, rt::TraceReader::Run& run, Visitor& v, std::uint64_t& records) {\n"
      << "        r_.advance(run.pos, records);\n"
      << "        records = 0;\n"
      << "        take_general(record, run, v);\n"
      << "        run = r_.run();\n    }\n\n"
      << "    // visit_table_record()'s record, decoded with the initial encodings.\n"
      << "    template <typename Record, typename Visitor>\n"
      << "    void visit_decoded(Visitor& v) {\n"
      << "        Record record;\n"
      << "        decode(record);\n"
      << "        v(record);\n    }\n\n"
      << "    void read_metadata(Metadata& record) {\n        const rt::MetadataChange m = r_.read_metadata();\n"
      << "        record = Metadata{static_cast<RecordType>(m.slot), m.field, m.op, m.a, m.b};\n"
      << "    }\n\n";
    for (const auto& c : records) {
        if (user(c)) c.emit_decode_fast(o);
    }
    for (const auto& c : records) {
        if (user(c)) c.emit_decode(o);
    }
    for (const auto& c : records) {
        if (user(c)) c.emit_decode_general(o);
    }
    o << "\n    rt::TraceReader r_;\n    RecordType type_{};\n    Records records_;\n};\n\n";

    // ---- the writer
    o << "// Writes a trace of this DTD. close() finishes it; without close() nothing is left at `path`.\n"
      << "class Writer {\npublic:\n"
      << "    explicit Writer(const std::string& path, rt::WriterOptions options = {}) : w_(path, dtd, options) {}\n\n";
    for (const auto& c : records) {
        if (user(c)) c.emit_write(o, schema.tag_width);
    }
    o << "\n    void comment(std::string_view text) { w_.comment(text); }\n"
      << "    // Starts section `number`: the records that follow belong to it.\n"
      << "    void section(std::uint8_t number) { w_.section(number); }\n"
      << "    // Metadata: change a field's width or interpretation for the records that follow.\n"
      << "    void set_width(RecordType record, std::uint32_t field, std::uint32_t width) {\n"
      << "        w_.metadata(static_cast<std::uint32_t>(record), field, rt::MetaOp::width, width);\n    }\n"
      << "    void set_interpretation(RecordType record, std::uint32_t field, rt::MetaOp op, std::uint64_t a = 0,\n"
      << "                            std::int64_t b = 0) {\n"
      << "        w_.metadata(static_cast<std::uint32_t>(record), field, op, a, static_cast<std::uint64_t>(b));\n    }\n"
      << "    void close() { w_.close(); }\n\n    rt::TraceWriter& runtime() { return w_; }\n\n"
      << "private:\n";
    for (const auto& c : records) {
        if (user(c)) c.emit_write_fields(o);
    }
    o << "\n    rt::TraceWriter w_;\n};\n\n";
    emit_text_codec(o, schema);
    o << "}  // namespace " << ns << "\n";
    return o.str();
}

}  // namespace metatf::back
