// The layouts of typed.hpp's paths, which generated code specializes:
// a record type's descriptor at compile time (Desc), its fixed layouts
// (the initial one and the DTD's variants), the planned layout's
// FieldPlan arithmetic and the general path's field primitives in
// layout order. Internal to TypedReader and TypedWriter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "metatf/io/generic.hpp"
#include "metatf/io/reader.hpp"
#include "metatf/io/writer.hpp"

namespace metatf::rt {


// A field's index as a type: generated visit_fields() passes these, so that
// the runtime can read the descriptor at compile time. Converts to the index.
template <std::uint32_t I>
inline constexpr std::integral_constant<std::uint32_t, I> field_index{};

// The predefined records, the same in every generated header.
template <typename RecordType>
struct Comment {
    static constexpr RecordType type = RecordType::Comment;
    std::string_view text;
};

template <typename RecordType>
struct Section {
    static constexpr RecordType type = RecordType::Section;
    std::uint8_t number = 0;
};

template <typename RecordType>
struct Metadata {
    static constexpr RecordType type = RecordType::Metadata;
    RecordType record{};      // the record type changed
    std::uint32_t field = 0;  // its field index
    MetaOp op = MetaOp::width;
    std::uint64_t a = 0, b = 0;
};

namespace detail {

#if defined(__GNUC__) && defined(__OPTIMIZE__)
#define METATF_LAMBDA_INLINE __attribute__((always_inline))
#else
#define METATF_LAMBDA_INLINE
#endif

using Bytes = std::span<const std::byte>;

template <std::uint32_t I>
using Index = std::integral_constant<std::uint32_t, I>;

// A member's value from the 64 bits the primitives deal in, and back.
template <typename Member>
METATF_INLINE void assign(Member& m, std::uint64_t v) {
    m = static_cast<Member>(v);
}
template <typename Member>
METATF_INLINE std::uint64_t bits_of(const Member& m) {
    return static_cast<std::uint64_t>(m);
}

// What the descriptor says about record type `Record` of `Codec`, at compile time.
template <typename Codec, typename Record>
struct Desc {
    static constexpr std::uint32_t slot = static_cast<std::uint32_t>(Record::type);
    static constexpr const RecordDesc& record = Codec::dtd.records[slot];
    static constexpr unsigned tag_width = Codec::dtd.tag_width;

    static constexpr bool flat() {
        for (std::uint32_t i = 0; i < record.layout_count; ++i) {
            if (record.layout[i].op != LayoutStep::field) return false;
        }
        return record.predefined == Predefined::none;
    }
    // Fixed values (FieldDesc::fixed) are checked by the field primitives:
    // their records (headers, magic numbers: rare) take the field-by-field path.
    static constexpr bool has_fixed() {
        for (std::uint32_t i = 0; i < record.field_count; ++i) {
            if (record.fields[i].fixed) return true;
        }
        return false;
    }
    // Whether a record of this type can ever be planned: it has no repeated
    // group and no fixed value.
    static constexpr bool plannable = flat() && !has_fixed();

    static constexpr bool initial_fixed(std::uint32_t i) {
        const FieldDesc& f = record.fields[i];
        const Interp k = f.initial.kind;
        if (k != Interp::none && k != Interp::default_value && k != Interp::section_offset) return false;
        if (f.initial.feed != 0) return false;  // pools change with every record
        if (f.width_from == no_field) return true;
        const Encoding& length = record.fields[f.width_from].initial;
        return length.kind == Interp::default_value && length.value <= 65535;
    }
    // Whether the initial layout is known now: constant widths, values that
    // need no state (none, default, sectionOffset) and feed no pool.
    static constexpr bool initial() {
        if (!plannable) return false;
        for (std::uint32_t i = 0; i < record.layout_count; ++i) {
            if (!initial_fixed(record.layout[i].index)) return false;
        }
        return true;
    }
    static constexpr bool fast = initial();
    static constexpr std::uint32_t variant_count = record.variant_count;
};

// ---- fixed layouts: the initial one and the DTD's variants ---------------------------------

// A layout known when the header is compiled: the record's initial encodings
// (V = -1, used only where they need no state: Desc::fast) or those of its
// variant V. Offsets and widths are constants; so are the default values,
// bases and strides, and a field's running value is its FieldState::previous.
template <typename D, int V>
struct Fixed {
    static constexpr bool stateless = V < 0;
    static constexpr const Encoding& encoding(std::uint32_t i) {
        if constexpr (V < 0) {
            return D::record.fields[i].initial;
        } else {
            return D::record.variants[V].fields[i];
        }
    }
    static constexpr std::uint32_t width(std::uint32_t i) {
        const std::int32_t from = D::record.fields[i].width_from;
        return from == no_field ? encoding(i).width : static_cast<std::uint32_t>(encoding(from).value);
    }
    // Whether field i takes bytes from the record.
    static constexpr bool stored(std::uint32_t i) {
        const Interp k = encoding(i).kind;
        return k != Interp::default_value && k != Interp::stride && !(D::record.fields[i].type == Type::bytes && width(i) == 0);
    }
    // Where field i starts, after the tag.
    static constexpr std::uint32_t offset(std::uint32_t i) {
        std::uint32_t at = 0;
        for (std::uint32_t s = 0; s < D::record.layout_count && D::record.layout[s].index != i; ++s) {
            at += width(D::record.layout[s].index);
        }
        return at;
    }
    static constexpr std::uint32_t size = offset(~std::uint32_t(0));

