// The descriptor tables of generated code: a lowered DTD (lower/lower.hpp)
// printed as constant data, array for array, so that generated code and mtf
// hold the same tables.
#include <array>
#include <cstdint>
#include <string>

#include "cpp_parts.hpp"

namespace metatf::back {

std::string signed_literal(std::int64_t v) {
    // The most negative value has no literal of its own.
    if (v == INT64_MIN) return "INT64_MIN";
    return std::to_string(v) + "LL";
}

namespace {

// The C++ names of the runtime's enumerators, in enumerator order
// (runtime/include/metatf/core/vocabulary.hpp, whose spelling tables have the same lengths).
constexpr std::array<const char*, 4> type_enums = {"rt::Type::unsigned_int", "rt::Type::signed_int",
                                                   "rt::Type::floating", "rt::Type::bytes"};
constexpr std::array<const char*, 10> interp_enums = {
    "rt::Interp::none",   "rt::Interp::default_value",  "rt::Interp::base_offset",   "rt::Interp::delta",
    "rt::Interp::stride", "rt::Interp::section_offset", "rt::Interp::section_stride", "rt::Interp::live",
    "rt::Interp::predict", "rt::Interp::intern"};
constexpr std::array<const char*, 4> predefined_enums = {"rt::Predefined::none", "rt::Predefined::comment",
                                                         "rt::Predefined::section", "rt::Predefined::metadata"};
constexpr std::array<const char*, 9> format_enums = {"rt::TextFormat::decimal", "rt::TextFormat::hex",
                                                     "rt::TextFormat::chars",   "rt::TextFormat::string",
                                                     "rt::TextFormat::line",    "rt::TextFormat::omit",
                                                     "rt::TextFormat::enumeration", "rt::TextFormat::clock",
                                                     "rt::TextFormat::nested"};
static_assert(type_enums.size() == rt::detail::type_names.size() &&
              interp_enums.size() == rt::detail::interp_names.size() &&
              predefined_enums.size() == rt::detail::predefined_names.size() &&
              format_enums.size() == rt::detail::text_format_names.size());

template <std::size_t N, typename Enum>
const char* cpp_enum(const std::array<const char*, N>& names, Enum e) {
    return names[static_cast<std::size_t>(e)];
}

// The name of a record's tables: "<record>_<slot>".
std::string table_base(const rt::RecordDesc& r, std::uint32_t slot) {
    return identifier(r.name) + "_" + std::to_string(slot);
}

const char* bool_literal(bool b) { return b ? "true" : "false"; }

// The rules of field i, if it has any: "<base>_rules<i>" and the names it uses.
void emit_rules(std::ostream& o, const rt::FieldDesc& f, const std::string& base, std::uint32_t i) {
    const rt::FieldRules& r = *f.rules;
    const std::string name = base + "_rules" + std::to_string(i);
    if (r.name_count) {
        o << "inline constexpr rt::NamedValue " << name << "_names[] = {";
        for (std::uint32_t k = 0; k < r.name_count; ++k) {
            o << (k ? ", " : "") << "{" << literal(r.names[k].name) << ", " << r.names[k].value << "u}";
        }
        o << "};\n";
    }
    static constexpr std::array<const char*, 3> orders = {"rt::Order::none", "rt::Order::nondecreasing", "rt::Order::increasing"};
    static_assert(orders.size() == rt::detail::order_names.size());
    static constexpr std::array<const char*, 3> namings = {"rt::Naming::values", "rt::Naming::flags", "rt::Naming::parts"};
    o << "inline constexpr rt::FieldRules " << name << " = {" << bool_literal(r.has_minimum) << ", "
      << bool_literal(r.has_maximum) << ", " << r.minimum << "u, " << r.maximum << "u, "
      << (r.name_count ? name + "_names" : std::string("nullptr")) << ", " << r.name_count << ", "
      << cpp_enum(namings, r.naming) << ", " << cpp_enum(orders, r.order) << ", " << (r.global ? literal(r.global) : "nullptr") << ", " << bool_literal(r.dense) << ", "
      << r.dense_start << "u};  // "
      << f.path << "\n";
}

// An encoding as an initializer: {kind, width, restore, value, stride, section[, pool, feed]}.
void emit_encoding(std::ostream& o, const rt::Encoding& e) {
    o << "{" << cpp_enum(interp_enums, e.kind) << ", " << e.width << ", " << e.restore << ", " << e.value << "u, "
      << signed_literal(e.stride) << ", " << unsigned(e.section);
    // Pools are rare: tables without them print as before.
    if (e.pool != 0 || e.feed != 0) o << ", " << unsigned(e.pool) << ", " << unsigned(e.feed);
    o << "}";
}

// A record's variants, if it has any: "<base>_variants", each variant's encodings "<base>_variant<k>".
void emit_variants(std::ostream& o, const rt::RecordDesc& r, const std::string& base) {
    for (std::uint32_t k = 0; k < r.variant_count; ++k) {
        o << "inline constexpr rt::Encoding " << base << "_variant" << k << "[] = {  // " << r.variants[k].name << "\n";
        for (std::uint32_t i = 0; i < r.field_count; ++i) {
            o << "    ";
            emit_encoding(o, r.variants[k].fields[i]);
            o << ",\n";
        }
        o << "};\n";
    }
    if (r.variant_count == 0) return;
    o << "inline constexpr rt::VariantDesc " << base << "_variants[] = {";
    for (std::uint32_t k = 0; k < r.variant_count; ++k) {
        o << (k ? ", " : "") << "{" << literal(r.variants[k].name) << ", " << base << "_variant" << k << "}";
    }
    o << "};\n";
}

void emit_fields(std::ostream& o, const rt::RecordDesc& r, const std::string& base) {
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        if (r.fields[i].rules) emit_rules(o, r.fields[i], base, i);
    }
    o << "inline constexpr rt::FieldDesc " << base << "_fields[] = {\n";
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        const rt::FieldDesc& f = r.fields[i];
        o << "    {" << literal(f.path) << ", " << cpp_enum(type_enums, f.type) << ", " << unsigned(f.scale) << ", "
          << (f.width_from == rt::no_field ? "rt::no_field" : std::to_string(f.width_from)) << ", ";
        emit_encoding(o, f.initial);
        const bool history = f.history != rt::no_field || f.keys_history;
        if (f.rules || f.fixed || history) o << ", " << (f.rules ? "&" + base + "_rules" + std::to_string(i) : "nullptr");  // most fields have none
        if (f.fixed || history) o << ", " << (f.fixed ? "true" : "false") << ", " << f.fixed_value << "u";
        const auto field = [](std::int32_t i) { return i == rt::no_field ? std::string("rt::no_field") : std::to_string(i); };
        if (history) o << ", " << field(f.history) << ", " << field(f.history_key) << ", " << (f.keys_history ? "true" : "false");
        o << "},\n";
    }
    o << "};\n";
}

