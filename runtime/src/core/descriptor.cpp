#include "metatf/core/descriptor.hpp"

#include <algorithm>

#include <cstring>
#include <initializer_list>

#include "metatf/core/format.hpp"

namespace metatf::rt {

namespace {

// FNV-1a, 64 bits: stable across platforms and builds.
struct Hash {
    std::uint64_t h = 0xcbf29ce484222325ull;
    void bytes(const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    }
    void number(std::uint64_t v) {
        for (int i = 0; i < 8; ++i, v >>= 8) {
            const auto b = static_cast<unsigned char>(v & 0xff);
            bytes(&b, 1);
        }
    }
    void text(const char* s) {
        bytes(s, std::strlen(s));
        number(0);
    }
};

void hash_field(Hash& h, const FieldDesc& d) {
    const Encoding& e = d.initial;
    for (std::uint64_t v : {std::uint64_t(d.type), std::uint64_t(d.scale), std::uint64_t(std::int64_t(d.width_from)),
                            std::uint64_t(e.kind), std::uint64_t(e.width), std::uint64_t(e.restore), e.value,
                            std::uint64_t(e.stride), std::uint64_t(e.section)}) {
        h.number(v);
    }
    // Pools came later: hashed only when used, so that earlier fingerprints stay as they were.
    if (e.pool != 0 || e.feed != 0) {
        h.number(e.pool);
        h.number(e.feed);
    }
    // Shared histories too; the table's number stands for the field's path and key, which the DTD's other fields give.
    if (d.history != no_field) {
        h.number(0x4849);  // "HI": apart from the pools' numbers
        h.number(static_cast<std::uint64_t>(d.history));
        h.number(static_cast<std::uint64_t>(std::int64_t(d.history_key)));
    }
}

// The prelude once declared metadata's values as a fifth field, `value`, 4
// bytes wide. It no longer claims that layout, but every trace written before
// hashed it, so the fingerprint still does: as that field, and its layout step.
constexpr FieldDesc former_metadata_value{"value", Type::unsigned_int, 0, no_field, {Interp::none, 4, 4, 0, 0, 0}};

}  // namespace

bool defines_section(const DtdDesc& dtd, std::uint8_t number) {
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) {
        if (dtd.sections[i].number == number) return true;
    }
    return false;
}

std::uint32_t history_count(const DtdDesc& dtd) {
    std::int32_t last = no_field;
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        for (std::uint32_t f = 0; f < dtd.records[i].field_count; ++f) last = std::max(last, dtd.records[i].fields[f].history);
    }
    return static_cast<std::uint32_t>(last + 1);
}

std::uint64_t fingerprint(const DtdDesc& dtd) {
    Hash h;
    h.number(dtd.tag_width);
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) h.number(dtd.sections[i].number);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const RecordDesc& r = dtd.records[i];
        const bool metadata = r.predefined == Predefined::metadata;
        h.text(r.name);
        h.number(r.tag);
        h.number(r.section);
        h.number(static_cast<std::uint64_t>(r.predefined));
        for (std::uint32_t f = 0; f < r.field_count; ++f) hash_field(h, r.fields[f]);
        if (metadata) hash_field(h, former_metadata_value);
        for (std::uint32_t s = 0; s < r.layout_count; ++s) {
            h.number(r.layout[s].op);
            h.number(r.layout[s].index);
        }
        if (metadata) {
            h.number(LayoutStep::field);
            h.number(r.field_count);
        }
    }
    return h.h;
}

bool table_section(const DtdDesc& dtd, int number) {
    for (std::uint32_t r = 0; r < dtd.record_count; ++r) {
        for (std::uint32_t f = 0; f < dtd.records[r].field_count; ++f) {
            const Encoding& e = dtd.records[r].fields[f].initial;
            if (e.kind == Interp::section_offset && (number < 0 || e.section == number)) return true;
        }
    }
    return false;
}

std::string not_fixed_message(const RecordDesc& r, const FieldDesc& f, std::uint64_t value) {
    const bool is_signed = f.type == Type::signed_int;
    std::string out = "field " + quote(f.path) + " of record " + quote(r.name) + " is ";
    append_fixed(out, value, is_signed, f.scale);
    out += "; the DTD fixes it at ";
    append_fixed(out, f.fixed_value, is_signed, f.scale);
    return out;
}

bool declares_intern(const DtdDesc& dtd) {
    for (std::uint32_t r = 0; r < dtd.record_count; ++r) {
        for (std::uint32_t f = 0; f < dtd.records[r].field_count; ++f) {
            if (dtd.records[r].fields[f].initial.kind == Interp::intern) return true;
        }
    }
    return false;
}

const RecordDesc* record_of(const DtdDesc& dtd, const FieldDesc& field) {
    for (std::uint32_t r = 0; r < dtd.record_count; ++r) {
        const RecordDesc& record = dtd.records[r];
        if (&field >= record.fields && &field < record.fields + record.field_count) return &record;
    }
    return nullptr;
}

// The writer stores the code (or the escape, the length and the bytes) where
// the length and then the string would be: the two must be adjacent, and the
// length's value must mean nothing else.
std::optional<std::string> intern_problem(const RecordDesc& r, std::uint32_t f) {
    const FieldDesc& length = r.fields[f];
    if (length.type != Type::unsigned_int) return std::string("it is not an unsigned integer field");
    if (length.history != no_field || length.keys_history) return std::string("it has or keys a shared history");
    std::int32_t measured = no_field;
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        if (r.fields[i].width_from != static_cast<std::int32_t>(f)) continue;
        if (measured != no_field) return std::string("it is the length of two fields");
        measured = static_cast<std::int32_t>(i);
    }
    int depth = 0;
    for (std::uint32_t k = 0; k + 1 < r.layout_count; ++k) {
        const LayoutStep& s = r.layout[k];
        depth += s.op == LayoutStep::repeat;
        depth -= s.op == LayoutStep::end;
        if (s.op != LayoutStep::field || s.index != f) continue;
        if (depth != 0) return std::string("it repeats in its record");
        const LayoutStep& next = r.layout[k + 1];
        if (measured != no_field && next.op == LayoutStep::field && next.index == static_cast<std::uint32_t>(measured)) {
            return std::nullopt;
        }
    }
    return std::string("it is not the length of the bytes field that follows it");
}

}  // namespace metatf::rt
