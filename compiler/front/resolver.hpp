// The resolver: checks a parsed DTD and turns it into the resolved IR.
#pragma once

#include <optional>
#include <string>

#include "../diagnostics.hpp"
#include "../ir/schema.hpp"
#include "ast.hpp"

namespace metatf::front {

// Resolves `dtd` against the predefined records in `prelude`: scopes and
// names, property inheritance (record, then section, then global), field
// types, widths and interpretations, references between fields, tags and
// sections. Errors and warnings go to `diags`; the schema is returned only
// when there was no error.
std::optional<ir::Schema> resolve(const ast::Dtd& dtd, const ast::Dtd& prelude, std::string name, Diagnostics& diags);

}  // namespace metatf::front
