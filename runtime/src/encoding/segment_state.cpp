#include "metatf/encoding/segment_state.hpp"

#include <stdexcept>
#include <string>

#include "metatf/container/container.hpp"
#include "metatf/core/error.hpp"

namespace metatf::rt {

namespace {

constexpr unsigned value_bytes = 8;  // a block's values, whatever the trace's class
constexpr unsigned field_bytes = 4;  // a field index

// Whether `got` has the interpretation of `want`, with the arguments that
// matter to it. (A delta's or a stride's initial value only matters when it
// is set, and a block sets it to the previous value.)
bool same_interpretation(const FieldState& got, const FieldState& want) {
    const Interp k = want.kind, e = stored_as(want);
    const bool valued = k == Interp::default_value || e == Interp::base_offset || k == Interp::predict;
    const bool accumulates = e == Interp::delta || k == Interp::stride;
    const bool strided = k == Interp::stride || k == Interp::section_stride;
    const bool sectioned = k == Interp::section_offset || k == Interp::section_stride;
    return got.kind == k && stored_as(got) == e && (!valued || got.value == want.value) && (!accumulates || got.previous == want.previous) &&
           (!strided || got.stride == want.stride) && (!sectioned || got.section == want.section) &&
           (!codes(k) || got.pool == want.pool);
}

// Whether a reader that applied a block holds `got` where the writer holds `want`.
bool same_state(const FieldState& got, const FieldState& want) {
    return same_interpretation(got, want) && got.width == want.width && got.restore == want.restore && got.feed == want.feed &&
           got.unit == want.unit;
}

// The metadata changes, in order, that bring field `now` from the DTD's
// initial encoding to its own; each is checked by applying it as a reader will.
std::vector<MetadataParts> changes_to(const FieldState& now, std::uint64_t tag, std::uint32_t field, const DtdDesc& dtd) {
    FieldState x = FieldState::initial(*now.desc);
    std::vector<MetadataParts> out;
    auto change = [&](MetaOp op, std::uint64_t a = 0, std::uint64_t b = 0) {
        if (apply_metadata(x, op, a, b, dtd)) throw std::logic_error("a state block change the reader would refuse");
        out.push_back(MetadataParts{tag, field, static_cast<std::uint64_t>(op), a, b});
    };
    if (same_state(x, now)) return out;
    // The restore width first: the interpretations that store bytes take it, and live and sectionStride need it.
    if (now.restore != x.restore) change(MetaOp::width, now.restore);
    if (!same_interpretation(x, now)) {
        const Interp e = stored_as(now);
        const std::uint64_t start = e == Interp::delta || now.kind == Interp::stride ? now.previous : now.value;
        // A split stream that keeps an interpretation: that interpretation, then the split.
        if (now.kind == Interp::section_stride && e != Interp::section_stride) {
            change(op_of(e), start);
            change(MetaOp::split, now.section, static_cast<std::uint64_t>(now.stride));
        } else {
            switch (now.kind) {
                case Interp::none: change(MetaOp::none); break;
                case Interp::section_offset: change(MetaOp::section_offset, now.section); break;
                case Interp::section_stride: change(MetaOp::section_stride, now.section, static_cast<std::uint64_t>(now.stride)); break;
                case Interp::live: change(MetaOp::live, now.pool); break;
                case Interp::predict: change(MetaOp::predict, now.pool, now.value); break;
                case Interp::intern: change(MetaOp::intern); break;
                case Interp::stride: change(MetaOp::stride, start, static_cast<std::uint64_t>(now.stride)); break;
                default: change(op_of(now.kind), start); break;
            }
        }
    }
    if (x.width != now.width) change(MetaOp::width, now.width);  // 0: a storing field set to store nothing
    if (x.feed != now.feed) change(MetaOp::feed, now.feed);
    if (x.unit != now.unit) change(MetaOp::unit, now.unit);
    if (!same_state(x, now)) throw std::logic_error("a state block that does not restore a field's encoding");
    return out;
}

}  // namespace

std::vector<std::byte> encode_state(const DtdDesc& dtd, const std::vector<std::vector<FieldState>>& states,
                                    const std::vector<SectionCursor>& cursors, ByteOrder order) {
    std::vector<std::byte> out;
    auto put_value = [&](std::uint64_t v, unsigned width) { append_uint(out, v, width, order); };
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const RecordDesc& r = dtd.records[slot];
        if (r.predefined != Predefined::none) continue;
        for (std::uint32_t f = 1; f < r.field_count; ++f) {
            for (const MetadataParts& m : changes_to(states[slot][f], r.tag, f, dtd)) {
                put_value(static_cast<std::uint8_t>(StateEntry::Kind::field), 1);
                put_value(r.section, 1);
                put_value(m.tag, dtd.tag_width);
                put_value(m.field, field_bytes);  // a DTD's delta field may be past the 255 metadata can name
                put_value(m.property, 1);
                const unsigned values = metadata_value_count(static_cast<MetaOp>(m.property));
                if (values > 0) put_value(m.a, value_bytes);
                if (values > 1) put_value(m.b, value_bytes);
            }
        }
    }
    for (const auto& [section, cursor] : cursors) {
        put_value(static_cast<std::uint8_t>(StateEntry::Kind::cursor), 1);
        put_value(section, 1);
        put_value(cursor, value_bytes);
    }
    if (out.size() > max_state_bytes) {
        throw TraceError(ErrorKind::usage, "the encodings in force need a state block of " + std::to_string(out.size()) +
                                               " bytes, more than readers take; write container version 2");
    }
    return out;
}

void decode_state(std::span<const std::byte> block, unsigned tag_width, ByteOrder order, std::uint64_t file_offset,
                  std::uint64_t record, const std::function<void(const StateEntry&)>& apply) {
    std::size_t at = 0;
    auto fail = [&](std::size_t where, const std::string& message) {
        throw TraceError(ErrorKind::bad_section, message, file_offset + where, -1, record);
    };
    auto take = [&](unsigned width) {
        if (block.size() - at < width) fail(at, "an entry runs past the end of its state block");
        const std::uint64_t v = load_uint(block.data() + at, width, order);
        at += width;
        return v;
    };
    while (at < block.size()) {
        StateEntry e;
        e.offset = at;
        const auto kind = static_cast<StateEntry::Kind>(take(1));
        if (kind != StateEntry::Kind::field && kind != StateEntry::Kind::cursor) {
            fail(e.offset, "a state block entry of kind " + std::to_string(static_cast<unsigned>(kind)) + ", which this reader does not know");
        }
        e.kind = kind;
        e.section = static_cast<std::uint8_t>(take(1));
        if (kind == StateEntry::Kind::cursor) {
            e.cursor = take(value_bytes);
        } else {
            e.change.tag = take(tag_width);
            e.change.field = take(field_bytes);
            e.change.property = take(1);
            if (e.change.property > static_cast<std::uint64_t>(last_meta_op)) {
                fail(at - 1, "a state block entry with metadata property " + std::to_string(e.change.property) + ", which is unknown");
            }
            const unsigned values = metadata_value_count(static_cast<MetaOp>(e.change.property));
            if (values > 0) e.change.a = take(value_bytes);
            if (values > 1) e.change.b = take(value_bytes);
        }
        apply(e);
    }
}

}  // namespace metatf::rt
