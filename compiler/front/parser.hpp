// The parser: DTD text to syntax tree, reporting syntax errors as diagnostics.
#pragma once

#include <memory>
#include <optional>

#include "../diagnostics.hpp"
#include "ast.hpp"

namespace metatf::front {

// Parses a whole DTD. After a syntax error it skips to the end of the
// enclosing top-level item and goes on, so one run reports several errors;
// the tree is returned only when there were none.
std::optional<ast::Dtd> parse_dtd(const std::shared_ptr<const SourceFile>& source, Diagnostics& diags);

}  // namespace metatf::front
