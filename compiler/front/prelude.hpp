// The records every DTD has without writing them: vfield, comment, section, metadata.
#pragma once

#include <memory>

#include "ast.hpp"

namespace metatf::front {

// The predefined records, parsed once from their Meta-TF text.
const ast::Dtd& prelude();

}  // namespace metatf::front