void emit_layout(std::ostream& o, const rt::RecordDesc& r, const std::string& base) {
    static constexpr std::array<const char*, 3> ops = {"rt::LayoutStep::field", "rt::LayoutStep::repeat",
                                                       "rt::LayoutStep::end"};
    o << "inline constexpr rt::LayoutStep " << base << "_layout[] = {";
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        o << (i ? ", " : "") << "{" << ops[r.layout[i].op] << ", " << r.layout[i].index << "}";
    }
    if (r.layout_count == 0) o << "{rt::LayoutStep::end, 0}";  // no zero-length arrays
    o << "};\n";
}

void emit_records(std::ostream& o, const rt::DtdDesc& dtd) {
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const rt::RecordDesc& r = dtd.records[slot];
        const std::string base = table_base(r, slot);
        emit_fields(o, r, base);
        emit_layout(o, r, base);
        emit_variants(o, r, base);
    }
    o << "\ninline constexpr rt::RecordDesc records[] = {\n";
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const rt::RecordDesc& r = dtd.records[slot];
        const std::string base = table_base(r, slot);
        o << "    {" << literal(r.name) << ", " << r.tag << "u, " << unsigned(r.section) << ", "
          << cpp_enum(predefined_enums, r.predefined) << ", " << base << "_fields, " << r.field_count << ", " << base
          << "_layout, " << r.layout_count;
        if (r.variant_count) o << ", " << base << "_variants, " << r.variant_count;
        o << "},\n";
    }
    o << "};\n";
}

void emit_sections(std::ostream& o, const rt::DtdDesc& dtd) {
    if (dtd.section_count == 0) return;
    o << "inline constexpr rt::SectionDesc sections[] = {\n";
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) {
        o << "    {" << unsigned(dtd.sections[i].number) << ", " << literal(dtd.sections[i].name) << "},\n";
    }
    o << "};\n";
}

void emit_text_fields(std::ostream& o, const rt::RecordDesc& r, const rt::TextRecordDesc& t, const std::string& base) {
    o << "inline constexpr rt::TextFieldDesc " << base << "_text[] = {\n";
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        const rt::TextFieldDesc& f = t.fields[i];
        o << "    {" << cpp_enum(format_enums, f.format) << ", " << (f.ignore_case ? "true" : "false") << ", "
          << literal(f.chars) << ", " << unsigned(f.digits) << ", " << (f.upper ? "true" : "false") << ", "
          << (f.before ? literal(f.before) : "nullptr") << ", " << literal(f.after) << ", " << unsigned(f.column) << ", "
          << (f.left ? "true" : "false") << ", " << f.tab << "},  // " << r.fields[i].path << "\n";
    }
    o << "};\n";
}

