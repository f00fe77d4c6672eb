// Records as lists of values, decoded and encoded by walking a record's
// layout at run time: what a DTD-driven tool uses where generated code is not.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "metatf/core/layout.hpp"
#include "metatf/encoding/predefined.hpp"
#include "metatf/io/reader.hpp"
#include "metatf/io/writer.hpp"

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
    std::vector<std::uint64_t> last = {};  // decode_generic's scratch, kept from record to record
};

// Decodes the record the reader has just begun (after begin_record()), the
// predefined ones included (as decode_predefined() lists them, predefined.hpp).
// Ends the record.
void decode_generic(TraceReader& reader, GenericRecord& out);
// The same reading, with every check decode_generic() makes, for its effects
// alone (metadata, pools, predictions): a record's values are not kept
// (`scratch` holds its predefined records' values and the lengths). Faster,
// for readers that only check.
void skip_generic(TraceReader& reader, GenericRecord& scratch);

// Reads the values of the user-defined record the reader has just begun, in
// layout order, repeated groups expanded, handing each to `sink(value)`
// (a GenericValue whose bytes view the reader's buffer). Does not end the
// record. `last` is scratch, kept by the caller to save an allocation per
// record: the latest value of each field, for counts and lengths.
namespace detail {

template <typename Sink>
struct ValueWalk {
    TraceReader& reader;
    const RecordDesc& record;
    FieldState* states;
    Sink& sink;
    std::vector<std::uint64_t>& last;

    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint32_t count = record.layout[step].index;
        const std::uint64_t n = reader.check_count(last[count], states[count]);
        for (std::uint64_t k = 0; k < n; ++k) element();
    }

    void field(std::uint32_t index) {
        FieldState& s = states[index];
        GenericValue v;
        v.field = index;
        switch (s.desc->type) {
            case Type::unsigned_int:
            case Type::signed_int: v.integer = reader.read_int(s); break;
            case Type::floating: v.real = reader.read_float(s); break;
            case Type::bytes:
                v.bytes = reader.read_bytes(s, s.desc->width_from == no_field ? 0 : last[static_cast<std::uint32_t>(s.desc->width_from)]);
                break;
        }
        last[index] = v.integer;
        sink(v);
    }
};

// Whether every group of a planned record at `p` whose count is stored
// repeats no time there (RecordPlan::counted).
inline bool groups_empty(const RecordDesc& r, const FieldState* states, const std::byte* p) {
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        if (r.layout[i].op != LayoutStep::repeat) continue;
        if (plan_peek(states[r.layout[i].index], p) != 0) return false;
        i = group_end(r, i);
    }
    return true;
}

// Whether every live or predict field of a planned record at `p` stores a
// code that names a value (TraceReader::answerable), as each sees its pool
// before the record. (Such fields are all below 64 and outside groups:
// make_plan() plans no other.)
inline bool counts_answerable(const TraceReader& reader, const RecordPlan& plan, const FieldState* states, const std::byte* p) {
    for (std::uint64_t bits = plan.live | plan.predicts; bits != 0; bits &= bits - 1) {
        if (!reader.answerable(states[std::countr_zero(bits)], p)) return false;
    }
    return true;
}

// The value of integer field `s` of a planned record at `p`, taken as the
// field-by-field path takes it: a live count looked up, the unit applied,
// the value fed to its pool. A value the DTD fixes otherwise goes to
// `refuse(s, value, at)`, which throws, at the place the field-by-field path
// reports it: a live count's end, else the field. `immediate`: the record's
// pool changes are made as its fields are read (RecordPlan::immediate).
template <typename Refuse>
METATF_INLINE std::uint64_t planned_integer(TraceReader& reader, FieldState& s, const std::byte* p, bool immediate, Refuse&& refuse) {
    ReadPools& pools = reader.pools();
    std::uint64_t v;
    if (s.kind == Interp::live) {
        const std::uint64_t back = load_native<8>(p + s.offset) & s.mask;
        v = immediate ? pools.now(s.pool).take(back) : pools.refer_back_live(s.pool, back);
    } else if (s.kind == Interp::predict) {
        v = immediate ? reader.planned_prediction<true>(s, p) : reader.planned_prediction<false>(s, p);
    } else if (s.unit != 1) {
        v = s.previous = plan_peek(s, p);
    } else {
        v = plan_read(s, p);
    }
    if (s.feed != 0) immediate ? pools.now(s.feed).add(v) : pools.feed(s.feed, v);
    if (s.desc->breaks_fixed(v)) [[unlikely]] refuse(s, v, p + s.offset + (codes(s.kind) ? s.width : 0));
    return v;
}
METATF_INLINE double planned_float(const FieldState& s, const std::byte* p) {
    return float_from_bits(load_native<8>(p + s.offset) & s.mask, s.width);
}

