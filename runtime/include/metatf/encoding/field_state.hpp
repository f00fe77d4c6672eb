// The encoding state of one field of one record type, and the metadata
// changes of it. Readers and writers share this, so both sides agree.
#pragma once

#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <vector>

#include "metatf/core/bytes.hpp"
#include "metatf/core/descriptor.hpp"
#include "metatf/encoding/predictor.hpp"

namespace metatf::rt {

// A field's encoding reduced to arithmetic, for records whose layout is
// fixed (see RecordPlan): an integer field's value is
//     sign_extend(load(offset) & mask, shift) + add + (previous & keep)
// under every interpretation but sectionStride, and the writer stores
// value - add - (previous & keep) when it fits. Derived from the Encoding
// by derive(); the stored width is still Encoding::width.
struct FieldPlan {
    std::uint64_t mask = 0;    // the stored bytes' bits: 0 when the field stores none
    std::uint64_t add = 0;     // the default value, the base, or the stride
    std::uint64_t keep = 0;    // all ones when the value accumulates (delta, stride)
    std::uint32_t offset = 0;  // in the record, after the tag (set by make_plan)
    std::uint8_t shift = 0;    // 64 - 8 * width when the stored bytes are signed, else 0
};

// Whether the bytes a field of type `t` stores under `k` are a signed integer.
constexpr bool stores_signed(Type t, Interp k) {
    if (k == Interp::section_offset || k == Interp::live || k == Interp::predict || k == Interp::intern) return false;
    return t == Type::signed_int || k == Interp::base_offset || k == Interp::delta;
}

// The unit (Encoding::unit) scales the stored integer of these interpretations
// only: default and stride store none, a live count, a section offset and
// a strided element are positions, not values, and a predict code is a code.
constexpr bool unit_applies(Interp k) { return k == Interp::none || k == Interp::base_offset || k == Interp::delta; }
// Units are 1 to max_unit, so that a unit is a metadata value in either class.
inline constexpr std::uint64_t max_unit = 0xffffffffu;

// `difference` in units of `unit`, read as signed or unsigned, or nothing when
// it is not a whole number of them.
inline std::optional<std::uint64_t> divide_by_unit(std::uint64_t difference, std::uint64_t unit, bool sign) {
    if (!sign) return difference % unit == 0 ? std::optional(difference / unit) : std::nullopt;
    const auto d = static_cast<std::int64_t>(difference), u = static_cast<std::int64_t>(unit);
    return d % u == 0 ? std::optional(static_cast<std::uint64_t>(d / u)) : std::nullopt;
}

struct FieldState : Encoding, FieldPlan {
    const FieldDesc* desc = nullptr;
    std::uint64_t previous = 0;  // delta and stride: the field's last value
    PredictHistory history{};    // predict: the field's last values
    std::uint64_t salt = 0;      // predict: the field's place in the shared tables (predict_salt())
    std::uint8_t predictors = 0; // predict: how many predictors its set names (its first pool code)
    bool shared = false;         // has a shared history or keys one (FieldDesc::history): read and written apart

    static FieldState initial(const FieldDesc& d, std::uint64_t salt = 0);
    // Sets the FieldPlan part from the encoding.
    void derive() {
        derive_width();
        const Interp k = stored_as(*this);
        const bool adds_value = k == Interp::default_value || k == Interp::base_offset;
        add = adds_value ? value : k == Interp::stride ? static_cast<std::uint64_t>(stride) : 0;
        keep = k == Interp::delta || k == Interp::stride ? ~std::uint64_t(0) : 0;
        predictors = kind == Interp::predict ? static_cast<std::uint8_t>(std::popcount(value)) : 0;
    }
    // The part of the FieldPlan the width decides.
    void derive_width() {
        const bool sign = stores_signed(desc->type, kind);
        mask = width >= 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * width)) - 1;
        shift = static_cast<std::uint8_t>(sign && width > 0 && width < 8 ? 64 - 8 * width : 0);
    }
    // A width metadata record: a field that stores nothing keeps width 0,
    // the new width waiting for a byte-storing interpretation.
    void set_width(std::uint32_t w) {
        if (stores_bytes(kind)) width = w;
        if (w != 0) restore = w;
        derive_width();
    }
    // Whether setting width `w` is the change compact encodings make around
    // outliers: an integer field with a width of its own going from one of 1
    // to 8 bytes to another. apply_metadata() accepts it, and update_plan()
    // moves the fields after it in place when the record has a plan.
    bool simple_width_change(std::uint64_t w) const {
        return width != 0 && w != 0 && w <= 8 && is_integer(desc->type) && desc->width_from == no_field;
    }
    // Whether a width metadata record changes how values are stored: the
    // field's bytes in the record, or under sectionStride the section's
    // elements that follow. stored_width(): that width now.
    bool sized_by_width() const { return stores_bytes(kind) || kind == Interp::section_stride; }
    std::uint32_t stored_width() const { return kind == Interp::section_stride ? restore : width; }
    // Whether the stored integers are signed: those of baseOffset and delta
    // always, under none and the paper's sectionStride a signed field's.
    bool signed_elements() const { return stores_signed(desc->type, stored_as(*this)); }
    // Under sectionStride: the value of element `raw` (restore bytes), which
    // moves a delta's previous value on. The one place a split stream's
    // elements become values (the reader and the column reader).
    std::uint64_t from_element(std::uint64_t raw) {
        const std::uint64_t stored = signed_elements() ? sign_extend(raw, restore) : raw;
        if (element == Interp::section_stride) return stored;
        const std::uint64_t value_now = stored * unit + add + (previous & keep);
        if (keep != 0) previous = value_now;
        return value_now;
    }
};

