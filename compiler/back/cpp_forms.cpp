// The native forms in generated code: TextReader / TextWriter and
// NativeReader / NativeWriter classes over the record structs (the forms'
// tables are cpp_tables.cpp's).
#include "cpp_parts.hpp"

namespace metatf::back {

void emit_form_includes(std::ostream& o, const ir::Schema& schema) {
    if (schema.text || !schema.native.empty()) o << "#include <metatf/typed/forms.hpp>\n";
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
    if (schema.native.empty()) return;
    const bool several = schema.native.size() > 1;
    if (several) {
        o << "// The native binary forms, to name one to a reader or writer.\n";
        for (std::size_t k = 0; k < schema.native.size(); ++k) {
            o << "inline constexpr const rt::NativeFormDesc& native_" << schema.native[k].name << " = detail::native_forms[" << k << "];\n";
        }
        o << "\n";
    }
    o << "// Reads one of the DTD's native binary forms, a record at a time: visit(v) calls\n"
      << "// v(record); runtime().header() is the file's ASCII header. Without a form, the\n"
      << "// DTD's only one, or the one whose magic bytes start the file. Throws\n"
      << "// rt::TraceError at the byte offset of input that is not a record.\n"
      << "class NativeReader : public rt::TypedFormReader<Records, rt::NativeReader> {\npublic:\n"
      << "    explicit NativeReader(std::istream& in) : TypedFormReader(in, dtd) {}\n"
      << "    NativeReader(std::istream& in, const rt::NativeFormDesc& form) : TypedFormReader(in, dtd, form) {}\n};\n\n"
      << "// Writes records in one of the DTD's native binary forms; runtime().header(text)\n"
      << "// first gives the ASCII header, close() flushes.\n"
      << "class NativeWriter : public rt::TypedFormWriter<Records, rt::NativeWriter> {\npublic:\n";
    if (!several) o << "    explicit NativeWriter(std::ostream& out) : TypedFormWriter(out, dtd) {}\n";
    o << "    NativeWriter(std::ostream& out, const rt::NativeFormDesc& form) : TypedFormWriter(out, dtd, form) {}\n};\n\n";
}

}  // namespace metatf::back