    // An integer field's value from its stored bytes `raw`, and the stored
    // integer of a value (which the caller checks with fits()).
    template <std::uint32_t I>
    static METATF_INLINE std::uint64_t value(std::uint64_t raw, FieldState* s) {
        constexpr Encoding e = encoding(I);
        const std::uint64_t n = signed_bytes<I>() ? sign_extend(raw, width(I)) : raw;
        if constexpr (e.kind == Interp::delta) {
            return s[I].previous += n;
        } else if constexpr (e.kind == Interp::base_offset) {
            return n + e.value;
        } else {
            return n;
        }
    }
    template <std::uint32_t I>
    static METATF_INLINE std::uint64_t stored_of(std::uint64_t value, const FieldState* s) {
        constexpr Encoding e = encoding(I);
        if constexpr (e.kind == Interp::delta) {
            return value - s[I].previous;
        } else if constexpr (e.kind == Interp::base_offset) {
            return value - e.value;
        } else {
            return value;
        }
    }
    template <std::uint32_t I>
    static METATF_INLINE bool fits(std::uint64_t stored) {
        return signed_bytes<I>() ? fits_signed(stored, width(I)) : fits_unsigned(stored, width(I));
    }
    template <std::uint32_t I>
    static constexpr bool signed_bytes() {
        return stores_signed(D::record.fields[I].type, encoding(I).kind);
    }
};

// Sets the members whose value the layout fixes (default values, empty bytes).
template <typename L>
struct FixedConstants {
    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, Member& m) const {
        if constexpr (!L::stored(I) && L::encoding(I).kind != Interp::stride) {
            if constexpr (std::is_same_v<Member, Bytes>) {
                m = Bytes();
            } else {
                assign(m, L::encoding(I).value);
            }
        }
    }
};

// Loads the other members from p, the byte after the tag.
template <typename L>
struct FixedLoad {
    const std::byte* p;
    FieldState* s;  // the record type's states; unused by the initial layout

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, Member& m) const {
        constexpr std::uint32_t w = L::width(I), at = L::offset(I);
        if constexpr (L::encoding(I).kind == Interp::stride) {
            assign(m, s[I].previous += static_cast<std::uint64_t>(L::encoding(I).stride));
        } else if constexpr (!L::stored(I)) {
        } else if constexpr (std::is_same_v<Member, Bytes>) {
            m = Bytes(p + at, w);
        } else if constexpr (std::is_floating_point_v<Member>) {
            m = float_from_bits(load_native<w>(p + at), w);
        } else {
            assign(m, L::template value<I>(load_native<w>(p + at), s));
        }
    }
};

// Whether a record's values fit the layout; the general path reports why not.
template <typename L>
struct FixedFits {
    const FieldState* s;
    bool ok = true;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, const Member& m) {
        constexpr Encoding e = L::encoding(I);
        if constexpr (std::is_same_v<Member, Bytes>) {
            ok &= m.size() == L::width(I);
        } else if constexpr (e.kind == Interp::stride) {
            ok &= bits_of(m) == s[I].previous + static_cast<std::uint64_t>(e.stride);
        } else if constexpr (!L::stored(I)) {
            ok &= bits_of(m) == e.value;
        } else if constexpr (!std::is_floating_point_v<Member>) {
            ok &= L::template fits<I>(L::template stored_of<I>(bits_of(m), s));
        }
    }
};