// A record type whose fields all have a fixed width now (no repetition, no
// length read from the record, no sectionStride), in a little-endian trace
// on a little-endian machine: generated code reads and writes it with FieldPlan arithmetic at
// fixed offsets, with no per-field branch on its encoding.
//
// Fields that refer to or feed pools (live_pool.hpp), and predict fields,
// keep a plan for readers: a live count or a predict code is a load like any
// other, and a record whose codes are all answerable (no escape, no
// reference past its pool) is read with the plan, its pool changes applied
// at its end, or as each field is read where that comes to the same
// (`immediate`). Writers write such records field by field.
struct RecordPlan {
    // The layout is fixed: the fields' offsets and size are set. Generated
    // code needs `usable` too, which a field with a unit (whose value is the
    // stored integer times it) and a group (fixed at no repetition) take
    // away; the DTD-driven decoder (generic.hpp) handles both.
    bool fixed = false;
    bool counted = false;  // fixed only in records whose groups' stored counts are 0
    bool usable = false;
    bool plain = false;         // every varying integer field is a bare load & mask: add, keep and shift are 0
    bool pools = false;         // some field is live, predict or feeds a pool (then plain is false)
    bool immediate = false;     // no pool is referred to after a field of the record referred to it or fed it
    // Not fixed because of this bytes field (and the strided ones below, if
    // any), outside groups, whose length is the value of an earlier field
    // outside groups (a string): the
    // fields' offsets are set as if it were empty, and those after it sit
    // its length further on. The column reader (columns.hpp) reads such
    // records in one pass; other readers take them field by field.
    std::int32_t stretch = no_field;
    // Bit i: field i (below 64) is sectionStride, read from its section, not
    // the record; the plan is then not fixed, and the column reader alone
    // reads it in one pass, like a stretch.
    std::uint64_t strided = 0;
    std::uint32_t size = 0;     // bytes after the tag (a stretch's bytes not counted)
    std::uint64_t varying = 0;  // bit i: field i (below 64) takes a value from the record or its predecessor
    std::uint64_t live = 0;     // bit i: field i is live
    std::uint64_t predicts = 0; // bit i: field i is predict (its code a load; an escape is read field by field)
    std::uint64_t feeds = 0;    // bit i: field i feeds a pool
    // Bit i: reading integer field i changes state (delta, stride, pools,
    // predictions) or checks its value (a fixed one). With `skippable` (every
    // such field below 64, in layout order) a reader that keeps no values
    // reads just these (skip_generic()).
    std::uint64_t effects = 0;
    bool skippable = false;
};

namespace detail {

// Whether a field under encodings `now` is laid out as a variant's `e` says.
inline bool same_layout(const FieldState& now, const Encoding& e) {
    // A pool matters under live only, which no variant has; a feed under any interpretation.
    if (now.kind != e.kind || now.width != e.width || now.unit != 1 || now.feed != 0) return false;
    switch (e.kind) {
        case Interp::default_value:
        case Interp::base_offset: return now.value == e.value;
        case Interp::stride: return now.stride == e.stride;
        case Interp::section_offset: return now.section == e.section;
        default: return true;
    }
}

}  // namespace detail

