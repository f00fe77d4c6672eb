#include "metatf/encoding/field_state.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace metatf::rt {

FieldState FieldState::initial(const FieldDesc& d, std::uint64_t salt) {
    FieldState s;
    static_cast<Encoding&>(s) = d.initial;
    s.desc = &d;
    s.salt = salt;
    s.previous = d.initial.value;
    s.shared = d.history != no_field || d.keys_history;
    s.derive();
    return s;
}

namespace {

// A field's fixed width in a planned record, or nothing when it has none.
std::optional<std::uint32_t> fixed_width(const FieldState* fields, const FieldState& s) {
    // A strided element is not in the record. (A predict field's escape makes
    // the record longer: a plan reads its records without one, RecordPlan::predicts.)
    if (s.kind == Interp::section_stride) return std::nullopt;
    if (s.desc->width_from == no_field) return s.width;
    const FieldState& length = fields[s.desc->width_from];
    const bool constant = length.kind == Interp::default_value && length.value <= 65535;
    return constant ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(length.value)) : std::nullopt;
}

// Whether bytes field `s` can be a plan's stretch (RecordPlan::stretch): its
// length is an earlier field outside groups that a peek reads (no live count
// or predict code, which a peek cannot resolve, and no feed; an intern code
// the column reader resolves itself).
bool stretches(const FieldState* fields, const FieldState& s, const std::vector<bool>& placed) {
    const std::int32_t from = s.desc->width_from;
    if (s.desc->type != Type::bytes || from == no_field || !placed[static_cast<std::size_t>(from)]) return false;
    const FieldState& length = fields[from];
    return !codes(length.kind) && length.feed == 0;
}

}  // namespace

// Fields from 63 on share bit 63: a change to one of them compares them all.
void VariantMatch::compare(const RecordDesc& r, const FieldState* fields, std::uint32_t v, std::uint32_t f) {
    const Encoding* e = r.variants[v].fields;
    const std::uint32_t bit = std::min(f, 63u);
    bool same = true;
    for (std::uint32_t i = f; i < (bit == 63 ? r.field_count : f + 1) && same; ++i) same = detail::same_layout(fields[i], e[i]);
    differ_[v] = same ? differ_[v] & ~(std::uint64_t(1) << bit) : differ_[v] | std::uint64_t(1) << bit;
}

void VariantMatch::choose() {
    const auto same = std::ranges::find(differ_, 0u);
    current_ = same == differ_.end() ? -1 : static_cast<int>(same - differ_.begin());
}

void VariantMatch::update_shared(const RecordDesc& r, const FieldState* fields) {
    for (std::uint32_t v = 0; v < r.variant_count; ++v) compare(r, fields, v, 63);
    choose();
}

void VariantMatch::reset(const RecordDesc& r, const FieldState* fields) {
    differ_.assign(r.variant_count, 0);
    for (std::uint32_t v = 0; v < r.variant_count; ++v) {
        for (std::uint32_t f = 0; f < std::min(r.field_count, 64u); ++f) compare(r, fields, v, f);
    }
    choose();
}

std::uint32_t group_end(const RecordDesc& r, std::uint32_t step) {
    for (std::uint32_t depth = 0;; ++step) {
        depth += r.layout[step].op == LayoutStep::repeat;
        depth -= r.layout[step].op == LayoutStep::end;
        if (depth == 0) return step;
    }
}