void emit_text_form(std::ostream& o, const rt::DtdDesc& dtd) {
    if (!dtd.text_form) return;
    const rt::TextFormDesc& form = *dtd.text_form;
    o << "\n// The native text form: how each field is written in a line.\n";
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const rt::TextRecordDesc& t = form.records[slot];
        if (t.mnemonic) emit_text_fields(o, dtd.records[slot], t, table_base(dtd.records[slot], slot));
    }
    o << "inline constexpr rt::TextRecordDesc text_records[] = {\n";
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const rt::RecordDesc& r = dtd.records[slot];
        if (const char* mnemonic = form.records[slot].mnemonic) {
            o << "    {" << literal(mnemonic) << ", " << table_base(r, slot) << "_text},\n";
        } else {
            o << "    {nullptr, nullptr},  // " << r.name << ": no text form\n";
        }
    }
    o << "};\n"
      << "inline constexpr rt::TextFormDesc text_form = {" << literal(form.separator) << ", " << literal(form.begin)
      << ", " << literal(form.end) << ", text_records" << (form.head != 0 ? ", " + std::to_string(form.head) : std::string()) << "};\n";
}

const char* kind_name(rt::NativeKind k) {
    return k == rt::NativeKind::chars ? "rt::NativeKind::chars" : k == rt::NativeKind::implied ? "rt::NativeKind::implied" : "rt::NativeKind::value";
}

// Form k's tables: how each record's fields are stored, its records, its magic bytes.
void emit_native_form(std::ostream& o, const rt::DtdDesc& dtd, std::uint32_t k) {
    const rt::NativeFormDesc& form = dtd.native_forms[k];
    const std::string base = "native" + std::to_string(k);
    o << "\n// The native binary form" << (*form.name ? std::string(" ") + form.name : std::string()) << ": how each field is stored.\n";
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const rt::RecordDesc& r = dtd.records[slot];
        if (r.predefined != rt::Predefined::none) continue;
        o << "inline constexpr rt::NativeFieldDesc " << base << "_fields" << slot << "[] = {";
        for (std::uint32_t i = 0; i < r.field_count; ++i) {
            o << (i ? ", " : "") << "{" << form.records[slot].fields[i].width << ", " << kind_name(form.records[slot].fields[i].kind) << "}";
        }
        o << "};  // " << r.name << "\n";
    }
    o << "inline constexpr rt::NativeRecordDesc " << base << "_records[] = {\n";
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const rt::RecordDesc& r = dtd.records[slot];
        const rt::NativeRecordDesc& n = form.records[slot];
        if (r.predefined != rt::Predefined::none) {
            o << "    {false, 0, nullptr},  // " << r.name << "\n";
        } else {
            o << "    {" << (n.held ? "true" : "false") << ", " << n.code << ", " << base << "_fields" << slot << "},  // " << r.name << "\n";
        }
    }
    o << "};\n";
    if (form.magic_size) {
        o << "inline constexpr std::uint8_t " << base << "_magic[] = {";
        for (std::uint32_t i = 0; i < form.magic_size; ++i) o << (i ? ", " : "") << unsigned(form.magic[i]);
        o << "};\n";
    }
}

void emit_native_forms(std::ostream& o, const rt::DtdDesc& dtd) {
    if (dtd.native_form_count == 0) return;
    for (std::uint32_t k = 0; k < dtd.native_form_count; ++k) emit_native_form(o, dtd, k);
    o << "inline constexpr rt::NativeFormDesc native_forms[] = {\n";
    for (std::uint32_t k = 0; k < dtd.native_form_count; ++k) {
        const rt::NativeFormDesc& form = dtd.native_forms[k];
        const std::string base = "native" + std::to_string(k);
        o << "    {" << literal(form.name) << ", " << (form.order == rt::ByteOrder::big ? "rt::ByteOrder::big" : "rt::ByteOrder::little") << ", "
          << unsigned(form.code_width) << ", " << unsigned(form.align) << ", " << bool_literal(form.high_bits_first) << ", " << (form.header_end ? literal(form.header_end) : "nullptr") << ", "
          << (form.magic_size ? base + "_magic" : "nullptr") << ", " << form.magic_size << ", " << base << "_records, "
          << (form.header_slot == rt::no_slot ? std::string("rt::no_slot") : std::to_string(form.header_slot)) << "},\n";
    }
    o << "};\n";
}

}  // namespace

void emit_tables(std::ostream& o, const rt::DtdDesc& dtd) {
    o << "namespace detail {\n\n";
    emit_records(o, dtd);
    emit_sections(o, dtd);
    o << "inline constexpr char text[] =\n    " << literal(dtd.text) << ";\n";
    emit_text_form(o, dtd);
    emit_native_forms(o, dtd);
    o << "\n}  // namespace detail\n\n";
    o << "// The DTD as the runtime sees it.\ninline constexpr rt::DtdDesc dtd = {" << literal(dtd.name)
      << ", detail::text, " << dtd.tag_width << ", " << (dtd.section_count ? "detail::sections" : "nullptr") << ", "
      << dtd.section_count << ", detail::records, " << dtd.record_count << ", "
      << (dtd.text_form ? "&detail::text_form" : "nullptr") << ", "
      << (dtd.native_form_count ? "detail::native_forms" : "nullptr") << ", " << dtd.native_form_count << "};\n\n";
}

}  // namespace metatf::back
