// Records as lists of values, decoded and encoded by walking a record's
// layout at run time: what a DTD-driven tool uses where generated code is not.
#pragma once

#include <span>
#include <vector>

#include "predefined.hpp"
#include "reader.hpp"
#include "writer.hpp"

namespace metatf::rt {

struct GenericValue {
    std::uint32_t field = 0;  // the field's index in its record
    std::uint64_t integer = 0;               // unsigned and signed fields (two's complement)
    double real = 0;                         // float fields
    std::span<const std::byte> bytes;        // bytes fields; a view into the reader's buffer
};

// A record's values in layout order, repeated groups expanded.
struct GenericRecord {
    std::uint32_t slot = 0;
    std::vector<GenericValue> values;
};

// Decodes the record the reader has just begun (after begin_record()), the
// predefined ones included (as decode_predefined() lists them, predefined.hpp).
// Ends the record.
void decode_generic(TraceReader& reader, GenericRecord& out);

// Encodes a record of a user-defined type from its values in layout order,
// or a comment record (as decode_predefined() gives it; returns 0).
// Unless the writer is strict (WriterOptions::strict), a field whose
// encoding cannot hold its values first gets the metadata that lets it:
// no value is refused or truncated. Returns the record's offset within its section.
std::uint64_t encode_generic(TraceWriter& writer, const GenericRecord& record);

}  // namespace metatf::rt