RecordPlan make_plan(const RecordDesc& r, FieldState* fields, bool little_endian_trace) {
    RecordPlan plan;
    // A record with a shared history is read and written field by field (Histories).
    if (!little_endian_trace || std::endian::native != std::endian::little || r.predefined != Predefined::none || has_history(r)) {
        return plan;
    }
    bool plain = true, immediate = true, scaled = false, grouped = false;
    std::array<bool, max_pool + 1> touched{};  // by a field before: a reference or a feed
    std::vector<bool> placed(r.field_count);  // fields outside groups so far
    std::int64_t last_effect = -1;
    plan.skippable = true;
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        if (r.layout[i].op == LayoutStep::repeat) {
            // A group that repeats no time takes no bytes (SPC's optional
            // fields, mostly): always, when its count is fixed at 0, or in
            // the records whose stored count is 0 (RecordPlan::counted).
            const FieldState& count = fields[r.layout[i].index];
            if (!repeats_never(count)) {
                if (count.kind == Interp::live || count.kind == Interp::section_offset || !fixed_width(fields, count)) return {};
                plan.counted = true;
            }
            grouped = true;
            i = group_end(r, i);
            continue;
        }
        const std::uint32_t f = r.layout[i].index;
        FieldState& s = fields[f];
        if (s.kind == Interp::section_stride) {
            // A load from the section, made a value by FieldState::from_element() (no pool or feed: a feed is a pool's business).
            if (f >= 64 || s.feed != 0 || !is_integer(s.desc->type)) return {};
            plan.strided |= std::uint64_t(1) << f;
            s.offset = plan.size;  // where a read would stand in the record, for an error's position
            continue;
        }
        auto width = fixed_width(fields, s);
        if (!width && plan.stretch == no_field && stretches(fields, s, placed)) {
            plan.stretch = static_cast<std::int32_t>(f);
            width = 0;
        }
        const bool refers = s.kind == Interp::live || (s.kind == Interp::predict && s.pool != 0);
        const bool pooled = refers || s.kind == Interp::predict || s.feed != 0;
        // The plan's arithmetic has no multiplication: generated code reads fields with a unit one by one.
        scaled = scaled || (s.unit != 1 && unit_applies(s.kind));
        if (!width || (pooled && f >= 64)) return {};
        placed[f] = true;
        s.offset = plan.size;
        plan.size += *width;
        if (pooled) {
            const std::uint64_t bit = std::uint64_t(1) << f;
            plan.pools = true;
            if (s.kind == Interp::live) plan.live |= bit;
            if (s.kind == Interp::predict) plan.predicts |= bit;
            if (refers) {
                immediate = immediate && !touched[s.pool];
                touched[s.pool] = true;
            }
            if (s.feed != 0) {
                plan.feeds |= bit;
                touched[s.feed] = true;
            }
        }
        // A field whose reading changes state or checks its value (RecordPlan::effects).
        if (is_integer(s.desc->type) && (s.keep != 0 || pooled || s.desc->fixed)) {
            plan.skippable = plan.skippable && f < 64 && f > last_effect;
            if (f < 64) plan.effects |= std::uint64_t(1) << f;
            last_effect = static_cast<std::int64_t>(f);
        }
        // Fields from 64 on are read whatever their encoding (see typed.hpp's varies()).
        const bool constant = s.mask == 0 && s.keep == 0 && (s.desc->type != Type::bytes || *width == 0) && !pooled && f < 64;
        if (constant) continue;
        if (f < 64) plan.varying |= std::uint64_t(1) << f;
        const bool integer = is_integer(s.desc->type);
        if (integer && (s.add | s.keep | s.shift) != 0) plain = false;
    }
    plan.fixed = plan.stretch == no_field && plan.strided == 0;
    plan.usable = plan.fixed && !scaled && !grouped;  // generated code plans records without groups only
    plan.plain = plain && !plan.pools;
    plan.immediate = immediate;
    return plan;
}

namespace {

std::optional<std::string> check_width(const FieldState& s, std::uint64_t w) {
    const Type t = s.desc->type;
    if (s.desc->width_from != no_field) return std::string("its width is the value of another field");
    if (is_integer(t) && w > 8) {
        return "width " + std::to_string(w) + " is more than 8 bytes";
    }
    if (t == Type::floating && w != 4 && w != 8) return "width " + std::to_string(w) + " is not 4 or 8";
    if (t == Type::bytes && w > 65535) return "width " + std::to_string(w) + " is more than 65535";
    return std::nullopt;
}

// Whether `a` names a pool that field `s` may refer to or feed (see live_pool.hpp).
std::optional<std::string> check_pool(const FieldState& s, MetaOp op, std::uint64_t a, const DtdDesc& dtd) {
    const bool integer = is_integer(s.desc->type);
    if (!integer) return std::string("'") + std::string(name(op)) + "' applies to integer fields, not '" + std::string(name(s.desc->type)) + "'";
    if ((op == MetaOp::live && a == 0) || a > max_pool) {
        return "there is no pool " + std::to_string(a) + " (pools are 1 to " + std::to_string(max_pool) + ")";
    }
    // A table record is read in the middle of another record, which would see the pools (and predictions) change.
    if (table_section(dtd, -1)) {
        return op == MetaOp::predict ? std::string("a DTD with tables (sectionOffset fields) has no predict fields")
                                     : std::string("a DTD with tables (sectionOffset fields) has no pools");
    }
    return std::nullopt;
}

// Whether field `s` may name its string by a code (StringTable). A table
// record is read out of sequence, which would see the strings' codes move.
std::optional<std::string> check_intern(const FieldState& s, const DtdDesc& dtd) {
    const RecordDesc* r = record_of(dtd, *s.desc);
    if (!r) return std::string("the field is not in the DTD");
    if (auto problem = intern_problem(*r, static_cast<std::uint32_t>(s.desc - r->fields))) return "'intern' cannot apply: " + *problem;
    if (table_section(dtd, -1)) return std::string("a DTD with tables (sectionOffset fields) has no interned strings");
    if (s.restore == 0 || s.restore > 8) return std::string("an intern field needs a width of 1 to 8 bytes");
    return std::nullopt;
}

// `split`: field `s` stores its integers in section `a`, `b` elements
// apart, under the interpretation and unit in force (Encoding::element). A
// delta goes on from the previous value; a split field split again keeps its elements'.
std::optional<std::string> apply_split(FieldState& s, std::uint64_t a, std::uint64_t b, const DtdDesc& dtd) {
    const Interp kept = stored_as(s);
    if (!is_integer(s.desc->type)) return "'split' applies to integer fields, not '" + std::string(name(s.desc->type)) + "'";
    if (kept != Interp::none && kept != Interp::base_offset && kept != Interp::delta) {
        return "'split' keeps none, baseOffset or delta, not '" + std::string(name(kept)) + "'";
    }
    if (a == 0 || a > 255 || !defines_section(dtd, static_cast<std::uint8_t>(a))) return "there is no section " + std::to_string(a);
    if (s.restore == 0) return std::string("'split' needs a known width for the section's elements");
    if (static_cast<std::int64_t>(b) <= 0) return std::string("'split' needs a positive stride");
    s.element = kept;
    s.kind = Interp::section_stride;
    s.section = static_cast<std::uint8_t>(a);
    s.stride = static_cast<std::int64_t>(b);
    s.width = 0;
    s.derive();
    return std::nullopt;
}

}  // namespace

