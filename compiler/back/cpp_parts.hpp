// Pieces of the C++ back end shared by its files: cpp.cpp emits the codec,
// cpp_tables.cpp the descriptor tables, cpp_forms.cpp the text and native forms' classes.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <metatf/core/descriptor.hpp>

#include "../ir/schema.hpp"

namespace metatf::back {

// A C++ identifier for a name: bytes outside [A-Za-z0-9_] become '_', a leading
// digit gets a '_' before it, and a keyword or likely macro a '_' after it
// (docs/dtd-language.md, section 11, "Names").
std::string identifier(const std::string& name);
// A C++ string literal holding `text`, split after each line break.
std::string literal(const std::string& text);
// A C++ literal of a signed 64-bit value.
std::string signed_literal(std::int64_t v);

// Namespace detail with the descriptor tables of a lowered DTD (lower/lower.hpp),
// native forms included, and the constant `dtd` over them.
void emit_tables(std::ostream& o, const rt::DtdDesc& dtd);
// After the Writer: TextReader and TextWriter classes, if the DTD has a text
// form, and NativeReader and NativeWriter, if it has a native binary form.
void emit_form_codecs(std::ostream& o, const ir::Schema& schema);
// The runtime header the native forms need, if the DTD has either.
void emit_form_includes(std::ostream& o, const ir::Schema& schema);

}  // namespace metatf::back
