#include "metatf/generic.hpp"

#include <algorithm>

namespace metatf::rt {

namespace {

struct Decoder {
    TraceReader& reader;
    const RecordDesc& record;
    FieldState* states;
    std::vector<GenericValue>& out;
    std::vector<std::uint64_t> last;  // the latest value of each field, for counts and lengths

    void run(std::uint32_t from, std::uint32_t to) {
        for (std::uint32_t i = from; i < to; ++i) {
            const LayoutStep& step = record.layout[i];
            if (step.op == LayoutStep::field) {
                field(step.index);
                continue;
            }
            const std::uint32_t end = layout_end(record, i);
            const std::uint64_t n = reader.check_count(last[step.index], states[step.index]);
            for (std::uint64_t k = 0; k < n; ++k) run(i + 1, end);
            i = end;
        }
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
        out.push_back(v);
    }
};

std::span<const std::byte> bytes_of(std::string_view s) { return as_bytes(s); }

// What one field of a record needs: its values checked against the encoding it will have.
struct Fit {
    bool to_none = false;    // leave `default` or `stride`
    unsigned width = 0;      // the widest value seen, in bytes
    std::uint64_t previous = 0;
    bool seen = false;
};

unsigned bytes_for(std::uint64_t raw, bool is_signed) {
    for (unsigned w : {1u, 2u, 4u}) {
        if (is_signed ? fits_signed(raw, w) : fits_unsigned(raw, w)) return w;
    }
    return 8;
}

// The raw value field `s` stores for `value` once its interpretation stores bytes.
unsigned width_needed(const FieldState& s, Interp kind, std::uint64_t value, std::uint64_t previous) {
    switch (kind) {
        case Interp::base_offset: return bytes_for(value - s.value, true);
        case Interp::delta: return bytes_for(value - previous, true);
        case Interp::section_offset: return bytes_for(value, false);
        default: return bytes_for(value, s.desc->type == Type::signed_int);
    }
}

}  // namespace

void fit_encodings(TraceWriter& writer, const GenericRecord& record) {
    FieldState* states = writer.states(record.slot);
    std::vector<Fit> fits(writer.dtd().records[record.slot].field_count);
    for (const GenericValue& v : record.values) {
        const FieldState& s = states[v.field];
        if (s.desc->type != Type::unsigned_int && s.desc->type != Type::signed_int) continue;
        if (s.kind == Interp::section_stride) continue;
        Fit& f = fits[v.field];
        if (!f.seen) f.previous = s.previous;
        f.seen = true;
        if (s.kind == Interp::default_value && v.integer != s.value) f.to_none = true;
        if (s.kind == Interp::stride && v.integer != f.previous + static_cast<std::uint64_t>(s.stride)) f.to_none = true;
        const Interp kind = s.kind == Interp::default_value || s.kind == Interp::stride ? Interp::none : s.kind;
        f.width = std::max(f.width, width_needed(s, kind, v.integer, f.previous));
        f.previous = v.integer;
    }
    for (std::uint32_t i = 0; i < fits.size(); ++i) {
        const Fit& f = fits[i];
        if (f.to_none) writer.metadata(record.slot, i, MetaOp::none);
        if (f.seen && stores_bytes(states[i].kind) && f.width > states[i].width) {
            writer.metadata(record.slot, i, MetaOp::width, f.width);
        }
    }
}

void decode_generic(TraceReader& reader, GenericRecord& out) {
    out.slot = reader.slot();
    out.values.clear();
    const RecordDesc& r = reader.dtd().records[out.slot];
    auto push = [&](std::uint32_t field, std::uint64_t integer, std::span<const std::byte> bytes = {}) {
        out.values.push_back(GenericValue{field, integer, 0, bytes});
    };
    switch (r.predefined) {
        case Predefined::comment: {
            const std::string_view text = reader.read_comment();
            push(1, text.size());
            push(2, 0, bytes_of(text));
            break;
        }
        case Predefined::section: push(1, reader.read_section()); break;
        case Predefined::metadata: {
            const MetadataChange m = reader.read_metadata();
            push(1, reader.dtd().records[m.slot].tag);
            push(2, m.field);
            push(3, static_cast<std::uint64_t>(m.op));
            if (metadata_value_count(m.op) > 0) push(4, m.a);
            if (metadata_value_count(m.op) > 1) push(4, m.b);
            break;
        }
        case Predefined::none: {
            Decoder d{reader, r, reader.states(out.slot), out.values, std::vector<std::uint64_t>(r.field_count)};
            d.run(0, r.layout_count);
            break;
        }
    }
    reader.end_record();
}

std::uint64_t encode_generic(TraceWriter& writer, const GenericRecord& record) {
    FieldState* states = writer.states(record.slot);
    const std::uint64_t offset = writer.begin_record(record.slot);
    std::vector<std::uint64_t> last;
    for (const GenericValue& v : record.values) {
        FieldState& s = states[v.field];
        if (last.size() <= v.field) last.resize(v.field + 1);
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
