// The text form in generated code: descriptor tables for the runtime's text
// codec, and TextReader / TextWriter classes over the record structs.
#include "cpp_parts.hpp"

namespace metatf::back {

namespace {

const char* format_enum(ir::TextFormat f) {
    switch (f) {
        case ir::TextFormat::decimal: return "rt::TextFormat::decimal";
        case ir::TextFormat::hex: return "rt::TextFormat::hex";
        case ir::TextFormat::chars: return "rt::TextFormat::chars";
        case ir::TextFormat::string: return "rt::TextFormat::string";
        case ir::TextFormat::line: return "rt::TextFormat::line";
        case ir::TextFormat::omit: return "rt::TextFormat::omit";
    }
    return "rt::TextFormat::decimal";
}

void emit_field_table(std::ostream& o, const ir::Record& r, std::size_t slot) {
    o << "inline constexpr rt::TextFieldDesc " << table_base(r, slot) << "_text[] = {\n";
    for (const ir::Field& f : r.fields) {
        o << "    {" << format_enum(f.text.format) << ", " << (f.text.ignore_case ? "true" : "false") << ", "
          << literal(f.text.chars) << "},  // " << f.path << "\n";
    }
    o << "};\n";
}

}  // namespace

std::string table_base(const ir::Record& record, std::size_t slot) {
    return identifier(record.name) + "_" + std::to_string(slot);
}

std::string text_table_name(const ir::Schema& schema) { return schema.text ? "&detail::text_form" : "nullptr"; }

void emit_text_includes(std::ostream& o, const ir::Schema& schema) {
    if (schema.text) o << "#include <metatf/typed_text.hpp>\n";
}

void emit_text_tables(std::ostream& o, const ir::Schema& schema) {
    if (!schema.text) return;
    o << "\n// The native text form: how each field is written in a line.\n";
    for (std::size_t slot = 0; slot < schema.records.size(); ++slot) {
        if (schema.records[slot].mnemonic) emit_field_table(o, schema.records[slot], slot);
    }
    o << "inline constexpr rt::TextRecordDesc text_records[] = {\n";
    for (std::size_t slot = 0; slot < schema.records.size(); ++slot) {
        const ir::Record& r = schema.records[slot];
        if (r.mnemonic) {
            o << "    {" << literal(*r.mnemonic) << ", " << table_base(r, slot) << "_text},\n";
        } else {
            o << "    {nullptr, nullptr},  // " << r.name << ": no text form\n";
        }
    }
    o << "};\n"
      << "inline constexpr rt::TextFormDesc text_form = {" << literal(schema.text->separator) << ", "
      << literal(schema.text->begin) << ", " << literal(schema.text->end) << ", text_records};\n";
}

void emit_text_codec(std::ostream& o, const ir::Schema& schema) {
    if (!schema.text) return;
    o << "// Reads the DTD's native text form, a line at a time: visit(v) calls v(record).\n"
      << "// Throws rt::TextError (with line and column) for a line that is not a record.\n"
      << "class TextReader : public rt::TypedTextReader<Records> {\npublic:\n"
      << "    explicit TextReader(std::istream& in, rt::TextReadOptions options = {})\n"
      << "        : TypedTextReader(in, dtd, options) {}\n};\n\n"
      << "// Writes records in the DTD's native text form; close() writes the end line.\n"
      << "class TextWriter : public rt::TypedTextWriter<Records> {\npublic:\n"
      << "    explicit TextWriter(std::ostream& out) : TypedTextWriter(out, dtd) {}\n};\n\n";
}

}  // namespace metatf::back
