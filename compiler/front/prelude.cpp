#include "prelude.hpp"

#include <stdexcept>

#include "parser.hpp"

namespace metatf::front {

namespace {

// Written in Meta-TF itself. Every field's type, width and interpretation is
// set in the record's own block, so no property of a user's DTD can change
// these records (see docs/dtd-language.md, "Predefined records").
constexpr const char* prelude_text = R"(// The predefined records of Meta-TF.

// A byte string preceded by its length.
vfield : (length, data) {
    length.type = unsigned;
    length.width = 1;
    length.interpretation = none;
    data.type = bytes;
    data.width = length.value;
    data.interpretation = none;
}

comment : vfield {
    tag.value = 1;
}

// Starts a section; `number` is the section's number.
section : (tag, number) {
    tag.value = 2;
    number.type = unsigned;
    number.width = 1;
    number.interpretation = none;
}

// Changes the width or interpretation of one field of one record type. The
// parts declared here are followed by 0, 1 or 2 values, as many as
// `property` needs, each one word of the trace's class (4 or 8 bytes): a DTD
// cannot declare those, and the runtime reads and writes them itself.
metadata : (tag, record, field, property) {
    tag.value = 3;
    record.type = unsigned;
    record.width = tag.width;
    record.interpretation = none;
    field.type = unsigned;
    field.width = 1;
    field.interpretation = none;
    property.type = unsigned;
    property.width = 1;
    property.interpretation = none;
}
)";

}  // namespace

const ast::Dtd& prelude() {
    static const ast::Dtd parsed = [] {
        auto source = std::make_shared<SourceFile>(SourceFile{"<predefined>", prelude_text});
        Diagnostics diags;
        auto dtd = parse_dtd(source, diags);
        if (!dtd) throw std::logic_error("the predefined records do not parse");
        return std::move(*dtd);
    }();
    return parsed;
}

}  // namespace metatf::front