template <typename L>
struct FixedStore {
    std::byte* p;
    FieldState* s;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, const Member& m) const {
        constexpr std::uint32_t w = L::width(I), at = L::offset(I);
        constexpr Interp k = L::encoding(I).kind;
        if constexpr (k == Interp::stride) {
            s[I].previous = bits_of(m);
        } else if constexpr (!L::stored(I)) {
        } else if constexpr (std::is_same_v<Member, Bytes>) {
            std::memcpy(p + at, m.data(), w);
        } else if constexpr (std::is_floating_point_v<Member>) {
            store_native<w>(p + at, float_to_bits(m, w));
        } else {
            store_native<w>(p + at, L::template stored_of<I>(bits_of(m), s));
            if constexpr (k == Interp::delta) s[I].previous = bits_of(m);
        }
    }
};

// Calls take(std::type_identity<R>{}) for the record R of `Tuple` (records
// sorted by tag) whose tag is `tag`, and returns what it returns; false if
// none has it. A tree of comparisons, not a switch: GCC makes a switch over
// many tags a jump table, whose one indirect branch predicts a mix of record
// types worse than a few conditional branches do (docs/performance.md).
template <typename Tuple, std::size_t Lo = 0, std::size_t Hi = std::tuple_size_v<Tuple>, typename Take>
METATF_INLINE bool by_tag([[maybe_unused]] std::uint64_t tag, [[maybe_unused]] Take&& take) {
    if constexpr (Hi == Lo) {
        return false;
    } else if constexpr (Hi - Lo == 1) {
        using R = std::tuple_element_t<Lo, Tuple>;
        return tag == R::tag && take(std::type_identity<R>{});
    } else {
        constexpr std::size_t mid = Lo + (Hi - Lo) / 2;
        if (tag < std::tuple_element_t<mid, Tuple>::tag) return by_tag<Tuple, Lo, mid>(tag, take);
        return by_tag<Tuple, mid, Hi>(tag, take);
    }
}

// Calls f.template operator()<Fixed<D, V>>() for the variant `v` of the record.
template <typename D, typename F>
METATF_INLINE void with_variant(int v, F&& f) {
    if constexpr (D::variant_count == 1) {
        f.template operator()<Fixed<D, 0>>();
    } else {
        [&]<int... V>(std::integer_sequence<int, V...>) METATF_LAMBDA_INLINE {
            // The fold stops at the variant that matches; its value is not needed (Clang's -Wunused-value).
            static_cast<void>(((v == V ? (f.template operator()<Fixed<D, V>>(), true) : false) || ...));
        }(std::make_integer_sequence<int, static_cast<int>(D::variant_count)>{});
    }
}

// ---- a planned layout: FieldPlan arithmetic at the RecordPlan's offsets ----------------------

// Whether field I is read and written per record under a plan whose
// RecordPlan::varying is `varying` (fields from 64 on always are). Taken by
// value: a copy in a register is not reloaded after every store to a record.
template <std::uint32_t I>
METATF_INLINE bool varies(std::uint64_t varying) {
    if constexpr (I < 64) {
        return (varying >> I & 1) != 0;
    } else {
        return true;
    }
}

// The width of a bytes field of a planned record.
template <typename D, std::uint32_t I>
METATF_INLINE std::uint32_t planned_width(const FieldState* s) {
    constexpr std::int32_t from = D::record.fields[I].width_from;
    if constexpr (from == no_field) {
        return s[I].width;
    } else {
        return static_cast<std::uint32_t>(s[from].value);
    }
}

// Sets the members a plan fixes, once per plan: the planned path skips them.
template <typename D>
struct PlanConstants {
    std::uint64_t varying;
    const FieldState* s;

    template <std::uint32_t I, typename Member>
    void field(Index<I>, Member& m) const {
        if (varies<I>(varying)) return;
        if constexpr (std::is_same_v<Member, Bytes>) {
            m = Bytes();
        } else if constexpr (!std::is_floating_point_v<Member>) {
            assign(m, s[I].add);
        }
    }
};

// Plain: the plan is RecordPlan::plain, and its integers are bare loads.
template <typename D, bool Plain>
struct PlanLoad {
    std::uint64_t varying;
    FieldState* s;
    const std::byte* p;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, Member& m) const {
        if (!varies<I>(varying)) return;
        FieldState& f = s[I];
        if constexpr (std::is_same_v<Member, Bytes>) {
            m = Bytes(p + f.offset, planned_width<D, I>(s));
        } else if constexpr (std::is_floating_point_v<Member>) {
            m = float_from_bits(load_native<8>(p + f.offset) & f.mask, f.width);
        } else if constexpr (Plain) {
            assign(m, load_native<8>(p + f.offset) & f.mask);
        } else {
            assign(m, plan_read(f, p));
        }
    }
};

