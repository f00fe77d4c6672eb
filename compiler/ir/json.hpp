// The IR as JSON: the documented, deterministic form that `mtfc --emit=ir` prints.
#pragma once

#include <nlohmann/json.hpp>

#include "schema.hpp"

namespace metatf::ir {

// The JSON form of a schema (docs/dtd-language.md, "The IR"). Keys come out in
// a fixed order, so equal schemas print byte-identical text.
nlohmann::ordered_json to_json(const Schema& schema);

// The JSON text, indented by two, with a final newline. Bytes of the DTD's
// source that are not UTF-8 (in comments, say) print as U+FFFD.
std::string to_json_text(const Schema& schema);

}  // namespace metatf::ir
