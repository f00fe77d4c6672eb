// The state block that opens a version-3 segment: what a reader needs to
// begin at the segment without the segments before it, as a video codec's
// keyframe does. docs/trace-format.md (section 1, "State blocks") gives the
// bytes; the writer makes the block and the reader applies it, here.
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "metatf/core/bytes.hpp"
#include "metatf/core/descriptor.hpp"
#include "metatf/encoding/field_state.hpp"
#include "metatf/encoding/predefined.hpp"

namespace metatf::rt {

// One entry of a block, in the block's order.
struct StateEntry {
    enum class Kind : std::uint8_t { field = 'F', cursor = 'C' };
    Kind kind = Kind::field;
    std::uint8_t section = 0;  // field: the record's section (0 for a global record); cursor: the value section
    MetadataParts change;      // field: a metadata change, its values as stored
    std::uint64_t cursor = 0;  // cursor: the section offset of the section's next element
    std::uint64_t offset = 0;  // of the entry, in the block
};

// A value section's read cursor, where it is not 0.
using SectionCursor = std::pair<std::uint8_t, std::uint64_t>;

// The block for the encodings `states` (per slot of `dtd`, as a writer keeps
// them) and the value sections' cursors: for each field whose encoding is
// not the DTD's, the metadata changes that bring the initial encoding to it.
// Throws TraceError (usage) for a block larger than readers take.
std::vector<std::byte> encode_state(const DtdDesc& dtd, const std::vector<std::vector<FieldState>>& states,
                                    const std::vector<SectionCursor>& cursors, ByteOrder order);

// Hands each entry of a block to `apply` as it is read (so that a block
// costs no memory beyond its bytes); throws TraceError (bad_section) at
// `file_offset` plus the offset of bytes that are no entry.
void decode_state(std::span<const std::byte> block, unsigned tag_width, ByteOrder order, std::uint64_t file_offset,
                  std::uint64_t record, const std::function<void(const StateEntry&)>& apply);

}  // namespace metatf::rt