// A planned record with pool fields (RecordPlan::pools): PlanLoad's
// arithmetic, a live field's count looked up in its pool, fed values
// handed to theirs. The caller has checked with PlanPoolsAnswer that every
// count names a live value. Immediate (RecordPlan::immediate): the pools
// change as each field is read; else the caller applies the changes at
// the record's end.
template <typename D, bool Immediate>
struct PlanLoadPools {
    const RecordPlan& plan;
    FieldState* s;
    const std::byte* p;
    TraceReader& reader;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, Member& m) const {
        if constexpr (I < 64 && (std::is_integral_v<Member> || std::is_enum_v<Member>)) {
            if (!varies<I>(plan.varying)) return;
            FieldState& f = s[I];
            std::uint64_t value = (plan.predicts >> I & 1) ? reader.planned_prediction<Immediate>(f, p) : plan_read(f, p);
            if constexpr (Immediate) {
                if (plan.live >> I & 1) value = reader.pools().now(f.pool).take(value);
                if (plan.feeds >> I & 1) reader.pools().now(f.feed).add(value);
            } else {
                if (plan.live >> I & 1) value = reader.pools().refer_back_live(f.pool, value);
                if (plan.feeds >> I & 1) reader.pools().feed(f.feed, value);
            }
            assign(m, value);
        } else {
            PlanLoad<D, false>{plan.varying, s, p}.field(Index<I>{}, m);
        }
    }
};

// Whether every live field of a planned record at `p` stores a count its
// pool answers (not the escape, which makes the record longer, and not past
// the pool's live values). Those that do not are read field by field.
template <typename D>
struct PlanPoolsAnswer {
    std::uint64_t coded;  // RecordPlan::live | RecordPlan::predicts
    const FieldState* s;
    const std::byte* p;
    const TraceReader& reader;
    bool ok = true;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, const Member&) {
        if constexpr (I < 64 && (std::is_integral_v<Member> || std::is_enum_v<Member>)) {
            if (coded >> I & 1) ok = ok && reader.answerable(s[I], p);
        }
    }
};

// The writer's planned path in two passes over the members: PlanEncode
// works out what each integer field stores and whether everything fits;
// PlanStore, once room is reserved, stores it. A field the plan fixes stores
// nothing; its value must be the fixed one.
//
// Plain (RecordPlan::plain): an integer is stored as it is, and fits when it
// has no bits outside the field's mask. Stores are 8 bytes wide and made in
// layout order, each field's overwriting the spare bytes of the one before.
template <typename D, bool Plain>
struct PlanEncode {
    std::uint64_t varying;
    const FieldState* s;
    std::uint64_t stored[D::record.field_count] = {};
    bool ok = true;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, const Member& m) {
        const FieldState& f = s[I];
        if constexpr (std::is_same_v<Member, Bytes>) {
            ok &= m.size() == planned_width<D, I>(s);
        } else if constexpr (std::is_floating_point_v<Member>) {
        } else if (!varies<I>(varying)) {
            ok &= bits_of(m) == f.add;
        } else if constexpr (Plain) {
            ok &= f.mask != 0 ? (bits_of(m) & ~f.mask) == 0 : bits_of(m) == f.add;  // fields from 64 on may be fixed
        } else {
            stored[I] = plan_stored(f, bits_of(m));
            ok &= plan_fits(f, stored[I]);
        }
    }
};

template <typename D, bool Plain>
struct PlanStore {
    const PlanEncode<D, Plain>& encoded;
    FieldState* s;
    std::byte* p;

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, const Member& m) const {
        if (!varies<I>(encoded.varying)) return;
        FieldState& f = s[I];
        if constexpr (std::is_same_v<Member, Bytes>) {
            if (!m.empty()) std::memcpy(p + f.offset, m.data(), m.size());
        } else if constexpr (std::is_floating_point_v<Member>) {
            store_native<8>(p + f.offset, float_to_bits(m, f.width));
        } else if constexpr (Plain) {
            store_native<8>(p + f.offset, bits_of(m));
        } else {
            store_native<8>(p + f.offset, encoded.stored[I]);
            f.previous = bits_of(m);
        }
    }
};

// Lists a record struct's members as values in layout order, as
// encode_generic() takes them (the text writer, WriterOptions::auto_window).
struct ToGeneric {
    std::vector<GenericValue>& values;

    template <typename Member>
    void field(std::uint32_t index, const Member& m) {
        GenericValue v;
        v.field = index;
        if constexpr (std::is_same_v<Member, std::span<const std::byte>>) {
            v.bytes = m;
        } else if constexpr (std::is_floating_point_v<Member>) {
            v.real = m;
        } else {
            v.integer = static_cast<std::uint64_t>(m);
        }
        values.push_back(v);
    }

