// The native binary form of a DTD: the `native { ... }` block and each
// record's type code, checked together once the records are resolved.
#pragma once

#include <vector>

#include "../diagnostics.hpp"
#include "../ir/schema.hpp"
#include "ast.hpp"
#include "text_form.hpp"

namespace metatf::front {

// Resolves the `native` block into schema.native, gives each record its type
// code (its tag unless `tag.code` sets one) and checks that every record can
// be laid out natively. `sites` runs parallel to schema.records.
void resolve_native_form(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites,
                         Diagnostics& diags);

}  // namespace metatf::front
