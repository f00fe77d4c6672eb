// The text form of a DTD: the `text { ... }` block, record mnemonics and the
// fields' text formats, checked together once the records are resolved.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../diagnostics.hpp"
#include "../ir/schema.hpp"
#include "ast.hpp"

namespace metatf::front {

// Where a resolved record sets what its text and native forms depend on, for messages.
struct RecordTextSites {
    Location record;                   // the record's name
    std::vector<Location> field_text;  // per field: its `text` property, or the field
    std::optional<Location> mnemonic;  // its `tag.mnemonic` value
    std::optional<Location> code;      // its `tag.code` value
    std::vector<Location> ctype;       // per field: its `ctype` property, or the field
    bool uncoded = false;              // `tag.code = none`: no native form holds the record
};

// Why a text format cannot apply to `field` (its type and scale resolved), if
// it cannot; `what` names the field in the message.
std::optional<std::string> text_format_problem(const ast::TextFormat& format, const ir::Field& field,
                                               const std::string& what);

ir::FieldText field_text(const ast::TextFormat& format);

// Why `prop` ("before" or "after") cannot be `text` for `field` (its text
// format resolved), if it cannot; `what` names the field in the message.
std::optional<std::string> surround_problem(std::string_view prop, const std::string& text, const ir::Field& field,
                                            const std::string& what);

// Resolves the `text` block into schema.text and checks the text form as a
// whole: mnemonics, and where `omit` and `line` may be used. `sites` runs
// parallel to schema.records.
void resolve_text_form(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites,
                       Diagnostics& diags);

}  // namespace metatf::front