std::optional<std::string> apply_metadata(FieldState& s, MetaOp op, std::uint64_t a, std::uint64_t b,
                                          const DtdDesc& dtd) {
    // First: compact encodings change widths most.
    if (op == MetaOp::width) {
        if (auto problem = check_width(s, a)) return problem;
        if ((codes(s.kind) || s.kind == Interp::intern) && a == 0) {
            return (s.kind == Interp::intern ? "an " : "a ") + std::string(name(s.kind)) + " field needs a width of 1 to 8 bytes";
        }
        s.set_width(static_cast<std::uint32_t>(a));
        return std::nullopt;
    }
    if (static_cast<unsigned>(op) > static_cast<unsigned>(last_meta_op)) {
        return "unknown metadata property " + std::to_string(static_cast<unsigned>(op));
    }
    if (op == MetaOp::live || op == MetaOp::feed || op == MetaOp::predict) {
        if (auto problem = check_pool(s, op, a, dtd)) return problem;
        if (op == MetaOp::feed) {
            s.feed = static_cast<std::uint8_t>(a);
            return std::nullopt;
        }
        if (s.restore == 0) return "a " + std::string(name(op)) + " field needs a width of 1 to 8 bytes";
        s.pool = static_cast<std::uint8_t>(a);
    }
    if (op == MetaOp::unit) {
        const bool integer = is_integer(s.desc->type);
        if (!integer) return "a unit applies to integer fields, not '" + std::string(name(s.desc->type)) + "'";
        if (a == 0 || a > max_unit) return "unit " + std::to_string(a) + " is not between 1 and " + std::to_string(max_unit);
        s.unit = a;
        return std::nullopt;
    }
    if (op == MetaOp::split) return apply_split(s, a, b, dtd);
    const Interp kind = interp_of(op);
    const bool integer = is_integer(s.desc->type);
    if (kind != Interp::none && !integer) {
        return std::string("interpretation '") + std::string(name(kind)) + "' applies to integer fields, not '" +
               std::string(name(s.desc->type)) + "'";
    }
    if (kind == Interp::default_value && s.desc->breaks_fixed(a)) {
        // Metadata changes how a value is stored, never a value the DTD fixes.
        const bool is_signed = s.desc->type == Type::signed_int;
        const auto text = [&](std::uint64_t v) { return is_signed ? std::to_string(static_cast<std::int64_t>(v)) : std::to_string(v); };
        return "the DTD fixes the field's value at " + text(s.desc->fixed_value) + "; 'default " + text(a) + "' would change it";
    }
    // A table record is read from its own offset, where no history entry is known.
    if (kind == Interp::section_offset && history_count(dtd) != 0) return std::string("a DTD with shared histories has no tables");
    if (kind == Interp::section_offset && declares_intern(dtd)) return std::string("a DTD with interned strings has no tables");
    if (kind == Interp::intern) {
        if (auto problem = check_intern(s, dtd)) return problem;
    }
    if (kind == Interp::section_offset || kind == Interp::section_stride) {
        if (a == 0 || a > 255 || !defines_section(dtd, static_cast<std::uint8_t>(a))) {
            return "there is no section " + std::to_string(a);
        }
        s.section = static_cast<std::uint8_t>(a);
    } else if (kind == Interp::predict) {
        if (b > all_predictors) return "predictor set " + std::to_string(b) + " names predictors beyond the seven (bits 0-6)";
        s.value = b;
    } else if (kind != Interp::none && kind != Interp::live) {
        s.value = a;
    }
    if (kind == Interp::stride || kind == Interp::section_stride) s.stride = static_cast<std::int64_t>(b);
    if (kind == Interp::section_stride && (s.restore == 0 || s.stride <= 0)) {
        return s.restore == 0 ? std::string("sectionStride needs a known width for the section's elements")
                              : std::string("sectionStride needs a positive stride");
    }
    s.kind = kind;
    s.element = Interp::section_stride;  // sectionStride's elements are values
    s.width = stores_bytes(kind) ? s.restore : 0;
    s.previous = s.value;
    s.history = {};
    s.derive();
    return std::nullopt;
}

}  // namespace metatf::rt
