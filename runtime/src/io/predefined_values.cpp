#include "metatf/io/generic.hpp"

#include "metatf/encoding/predefined.hpp"

namespace metatf::rt {

namespace {

// The prelude's field indices (compiler/front/prelude.cpp).
constexpr std::uint32_t comment_length = 1, comment_data = 2;
constexpr std::uint32_t section_number = 1;
constexpr std::uint32_t metadata_record = 1, metadata_field = 2, metadata_property = 3;

}  // namespace

void decode_predefined(TraceReader& reader, GenericRecord& out) {
    auto push = [&](std::uint32_t field, std::uint64_t integer, std::span<const std::byte> bytes = {}) {
        out.values.push_back(GenericValue{field, integer, 0, bytes});
    };
    switch (reader.dtd().records[out.slot].predefined) {
        case Predefined::comment: {
            const std::string_view text = reader.read_comment();
            push(comment_length, text.size());
            push(comment_data, 0, as_bytes(text));
            break;
        }
        case Predefined::section: push(section_number, reader.read_section()); break;
        case Predefined::metadata: {
            const MetadataChange m = reader.read_metadata();
            push(metadata_record, reader.dtd().records[m.slot].tag);
            push(metadata_field, m.field);
            push(metadata_property, static_cast<std::uint64_t>(m.op));
            if (metadata_value_count(m.op) > 0) push(metadata_values_field, m.a);
            if (metadata_value_count(m.op) > 1) push(metadata_values_field, m.b);
            break;
        }
        case Predefined::none: break;
    }
}

std::string_view comment_text(const GenericRecord& comment) {
    const std::span<const std::byte> text = comment.values.at(1).bytes;
    return {reinterpret_cast<const char*>(text.data()), text.size()};
}

std::uint64_t predefined_size(const DtdDesc& dtd, unsigned word, const GenericRecord& record) {
    // Written again, only counted.
    std::uint64_t size = dtd.tag_width;
    auto count = [&](std::uint64_t, unsigned width) { size += width; };
    auto count_bytes = [&](std::span<const std::byte> bytes) { size += bytes.size(); };
    switch (dtd.records[record.slot].predefined) {
        case Predefined::comment: {
            put_comment(count, count_bytes, comment_text(record), comment_length_width(dtd.records[record.slot]));
            break;
        }
        case Predefined::section: put_section(count, 0); break;
        case Predefined::metadata: {
            MetadataParts m;
            m.property = record.values[2].integer;
            put_metadata(count, m, dtd.tag_width, word);
            break;
        }
        case Predefined::none: break;
    }
    return size;
}

}  // namespace metatf::rt
