// The encoding state of one field of one record type, and the metadata
// changes of it. Readers and writers share this, so both sides agree.
#pragma once

#include <optional>
#include <string>

#include "descriptor.hpp"
#include "predefined.hpp"

namespace metatf::rt {

struct FieldState : Encoding {
    const FieldDesc* desc = nullptr;
    std::uint64_t previous = 0;  // delta and stride: the field's last value

    static FieldState initial(const FieldDesc& d);
};

// Applies a metadata change to `s`, or says why it is illegal. `a` and `b`
// are the metadata record's values; `dtd` says which sections exist.
// Follows the paper's rules: an interpretation that stores nothing sets the
// width to 0, one that stores bytes brings back the last non-zero width, and
// delta and stride restart from their initial value.
std::optional<std::string> apply_metadata(FieldState& s, MetaOp op, std::uint64_t a, std::uint64_t b,
                                          const DtdDesc& dtd);

}  // namespace metatf::rt
