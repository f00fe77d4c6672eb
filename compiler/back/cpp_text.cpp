// The text form in generated code: TextReader / TextWriter classes over the
// record structs (the text form's tables are cpp_tables.cpp's).
#include "cpp_parts.hpp"

namespace metatf::back {

void emit_text_includes(std::ostream& o, const ir::Schema& schema) {
    if (schema.text) o << "#include <metatf/typed_text.hpp>\n";
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
