// The native binary forms of a DTD: the `native NAME { ... }` blocks, each
// record's type code and each field's C type, checked together once the
// records are resolved.
#pragma once

#include <vector>

#include "../diagnostics.hpp"
#include "../ir/schema.hpp"
#include "ast.hpp"
#include "text_form.hpp"

namespace metatf::front {

// Resolves the `native` blocks into schema.native, gives each record its
// type code (its tag unless `tag.code` sets one), lays out every field in
// every form and checks that it can be. `sites` runs parallel to schema.records.
void resolve_native_form(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites,
                         Diagnostics& diags);

}  // namespace metatf::front
