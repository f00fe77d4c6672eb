// The native forms in generated code: TextReader / TextWriter and
// NativeReader / NativeWriter classes over the record structs (the forms'
// tables are cpp_tables.cpp's).
#include "cpp_parts.hpp"

namespace metatf::back {

void emit_form_includes(std::ostream& o, const ir::Schema& schema) {
    if (schema.text || schema.native) o << "#include <metatf/typed_forms.hpp>\n";
}

void emit_form_codecs(std::ostream& o, const ir::Schema& schema) {
    if (schema.text) {
        o << "// Reads the DTD's native text form, a line at a time: visit(v) calls v(record).\n"
          << "// Throws rt::TextError (with line and column) for a line that is not a record.\n"
          << "class TextReader : public rt::TypedFormReader<Records, rt::TextReader> {\npublic:\n"
          << "    explicit TextReader(std::istream& in, rt::TextReadOptions options = {})\n"
          << "        : TypedFormReader(in, dtd, options) {}\n};\n\n"
          << "// Writes records in the DTD's native text form; close() writes the end line.\n"
          << "class TextWriter : public rt::TypedFormWriter<Records, rt::TextWriter> {\npublic:\n"
          << "    explicit TextWriter(std::ostream& out) : TypedFormWriter(out, dtd) {}\n};\n\n";
    }
    if (schema.native) {
        o << "// Reads the DTD's native binary form, a record at a time: visit(v) calls v(record);\n"
          << "// runtime().header() is the file's ASCII header. Throws rt::TraceError at the byte\n"
          << "// offset of input that is not a record.\n"
          << "class NativeReader : public rt::TypedFormReader<Records, rt::NativeReader> {\npublic:\n"
          << "    explicit NativeReader(std::istream& in) : TypedFormReader(in, dtd) {}\n};\n\n"
          << "// Writes records in the DTD's native binary form; runtime().header(text) first\n"
          << "// gives the ASCII header, close() flushes.\n"
          << "class NativeWriter : public rt::TypedFormWriter<Records, rt::NativeWriter> {\npublic:\n"
          << "    explicit NativeWriter(std::ostream& out) : TypedFormWriter(out, dtd) {}\n};\n\n";
    }
}

}  // namespace metatf::back
