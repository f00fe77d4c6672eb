// The AutoEncoder's choice of `live` references (docs/compactness.md): which
// fields of a window refer to values other fields took before (a free's
// address is an allocation's; an allocation's, often, a free's), so that they
// store a count back into a pool, and which fields feed each pool.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "metatf/io/generic.hpp"
#include "metatf/io/writer.hpp"

namespace metatf::rt::detail {

// A field of a record type: slot << 32 | field index.
using FieldKey = std::uint64_t;
constexpr FieldKey field_key(std::uint32_t slot, std::uint32_t field) { return std::uint64_t(slot) << 32 | field; }

// One record of the window: its type and its values in layout order.
struct WindowRecord {
    std::uint32_t slot;
    const GenericValue* values;
    std::size_t count;
};

struct Reference {
    std::uint8_t pool;
    std::uint32_t width;
    bool predict = false;  // `predict pool set` rather than `live pool`
    std::uint64_t set = 0;
};

// A value a field takes in the window, and how far back it is in the
// field's pool if it is there.
struct Count {
    std::optional<std::uint64_t> back;
    std::uint64_t value;
};

// What a `live` field (predict false) or a `predict` field using the
// predictors `set`, of `width` bytes, from `history`, stores for `values`
// (docs/trace-format.md, 5.1 and 5.3), into `column`.
void code_column(const std::vector<Count>& values, std::uint32_t width, bool predict, std::uint64_t set, PredictHistory history,
                 std::vector<std::byte>& column);
// The bytes `column` takes, compressed with `cctx` when it is not null.
double column_cost(const std::vector<std::byte>& column, ZSTD_CCtx* cctx);

struct PoolChoice {
    std::map<FieldKey, Reference> live;          // fields that refer to a pool, and their widths
    std::map<FieldKey, std::uint8_t> feeders;    // fields that feed a pool, and which
};

// `eligible(key)`: whether the encoder may change the field (an integer
// field of a record type outside tables); `other_cost(key)`: what the best
// encoding that is not a reference costs for its values in the window, in
// the units of `cctx` (compressed bytes when not null, else stored bytes).
// `predict`: references are `predict P S` fields (else `live P`).
PoolChoice plan_pools(TraceWriter& writer, const std::vector<WindowRecord>& records, ZSTD_CCtx* cctx, bool predict,
                      const std::function<bool(FieldKey)>& eligible, const std::function<double(FieldKey)>& other_cost);

}  // namespace metatf::rt::detail