// A record whose layout is fixed now (RecordPlan::fixed), read at known
// offsets, one wide load and the plan's arithmetic a field (times the unit
// where there is one), live counts looked up and fed values queued as the
// field-by-field path does, when the chunk has the 8 bytes of slack the
// loads need; false, having read nothing, when it must be read field by
// field (a live field's escape, whose value follows, among them).
//
// Without a sink (std::nullptr_t), only the fields with effects are read
// when the plan allows (RecordPlan::effects): the others change nothing.
template <typename Sink>
bool read_planned(TraceReader& reader, const RecordDesc& r, Sink& sink) {
    const RecordPlan& plan = reader.plan(reader.slot());
    if (!plan.fixed) return false;
    const TraceReader::Run run = reader.run();
    if (static_cast<std::size_t>(run.end - run.pos) < std::size_t(plan.size) + 8) return false;
    FieldState* states = reader.states(reader.slot());
    if (plan.counted && !groups_empty(r, states, run.pos)) return false;
    if (plan.pools && !counts_answerable(reader, plan, states, run.pos)) return false;
    const std::byte* p = reader.fixed(plan.size);
    const auto refuse = [&](const FieldState& s, std::uint64_t value, const std::byte* at) { reader.refuse_fixed(s, value, at); };
    if constexpr (std::is_same_v<Sink, std::nullptr_t>) {
        if (plan.skippable) {
            for (std::uint64_t bits = plan.effects; bits != 0; bits &= bits - 1) {
                planned_integer(reader, states[std::countr_zero(bits)], p, plan.immediate, refuse);
            }
            return true;
        }
    }
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        if (r.layout[i].op == LayoutStep::repeat) {
            i = group_end(r, i);  // repeated no time (RecordPlan::fixed)
            continue;
        }
        FieldState& s = states[r.layout[i].index];
        GenericValue v;
        v.field = r.layout[i].index;
        switch (s.desc->type) {
            case Type::unsigned_int:
            case Type::signed_int: v.integer = planned_integer(reader, s, p, plan.immediate, refuse); break;
            case Type::floating: v.real = planned_float(s, p); break;
            case Type::bytes: v.bytes = {p + s.offset, planned_bytes(s, states)}; break;
        }
        if constexpr (!std::is_same_v<Sink, std::nullptr_t>) sink(v);
    }
    return true;
}

}  // namespace detail

template <typename Sink>
void decode_values(TraceReader& reader, Sink&& sink, std::vector<std::uint64_t>& last) {
    const RecordDesc& r = reader.dtd().records[reader.slot()];
    if (detail::read_planned(reader, r, sink)) return;
    last.resize(std::max<std::size_t>(last.size(), r.field_count));
    detail::ValueWalk<std::remove_reference_t<Sink>> walk{reader, r, reader.states(reader.slot()), sink, last};
    walk_layout(r, walk);
}

// Encodes a record of a user-defined type from its values in layout order,
// or a comment record (as decode_predefined() gives it; returns 0).
// Unless the writer is strict (WriterOptions::strict), a field whose
// encoding cannot hold its values first gets the metadata that lets it:
// no value is refused or truncated. Returns the record's offset within its section.
std::uint64_t encode_generic(TraceWriter& writer, const GenericRecord& record);

// ---- predefined records as values (io/predefined_values.cpp)

// decode_generic() of a predefined record, which the reader has begun:
// comment gives [length, data], section [number], metadata [record tag,
// field, property, values...], each value under metadata_values_field.
void decode_predefined(TraceReader& reader, GenericRecord& out);

// The text of a comment record as decode_predefined() gives it ([length, data]).
std::string_view comment_text(const GenericRecord& comment);

// The bytes a predefined record that decode_predefined() gave takes in a
// trace of `dtd` and class word `word`, its tag included.
std::uint64_t predefined_size(const DtdDesc& dtd, unsigned word, const GenericRecord& record);

}  // namespace metatf::rt
