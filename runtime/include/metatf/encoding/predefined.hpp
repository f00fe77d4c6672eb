// The bytes of the predefined records after their tag (docs/trace-format.md,
// section 6), described once: the writer writes them and the reader reads
// them through the functions here, and the generic decoder and mtf list and
// measure them by it.
//
// The prelude declares what a DTD can say of them (docs/dtd-language.md,
// "Predefined records"): all of `comment` and `section`, and the parts of
// `metadata` before its values. Those values are the runtime's alone: their
// number depends on the record's property and their width on the trace's class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "metatf/core/bytes.hpp"
#include "metatf/core/descriptor.hpp"

namespace metatf::rt {

// The slot of `dtd`'s predefined record of kind `kind` (every DTD has the prelude's).
inline std::uint32_t predefined_slot(const DtdDesc& dtd, Predefined kind) {
    std::uint32_t slot = 0;
    while (slot + 1 < dtd.record_count && dtd.records[slot].predefined != kind) ++slot;
    return slot;
}

// A comment's length takes 1 byte, or 2 where the DTD says
// 'comment.length.width = 2;' (HATF 1.0's comments): the width of field 1
// (the prelude's vfield.length) of the DTD's comment record.
inline unsigned comment_length_width(const RecordDesc& comment) { return comment.fields[1].initial.width; }
constexpr std::size_t max_comment_bytes(unsigned length_width) {
    return length_width >= sizeof(std::size_t) ? SIZE_MAX : (std::size_t(1) << (8 * length_width)) - 1;
}
static_assert(max_comment_bytes(1) == 255 && max_comment_bytes(2) == 65535 && max_comment_bytes(8) == SIZE_MAX);

// The number of values a metadata record carries for `op`.
constexpr unsigned metadata_value_count(MetaOp op) {
    return op == MetaOp::none || op == MetaOp::intern ? 0 : (op == MetaOp::stride || op == MetaOp::section_stride || op == MetaOp::split || op == MetaOp::predict) ? 2 : 1;
}

// Whether value `i` (0 or 1) of a metadata record that changes `field` is
// signed: a stride is (and a predictor set, which is never negative); the first value is when the field is signed, unless it
// is a width, a section number, a pool number or a unit.
constexpr bool metadata_value_signed(const FieldDesc& field, MetaOp op, unsigned i) {
    return i == 1 || (field.type == Type::signed_int && op != MetaOp::width && op != MetaOp::section_offset &&
                      op != MetaOp::section_stride && op != MetaOp::split && op != MetaOp::live && op != MetaOp::feed && op != MetaOp::predict &&
                      op != MetaOp::unit);
}

// A metadata record after its tag.
struct MetadataParts {
    std::uint64_t tag = 0;       // the tag of the record type it changes
    std::uint64_t field = 0;     // that record's field index
    std::uint64_t property = 0;  // a MetaOp code
    std::uint64_t a = 0, b = 0;  // its values, one class word each, as stored
};

// The parts checked one by one while a metadata record is read.
enum class MetadataPart { tag, field, property };

// Writes a predefined record after its tag through put(value, width), which
// writes an unsigned number of `width` bytes, and put_bytes(span).
template <typename Put, typename PutBytes>
void put_comment(Put&& put, PutBytes&& put_bytes, std::string_view text, unsigned length_width) {
    put(text.size(), length_width);
    put_bytes(std::as_bytes(std::span(text.data(), text.size())));
}

template <typename Put>
void put_section(Put&& put, std::uint8_t number) {
    put(number, 1);
}

// `word`: the trace's class word, 4 or 8 bytes.
template <typename Put>
void put_metadata(Put&& put, const MetadataParts& m, unsigned tag_width, unsigned word) {
    put(m.tag, tag_width);
    put(m.field, 1);
    put(m.property, 1);
    const unsigned values = metadata_value_count(static_cast<MetaOp>(m.property));
    if (values > 0) put(m.a, word);
    if (values > 1) put(m.b, word);
}

// Reads a predefined record after its tag through take(width), which reads an
// unsigned number of `width` bytes, and take_bytes(n), which reads n bytes.
template <typename Take, typename TakeBytes>
std::string_view take_comment(Take&& take, TakeBytes&& take_bytes, unsigned length_width) {
    const std::span<const std::byte> text = take_bytes(take(length_width));
    return {reinterpret_cast<const char*>(text.data()), text.size()};
}

template <typename Take>
std::uint8_t take_section(Take&& take) {
    return static_cast<std::uint8_t>(take(1));
}

// After the tag, the field and the property, check(part, parts) may refuse
// what it has read so far, so that a problem is reported at its own byte
// before the bytes after it are read. It must refuse a property that is no
// MetaOp: the values' count depends on it.
template <typename Take, typename Check>
MetadataParts take_metadata(Take&& take, Check&& check, unsigned tag_width, unsigned word) {
    MetadataParts m;
    m.tag = take(tag_width);
    check(MetadataPart::tag, m);
    m.field = take(1);
    check(MetadataPart::field, m);
    m.property = take(1);
    check(MetadataPart::property, m);
    const unsigned values = metadata_value_count(static_cast<MetaOp>(m.property));
    if (values > 0) m.a = take(word);
    if (values > 1) m.b = take(word);
    return m;
}

// Value `i` of a metadata record that changes `field`, sign-extended from
// its `word` bytes where metadata_value_signed() says.
inline std::uint64_t metadata_value(const MetadataParts& m, const FieldDesc& field, unsigned i, unsigned word) {
    const std::uint64_t raw = i == 0 ? m.a : m.b;
    return metadata_value_signed(field, static_cast<MetaOp>(m.property), i) ? sign_extend(raw, word) : raw;
}

// The field index a metadata record's values have in a GenericRecord: one past
// the fields the prelude declares, since a DTD cannot declare them.
inline constexpr std::uint32_t metadata_values_field = 4;

}  // namespace metatf::rt
