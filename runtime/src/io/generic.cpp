#include "metatf/io/generic.hpp"

#include <algorithm>
#include <optional>

#include "metatf/core/layout.hpp"

namespace metatf::rt {

namespace {

// Checks, before anything is written, that a record's values follow its
// layout, each group repeated as often as its count's value says: a list that
// does not would otherwise leave half a record in the trace.
struct LayoutCheck {
    const RecordDesc& record;
    const std::vector<GenericValue>& values;
    std::vector<std::uint64_t> last;  // per field: its value (counts, and the lengths of bytes fields)
    std::size_t next = 0;

    [[noreturn]] static void refuse() { throw TraceError(ErrorKind::usage, "a record's values do not follow its layout"); }

    void field(std::uint32_t index) {
        if (next == values.size() || values[next].field != index) refuse();
        last[index] = values[next++].integer;
    }

    // An element holds a value unless its body is only groups of no elements:
    // a count past the values left is refused, not looped through.
    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint64_t n = last[record.layout[step].index];
        if (n > values.size() - next) refuse();
        for (std::uint64_t k = 0; k < n; ++k) element();
    }
};

// For each field whose current encoding cannot hold its values in `record`,
// writes the metadata that fixes it (WriterOptions::strict, fit_value()).
// A bytes field of fixed width takes the length of its values, when they
// have one length (a repeated group's can differ; the write refuses those);
// a 4-byte float field becomes 8 bytes wide for a value a float cannot hold.
// `last`: the values by field, as LayoutCheck leaves them (a history's key is one).
void fit_encodings(TraceWriter& writer, const GenericRecord& record, const std::vector<std::uint64_t>& last) {
    FieldState* states = writer.states(record.slot);
    const std::uint32_t count = writer.dtd().records[record.slot].field_count;
    std::vector<FieldNeeds> needs(count);
    std::vector<std::optional<std::size_t>> widths(count);
    for (const GenericValue& v : record.values) {
        const FieldState& s = states[v.field];
        if (s.desc->history != no_field) {  // a shared history: the previous value is its table's
            needs[v.field].previous = writer.histories().previous(s.desc->history, Histories::key_in(*s.desc, last.data()));
            needs[v.field].seen = true;
        }
        if (s.desc->type != Type::bytes) needs[v.field].add(s, v.integer);
        if (s.desc->type == Type::floating && s.width == 4 && static_cast<double>(static_cast<float>(v.real)) != v.real &&
            v.real == v.real) {
            widths[v.field] = 8;
        }
        if (s.desc->type == Type::bytes && s.desc->width_from == no_field && !widths[v.field]) widths[v.field] = v.bytes.size();
    }
    for (std::uint32_t i = 0; i < count; ++i) {
        const FieldFit need = needs[i].fit;
        if (need.to_none) writer.metadata(record.slot, i, MetaOp::none);
        if (need.to_unit_one) writer.metadata(record.slot, i, MetaOp::unit, 1);
        if (need.sized && states[i].sized_by_width() && need.width > states[i].stored_width()) {
            writer.metadata(record.slot, i, MetaOp::width, need.width);
        }
        if (widths[i] && *widths[i] != states[i].width && *widths[i] <= 65535) writer.metadata(record.slot, i, MetaOp::width, *widths[i]);
    }
}

}  // namespace

void decode_generic(TraceReader& reader, GenericRecord& out) {
    out.slot = reader.slot();
    const RecordDesc& r = reader.dtd().records[out.slot];
    if (r.predefined != Predefined::none) {
        out.values.clear();
        decode_predefined(reader, out);
    } else {
        // Values stored in place: a push_back() a value, out of line, cost
        // as much as the decoding (mtf check).
        std::vector<GenericValue>& values = out.values;
        values.resize(std::max<std::size_t>(values.capacity(), 8));
        std::size_t n = 0;
        decode_values(reader, [&](const GenericValue& v) {
            if (n == values.size()) [[unlikely]] values.resize(2 * n);
            values[n++] = v;
        }, out.last);
        values.resize(n);
    }
    reader.end_record();
}

void skip_generic(TraceReader& reader, GenericRecord& scratch) {
    const RecordDesc& r = reader.dtd().records[reader.slot()];
    if (r.predefined != Predefined::none) return decode_generic(reader, scratch);
    std::nullptr_t no_sink = nullptr;
    if (!detail::read_planned(reader, r, no_sink)) decode_values(reader, [](const GenericValue&) {}, scratch.last);
    reader.end_record();
}

std::uint64_t encode_generic(TraceWriter& writer, const GenericRecord& record) {
    const RecordDesc& r = writer.dtd().records[record.slot];
    // A native file's header comes as a comment record: the writer's own comment()
    // checks its length against the DTD's comment record.
    if (r.predefined == Predefined::comment && record.values.size() == 2) {
        writer.comment(comment_text(record));
        return 0;
    }
    LayoutCheck check{r, record.values, std::vector<std::uint64_t>(r.field_count)};
    walk_layout(r, check);
    if (check.next != record.values.size()) check.refuse();
    if (!writer.options().strict) fit_encodings(writer, record, check.last);
    FieldState* states = writer.states(record.slot);
    const std::uint64_t offset = writer.begin_record(record.slot);
    std::vector<std::uint64_t>& last = check.last;  // again, as the values are written
    for (const GenericValue& v : record.values) {
        FieldState& s = states[v.field];
        switch (s.desc->type) {
            case Type::unsigned_int:
            case Type::signed_int: writer.write_int(s, v.integer); break;
            case Type::floating: writer.write_float(s, v.real); break;
            case Type::bytes:
                writer.write_bytes(s, v.bytes, s.desc->width_from == no_field ? 0 : last[static_cast<std::uint32_t>(s.desc->width_from)]);
                break;
        }
        last[v.field] = v.integer;
    }
    writer.end_record();
    return offset;
}

}  // namespace metatf::rt
