// Pieces of the C++ back end shared by its files: cpp.cpp emits the codec,
// cpp_text.cpp the text form.
#pragma once

#include <ostream>
#include <string>

#include "../ir/schema.hpp"

namespace metatf::back {

// A C++ identifier for a name: bytes outside [A-Za-z0-9_] become '_', a leading
// digit gets a '_' before it, and a keyword or likely macro a '_' after it
// (docs/dtd-language.md, section 11, "Names").
std::string identifier(const std::string& name);
// A C++ string literal holding `text`, split after each line break.
std::string literal(const std::string& text);

// The name of a record's descriptor tables: "<record>_<slot>".
std::string table_base(const ir::Record& record, std::size_t slot);

// The text form's descriptor expression for rt::DtdDesc: "&detail::text_form" or "nullptr".
std::string text_table_name(const ir::Schema& schema);
// Inside namespace detail: the text form's descriptor tables, if the DTD has a text form.
void emit_text_tables(std::ostream& o, const ir::Schema& schema);
// After the Writer: TextReader and TextWriter classes, if the DTD has a text form.
void emit_text_codec(std::ostream& o, const ir::Schema& schema);
// The runtime headers the text form needs, if any.
void emit_text_includes(std::ostream& o, const ir::Schema& schema);

}  // namespace metatf::back