// Which variant of a record type (RecordDesc::variants) its encodings are:
// every field has the variant's interpretation and width, unit 1, no feed,
// and the constants the layout builds in (a default value, a base, a stride,
// a section; delta's initial value is not one: it only starts the field's
// running value). A metadata record changes one field, and update() compares
// only that one again.
class VariantMatch {
public:
    // Compares every field of `r` under the encodings `fields`.
    void reset(const RecordDesc& r, const FieldState* fields);
    // Field f has changed. Inline, as every metadata record calls it: a field
    // below 63 (the common case) is one comparison per variant, and the
    // variant is chosen in the same pass.
    void update(const RecordDesc& r, const FieldState* fields, std::uint32_t f) {
        if (differ_.empty()) return;
        if (f >= 63) return update_shared(r, fields);
        const std::uint64_t bit = std::uint64_t(1) << f;
        current_ = -1;
        for (std::uint32_t v = r.variant_count; v-- > 0;) {
            std::uint64_t& differ = differ_[v];
            differ = detail::same_layout(fields[f], r.variants[v].fields[f]) ? differ & ~bit : differ | bit;
            if (differ == 0) current_ = static_cast<int>(v);
        }
    }
    // The variant, or -1; -1 too unless the record's `plan` is usable and has no pools.
    int variant(const RecordPlan& plan) const { return plan.usable && !plan.pools ? current_ : -1; }

private:
    void compare(const RecordDesc& r, const FieldState* fields, std::uint32_t v, std::uint32_t f);
    void update_shared(const RecordDesc& r, const FieldState* fields);  // fields from 63 on
    void choose();
    std::vector<std::uint64_t> differ_;  // per variant: bit min(i, 63) set while a field i differs
    int current_ = -1;
};

// Whether a group whose count is field `count` repeats no time in any record:
// the count is fixed at 0.
inline bool repeats_never(const FieldState& count) { return count.kind == Interp::default_value && count.value == 0; }
// The step that ends the group that layout step `step` of `r` begins.
std::uint32_t group_end(const RecordDesc& r, std::uint32_t step);

// The plan of record `r` under the encodings `fields` (whose offsets it sets).
RecordPlan make_plan(const RecordDesc& r, FieldState* fields, bool little_endian_trace);

namespace detail {

// update_plan()'s case done in place: field f's own width changed, and both
// widths store bytes, so the fields after f move by the difference and the
// record's size with them. A field that turns plain may make the whole
// record plain, which only a rebuild finds out.
inline bool move_after_width(RecordPlan& plan, const RecordDesc& r, FieldState* fields, std::uint32_t f, std::uint32_t old_width) {
    const FieldState& s = fields[f];
    if (!plan.usable || old_width == 0 || s.width == 0 || s.desc->width_from != no_field || s.kind == Interp::section_stride) {
        return false;
    }
    const bool integer = is_integer(s.desc->type);
    const bool plain_field = !integer || (s.add | s.keep | s.shift) == 0;
    if (plain_field && !plan.plain) return false;
    const std::uint32_t diff = s.width - old_width;  // modulo 2^32: adds a negative difference too
    // Field f is usually layout step f - 1 (field 0 is the tag).
    std::uint32_t i = f - 1 < r.layout_count && r.layout[f - 1].index == f ? f - 1 : 0;
    while (i < r.layout_count && r.layout[i].index != f) ++i;
    for (++i; i < r.layout_count; ++i) fields[r.layout[i].index].offset += diff;
    plan.size += diff;
    plan.plain = plan.plain && plain_field;
    return true;
}

}  // namespace detail

// Brings `plan` up to date after metadata `op` changed field `f`, whose width
// was `old_width`. A width change between non-zero widths of a planned record
// only moves the fields after f and is applied in place (true: the plan's
// constant fields are as they were); anything else rebuilds the plan (false).
// Inline, for the in-place case that compact encodings meet every few records.
inline bool update_plan(RecordPlan& plan, const RecordDesc& r, FieldState* fields, std::uint32_t f, MetaOp op,
                        std::uint32_t old_width, bool little_endian_trace) {
    if (op == MetaOp::width && detail::move_after_width(plan, r, fields, f, old_width)) return true;
    plan = make_plan(r, fields, little_endian_trace);
    return false;
}

// The value an integer field of a planned record at `p` holds, times its
// unit where it has one, without taking it (the field's previous value stays).
METATF_INLINE std::uint64_t plan_peek(const FieldState& s, const std::byte* p) {
    const std::uint64_t raw = load_native<8>(p + s.offset) & s.mask;
    const auto stored = static_cast<std::uint64_t>(static_cast<std::int64_t>(raw << s.shift) >> s.shift);
    return stored * (unit_applies(s.kind) ? s.unit : 1) + s.add + (s.previous & s.keep);
}

// The bytes of a planned bytes field: its width, or the value of its length
// field, read before it (`states`: the record's).
METATF_INLINE std::size_t planned_bytes(const FieldState& s, const FieldState* states) {
    return static_cast<std::size_t>(s.desc->width_from == no_field ? s.width : states[s.desc->width_from].value);
}