    template <typename Elements, typename Body>
    void repeat(std::uint32_t, Elements& elements, Body&& body) {
        for (auto& e : elements) body(e);
    }
};

// What each of a record's integer fields needs for its values (FieldNeeds).
template <typename D>
struct Needs {
    const FieldState* s;
    FieldNeeds need[D::record.field_count] = {};

    template <std::uint32_t I, typename Member>
    void field(Index<I>, const Member& m) {
        if constexpr (!std::is_same_v<Member, Bytes> && !std::is_floating_point_v<Member>) need[I].add(s[I], bits_of(m));
    }
    template <std::uint32_t I, typename Elements, typename Body>
    void repeat(Index<I>, const Elements& elements, Body&& body) {
        for (const auto& e : elements) body(const_cast<typename Elements::value_type&>(e));
    }
};

// A field's values since its width last changed or was last needed in
// full (WriterOptions::narrow_after).
struct NarrowRun {
    std::uint32_t count = 0;
    std::uint32_t widest = 0;
};

// ---- the general path: the field primitives in layout order -----------------------------

// The latest value of each integer field: a repeat's count, a bytes field's length.
template <typename D>
struct Latest {
    std::uint64_t value[D::record.field_count] = {};

    template <std::uint32_t I>
    std::uint64_t length_of() const {
        constexpr std::int32_t from = D::record.fields[I].width_from;
        if constexpr (from == no_field) {
            return 0;
        } else {
            return value[from];
        }
    }
};

template <typename D>
struct Decode : Latest<D> {
    TraceReader& r;
    FieldState* s;

    Decode(TraceReader& reader, FieldState* states) : r(reader), s(states) {}

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, Member& m) {
        if constexpr (std::is_same_v<Member, Bytes>) {
            m = r.read_bytes(s[I], this->template length_of<I>());
        } else if constexpr (std::is_floating_point_v<Member>) {
            m = r.read_float(s[I]);
        } else {
            this->value[I] = r.read_int(s[I]);
            assign(m, this->value[I]);
        }
    }
    template <std::uint32_t I, typename Elements, typename Body>
    void repeat(Index<I>, Elements& elements, Body&& body) {
        elements.resize(r.check_count(this->value[I], s[I]));
        for (auto& e : elements) body(e);
    }
};

template <typename D>
struct Encode : Latest<D> {
    TraceWriter& w;
    FieldState* s;

    Encode(TraceWriter& writer, FieldState* states) : w(writer), s(states) {}

    template <std::uint32_t I, typename Member>
    METATF_INLINE void field(Index<I>, const Member& m) {
        if constexpr (std::is_same_v<Member, Bytes>) {
            w.write_bytes(s[I], m, this->template length_of<I>());
        } else if constexpr (std::is_floating_point_v<Member>) {
            w.write_float(s[I], m);
        } else {
            this->value[I] = bits_of(m);
            w.write_int(s[I], this->value[I]);
        }
    }
    template <std::uint32_t I, typename Elements, typename Body>
    void repeat(Index<I>, const Elements& elements, Body&& body) {
        w.check_count(s[I], this->value[I], elements.size());
        for (const auto& e : elements) body(const_cast<typename Elements::value_type&>(e));
    }
};

// Visits a record's members with a visitor of the kinds above. visit_fields()
// takes a mutable record to serve readers too; the writers' visitors only read it.
template <typename Record, typename Visitor>
METATF_INLINE void members(const Record& record, Visitor&& v) {
    visit_fields(const_cast<Record&>(record), v);
}

// Any visitor, for the concept below.
struct AnyVisitor {
    template <typename... A>
    void field(A&&...);
    template <typename... A>
    void repeat(A&&...);
};

// A record of the DTD's own, not a predefined one: it has visit_fields().
template <typename Record>
concept UserRecord = requires(Record& r, AnyVisitor& v) { visit_fields(r, v); };

// The longest record the initial path reads, tag included: the fast window.
template <typename Codec, std::size_t... I>
constexpr std::size_t fast_window(std::index_sequence<I...>) {
    std::size_t window = Codec::dtd.tag_width;
    auto widen = [&]<typename Record>(std::type_identity<Record>) {
        if constexpr (UserRecord<Record>) {
            using D = Desc<Codec, Record>;
            if constexpr (D::fast) window = std::max<std::size_t>(window, D::tag_width + Fixed<D, -1>::size);
        }
    };
    (widen(std::type_identity<std::tuple_element_t<I, typename Codec::Records>>{}), ...);
    return window;
}

}  // namespace detail

}  // namespace metatf::rt