// Reads an integer field of a planned record at `p` (the byte after the tag).
// The record must have 8 bytes of room after the field: the load is 8 bytes wide.
METATF_INLINE std::uint64_t plan_read(FieldState& s, const std::byte* p) {
    const std::uint64_t raw = load_native<8>(p + s.offset) & s.mask;
    const auto extended = static_cast<std::uint64_t>(static_cast<std::int64_t>(raw << s.shift) >> s.shift);
    return s.previous = extended + s.add + (s.previous & s.keep);
}
// What a planned integer field stores for `value`, and whether that fits its bytes.
METATF_INLINE std::uint64_t plan_stored(const FieldState& s, std::uint64_t value) {
    return value - s.add - (s.previous & s.keep);
}
METATF_INLINE bool plan_fits(const FieldState& s, std::uint64_t stored) {
    const std::uint64_t kept = stored & s.mask;
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(kept << s.shift) >> s.shift) == stored;
}

// What field `s` needs to hold `value` when its last value was `previous`
// (what delta and stride count from): whether its interpretation must turn
// to none (a default the value differs from, a stride it breaks), and the
// fewest bytes, 0 to 8, the value takes under the interpretation it then has
// (none, baseOffset, delta: value - base - previous, in the field's units, or
// as it is when it is not a whole number of them and the unit must turn to 1;
// sectionOffset). Writers
// that do not refuse values (WriterOptions::strict) follow it; a width
// metadata record widens a field, or under sectionStride the elements that
// follow (stored_width()). `sized` is false where no width helps: a field
// that is not an integer, or whose width is another field's value, or
// under live or predict (which hold any value: see live_escape()).
struct FieldFit {
    // Bits of one word: as three bools, a writer's check of every field
    // stored them as bytes and loaded them as a word (a store-forwarding stall).
    bool sized : 1 = false;
    bool to_none : 1 = false;
    bool to_unit_one : 1 = false;  // the value is not a whole number of the field's units
    std::uint32_t width = 0;
    std::uint32_t width_unit_one = 0;  // the width it takes at unit 1
};
// Inline: the AutoEncoder calls it for every value under every encoding it
// weighs, and a writer with narrow_after for every field of every record.
METATF_INLINE FieldFit fit_value(const FieldState& s, std::uint64_t value, std::uint64_t previous) {
    const bool integer = is_integer(s.desc->type);
    if (!integer || codes(s.kind) || s.desc->width_from != no_field) return {};
    FieldFit fit{.sized = true};
    Interp kind = stored_as(s);
    if (kind == Interp::default_value || kind == Interp::stride) {
        const std::uint64_t expected = kind == Interp::default_value ? s.value : previous + static_cast<std::uint64_t>(s.stride);
        fit.to_none = value != expected;
        kind = Interp::none;  // the width it would need, to_none or not: a repeated field may need it later
    }
    const std::uint64_t base = kind == Interp::base_offset ? s.value : kind == Interp::delta ? previous : 0;
    const std::uint64_t stored = value - base;
    const bool sign = stores_signed(s.desc->type, kind);
    fit.width = fit.width_unit_one = bytes_needed(stored, sign);
    if (s.unit != 1 && unit_applies(kind)) {
        const auto units = divide_by_unit(stored, s.unit, sign);
        fit.to_unit_one = !units && (unit_applies(stored_as(s)) || fit.to_none);  // default and stride store nothing
        if (units) fit.width = bytes_needed(*units, sign);
    }
    return fit;
}

// What a field needs over all its values in one record (a repeated group
// gives it several): fit_value() of each, against the value before it.
struct FieldNeeds {
    FieldFit fit;
    std::uint64_t previous = 0;
    bool seen = false;
    std::uint32_t in_units = 0;  // the widest of the values in the field's units

    METATF_INLINE void add(const FieldState& s, std::uint64_t value) {
        const FieldFit one = fit_value(s, value, seen ? previous : s.previous);
        in_units = std::max(in_units, one.width);
        fit.sized = fit.sized || one.sized;
        fit.to_none = fit.to_none || one.to_none;
        fit.to_unit_one = fit.to_unit_one || one.to_unit_one;
        fit.width_unit_one = std::max(fit.width_unit_one, one.width_unit_one);
        // One value off the unit sets it back to 1 for all of them.
        fit.width = fit.to_unit_one ? fit.width_unit_one : in_units;
        previous = value;
        seen = true;
    }
};

// The count a `live` field of `width` bytes (1-8) stores for a value it does
// not refer to: all ones. The value itself follows in 8 bytes. A `predict`
// field's escape is the same, followed by a difference (predictor.hpp).
constexpr std::uint64_t live_escape(std::uint32_t width) {
    return width >= 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * width)) - 1;
}

// Applies a metadata change to `s`, or says why it is illegal. `a` and `b`
// are the metadata record's values; `dtd` says which sections exist.
// Follows the paper's rules: an interpretation that stores nothing sets the
// width to 0, one that stores bytes brings back the last non-zero width, and
// delta and stride restart from their initial value.
std::optional<std::string> apply_metadata(FieldState& s, MetaOp op, std::uint64_t a, std::uint64_t b,
                                          const DtdDesc& dtd);

}  // namespace metatf::rt
