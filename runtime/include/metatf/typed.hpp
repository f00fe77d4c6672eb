// The binary reader and writer of a generated header: everything in them
// that does not depend on the DTD. A generated header holds its record
// structs, their visit_fields(), its descriptor constants and a Codec that
// names them and lists the records that tags name; TypedReader<Codec> and TypedWriter<Codec>
// read and write those structs through TraceReader and TraceWriter.
//
// Four ways to a record, chosen per record type at run time:
//  - initial: the DTD's own layout, known when the header is compiled: loads
//    and stores at constant offsets (detail::Fixed, from the constexpr
//    descriptor);
//  - a variant: encodings the DTD names (`variant NAME { ... }`) that metadata
//    has set: constant offsets and widths as well (detail::Fixed);
//  - planned: a layout metadata has changed but that is still fixed: the
//    FieldPlan arithmetic at the offsets of the RecordPlan (field_state.hpp);
//  - general: anything else (repeated groups, lengths read from the record,
//    sectionStride, a chunk's tail): the field primitives, field by field.
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

#include "auto_encoder.hpp"
#include "reader.hpp"
#include "rules.hpp"
#include "writer.hpp"

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
            ((v == V ? (f.template operator()<Fixed<D, V>>(), true) : false) || ...);
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

// Reads a trace of a generated header's DTD: pull records with next(), or
// pass a visitor to visit(). Throws TraceError.
template <typename Codec>
class TypedReader {
public:
    using RecordType = typename Codec::RecordType;
    using Records = typename Codec::Records;

    explicit TypedReader(const std::string& path) : r_(path, Codec::dtd) {
        r_.set_fast_window(detail::fast_window<Codec>(slots()));
        for_each([&](auto& record) { set_constants(record); });
    }

    // Moves to the next record; false at the end of the trace.
    METATF_INLINE bool next() {
        return step([](const auto&) {});
    }
    RecordType type() const { return type_; }
    // The current record; valid until the next call of next().
    template <typename Record>
    const Record& get() const {
        return std::get<Record>(records_);
    }
    // Calls v(record) with the current record's struct.
    template <typename Visitor>
    void dispatch(Visitor&& v) const {
        with_slot(records_, static_cast<std::uint32_t>(type_), [&](const auto& record) { v(record); });
    }

    // Reads the rest of the trace, calling v(record) for every record.
    template <typename Visitor>
    void visit(Visitor&& v) {
        do {
            std::uint64_t records = 0;
            const TraceReader::Run stop = visit_fast(v, records);
            r_.advance(stop.pos, records);
        } while (step_general(v));
    }

    // Reads the record at `offset` of table section `section` (the target of
    // a sectionOffset field) with the DTD's initial encodings, and calls v(record).
    template <typename Visitor>
    void visit_table_record(std::uint8_t section, std::uint64_t offset, Visitor&& v) {
        r_.table_record(section, offset, [&](TraceReader& r) {
            with_slot(records_, r.slot(), [&]<typename Record>(Record&) {
                if constexpr (detail::UserRecord<Record>) {
                    Record record;
                    using D = detail::Desc<Codec, Record>;
                    if constexpr (D::fast) visit_fields(record, detail::FixedConstants<detail::Fixed<D, -1>>{});
                    decode(record);
                    v(record);
                } else {
                    r.fail(ErrorKind::unknown_tag, "a table holds no predefined records");
                }
            });
        });
    }

    TraceReader& runtime() { return r_; }

private:
    static constexpr unsigned tag_width = Codec::dtd.tag_width;
    static constexpr auto slots() { return std::make_index_sequence<std::tuple_size_v<Records>>{}; }

    template <typename F>
    void for_each(F&& f) {
        std::apply([&](auto&... record) { (f(record), ...); }, records_);
    }
    // Calls f(record) for the struct of `slot` in `records` (records_, const or not); false if there is none.
    template <typename Tuple, typename F>
    static bool with_slot(Tuple& records, std::uint32_t slot, F&& f) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((slot == I ? (f(std::get<I>(records)), true) : false) || ...);
        }(slots());
    }

    // The members a record type's current layout fixes, set in its struct once.
    template <typename Record>
    void set_constants(Record& record) {
        if constexpr (detail::UserRecord<Record>) {
            using D = detail::Desc<Codec, Record>;
            if constexpr (D::fast) visit_fields(record, detail::FixedConstants<detail::Fixed<D, -1>>{});
            if constexpr (D::plannable) {
                const RecordPlan& plan = r_.plan(D::slot);
                if (plan.usable) visit_fields(record, detail::PlanConstants<D>{plan.varying, r_.states(D::slot)});
            }
        }
    }

    template <typename Record, typename Then>
    METATF_INLINE bool deliver(Record& record, Then& then) {
        type_ = Record::type;
        then(record);
        return true;
    }

    // Whether the record at run.pos, of type Record, is in its initial layout.
    template <typename Record>
    METATF_INLINE bool initial_at(const TraceReader::Run& run, std::uint64_t tag) const {
        using D = detail::Desc<Codec, Record>;
        if constexpr (Record::tag < 64) {
            return run.fast(Record::tag);
        } else {
            return run.slot_of(tag) == D::slot && r_.initial(D::slot);
        }
    }

    // Whether the record at run.pos, of type Record, has a plan to be read
    // with: for a tag below 64 one mask test, else the plan and the room for
    // it and the slack of its wide loads.
    template <typename Record>
    METATF_INLINE bool planned_at(const TraceReader::Run& run, std::uint64_t tag) const {
        using D = detail::Desc<Codec, Record>;
        if constexpr (Record::tag < 64) {
            return run.planned(Record::tag);
        } else {
            const RecordPlan& plan = r_.plan(D::slot);
            return run.slot_of(tag) == D::slot && plan.usable &&
                   static_cast<std::size_t>(run.end - run.pos) >= tag_width + plan.size + 8;
        }
    }

    // Whether records of this type may be read in one of the DTD's variants:
    // the run says so for a tag below 64 (others take the planned path).
    template <typename Record>
    static constexpr bool variants_at() {
        using D = detail::Desc<Codec, Record>;
        return D::variant_count > 0 && D::plannable && Record::tag < 64;
    }

    // Reads the record at `pos`, whose type's encodings are one of its
    // variants now (Run::variant()); returns where the next begins. Fresh:
    // `record` is a local, whose constant members are set here (the reader's
    // own structs have them from set_constants(): the variant's layout is
    // the record type's plan).
    template <bool Fresh, typename Record>
    METATF_INLINE const std::byte* read_variant(Record& record, const std::byte* pos) {
        using D = detail::Desc<Codec, Record>;
        const std::byte* next = nullptr;
        detail::with_variant<D>(r_.variant(D::slot), [&]<typename L>() METATF_LAMBDA_INLINE {
            if constexpr (Fresh) visit_fields(record, detail::FixedConstants<L>{});
            visit_fields(record, detail::FixedLoad<L>{pos + tag_width, r_.states(D::slot)});
            next = pos + tag_width + L::size;
        });
        return next;
    }

    // Reads the record whose tag is at `pos` with its plan; returns where
    // the next begins, or null for a record with pools whose counts do not
    // all name live values (read field by field). Records with pools go out
    // of line: their pool work outweighs a call, and inlined they would
    // weigh on every record's path.
    template <typename Record>
    METATF_INLINE const std::byte* read_planned(Record& record, const std::byte* pos) {
        using D = detail::Desc<Codec, Record>;
        const RecordPlan& plan = r_.plan(D::slot);
        if (plan.pools) [[unlikely]] return read_pooled(record, pos);
        const std::byte* p = pos + tag_width;
        if (plan.plain) {
            visit_fields(record, detail::PlanLoad<D, true>{plan.varying, r_.states(D::slot), p});
        } else {
            visit_fields(record, detail::PlanLoad<D, false>{plan.varying, r_.states(D::slot), p});
        }
        return p + plan.size;
    }

    template <typename Record>
    [[gnu::noinline]] const std::byte* read_pooled(Record& record, const std::byte* pos) {
        using D = detail::Desc<Codec, Record>;
        const RecordPlan& plan = r_.plan(D::slot);
        const std::byte* p = pos + tag_width;
        detail::PlanPoolsAnswer<D> answer{plan.live | plan.predicts, r_.states(D::slot), p, r_};
        detail::members(record, answer);
        if (!answer.ok) return nullptr;
        if (plan.immediate) {
            visit_fields(record, detail::PlanLoadPools<D, true>{plan, r_.states(D::slot), p, r_});
        } else {
            visit_fields(record, detail::PlanLoadPools<D, false>{plan, r_.states(D::slot), p, r_});
            r_.pools().end_record();
        }
        return p + plan.size;
    }

    // Reads one record and hands it to `then`. Before run.limit every record
    // in its initial layout fits in the chunk: the search for its tag, one mask
    // test, loads at constant offsets. Metadata records are read there too;
    // step_general() reads what the fast paths do not (the chunk's tail,
    // comments and sections, shared tags).
    template <typename Then>
    METATF_INLINE bool step(Then&& then) {
        const TraceReader::Run run = r_.run();
        if (run.pos < run.limit) {
            const std::uint64_t tag = load_native<tag_width>(run.pos);
            const bool done = detail::by_tag<typename Codec::ByTag>(tag, [&]<typename Record>(std::type_identity<Record>) METATF_LAMBDA_INLINE {
                return take<Record>(run, tag, then);
            });
            if (done) return true;
            if (run.slot_of(tag) == metadata_slot) return deliver(read_metadata(run), then);
        }
        return step_general(then);
    }

    template <typename Record, typename Then>
    METATF_INLINE bool take(const TraceReader::Run& run, std::uint64_t tag, Then& then) {
        using D = detail::Desc<Codec, Record>;
        Record& record = std::get<Record>(records_);
        if constexpr (D::fast) {
            if (initial_at<Record>(run, tag)) {
                visit_fields(record, detail::FixedLoad<detail::Fixed<D, -1>>{run.pos + tag_width, nullptr});
                r_.advance(run.pos + tag_width + detail::Fixed<D, -1>::size, 1);
                return deliver(record, then);
            }
        }
        if constexpr (variants_at<Record>()) {
            if (run.variant(Record::tag)) {
                r_.advance(read_variant<false>(record, run.pos), 1);
                return deliver(record, then);
            }
        }
        if constexpr (D::plannable) {
            if (planned_at<Record>(run, tag)) {
                if (const std::byte* next = read_planned(record, run.pos)) [[likely]] {
                    r_.advance(next, 1);
                    return deliver(record, then);
                }
            }
        }
        if (run.slot_of(tag) != D::slot) return false;
        read_at(record, run);
        return deliver(record, then);
    }

    // A record that neither fast path reads, out of line.
    template <typename Record>
    [[gnu::noinline]] void read_at(Record& record, const TraceReader::Run& run) {
        r_.begin_record(run, static_cast<std::uint32_t>(Record::type));
        decode(record);
        r_.end_record();
    }

    // Field by field, under the encodings metadata has set (the initial
    // layout's loads when it is known, bounds-checked).
    template <typename Record>
    void decode(Record& record) {
        using D = detail::Desc<Codec, Record>;
        if constexpr (D::fast) {
            if (r_.initial(D::slot)) {
                visit_fields(record, detail::FixedLoad<detail::Fixed<D, -1>>{r_.fixed(detail::Fixed<D, -1>::size), nullptr});
                return;
            }
        }
        detail::Decode<D> decoder(r_, r_.states(D::slot));
        visit_fields(record, decoder);
    }

    // Any record, through the runtime's primitives.
    template <typename Then>
    bool step_general(Then&& then) {
        if (!r_.begin_record()) return false;
        if (r_.segment_starts() != segment_starts_) [[unlikely]] {
            segment_starts_ = r_.segment_starts();
            for_each([&](auto& record) { set_constants(record); });
        }
        bool delivered = false;
        with_slot(records_, r_.slot(), [&](auto& record) {
            read_general(record);
            r_.end_record();
            delivered = deliver(record, then);
        });
        return delivered;
    }

    void read_general(Comment<RecordType>& record) { record.text = r_.read_comment(); }
    void read_general(Section<RecordType>& record) { record.number = r_.read_section(); }
    void read_general(Metadata<RecordType>& record) {
        const MetadataChange m = r_.read_metadata();
        record = Metadata<RecordType>{static_cast<RecordType>(m.slot), m.field, m.op, m.a, m.b};
        if (!m.constants_kept) with_slot(records_, m.slot, [&](auto& changed) { set_constants(changed); });
    }
    template <typename Record>
    void read_general(Record& record) {
        decode(record);
    }

    // A metadata record at run.pos, met by a fast loop: compact encodings
    // change widths around outliers every few records, so it is read (by the
    // checked path) without going round step_general().
    static constexpr auto metadata_slot = static_cast<std::uint32_t>(RecordType::Metadata);
    [[gnu::noinline]] Metadata<RecordType>& read_metadata(const TraceReader::Run& run) {
        auto& record = std::get<Metadata<RecordType>>(records_);
        r_.begin_record(run, metadata_slot);
        read_general(record);
        r_.end_record();
        return record;
    }

    // Reads records straight from the chunk, with the cursor in a local
    // (a register); stops at what only step_general() reads and returns where
    // that is. `records` counts the records read since the cursor was last
    // handed back.
    template <typename Visitor>
    METATF_INLINE TraceReader::Run visit_fast(Visitor& v, std::uint64_t& records) {
        TraceReader::Run run = r_.run();
        while (run.pos < run.limit) {
            const std::uint64_t tag = load_native<tag_width>(run.pos);
            const bool read = detail::by_tag<typename Codec::ByTag>(tag, [&]<typename Record>(std::type_identity<Record>) METATF_LAMBDA_INLINE {
                return visit_one<Record>(run, tag, v, records);
            });
            if (!read) {
                if (run.slot_of(tag) != metadata_slot) return run;
                r_.advance(run.pos, records);
                records = 0;
                v(read_metadata(run));
                run = r_.run();
            }
        }
        return run;
    }

    template <typename Record, typename Visitor>
    METATF_INLINE bool visit_one(TraceReader::Run& run, std::uint64_t tag, Visitor& v, std::uint64_t& records) {
        using D = detail::Desc<Codec, Record>;
        if constexpr (D::fast) {
            if (initial_at<Record>(run, tag)) {
                // In a local, so that its members stay in registers.
                Record record;
                visit_fields(record, detail::FixedConstants<detail::Fixed<D, -1>>{});
                visit_fields(record, detail::FixedLoad<detail::Fixed<D, -1>>{run.pos + tag_width, nullptr});
                run.pos += tag_width + detail::Fixed<D, -1>::size;
                ++records;
                v(record);
                return true;
            }
        }
        if constexpr (variants_at<Record>()) {
            if (run.variant(Record::tag)) {
                Record record;
                run.pos = read_variant<true>(record, run.pos);
                ++records;
                v(record);
                return true;
            }
        }
        Record& record = std::get<Record>(records_);
        if constexpr (D::plannable) {
            if (planned_at<Record>(run, tag)) {
                if (const std::byte* next = read_planned(record, run.pos)) [[likely]] {
                    run.pos = next;
                    ++records;
                    v(record);
                    return true;
                }
            }
        }
        if (run.slot_of(tag) != D::slot) return false;
        // The runtime gets the cursor back to read it.
        r_.advance(run.pos, records);
        records = 0;
        read_at(record, run);
        v(record);
        run = r_.run();
        return true;
    }

    TraceReader r_;
    RecordType type_{};
    Records records_;
    std::uint64_t segment_starts_ = 0;  // r_.segment_starts() when the constants were last set
};

// Writes a trace of a generated header's DTD. close() finishes it; without
// close() nothing is left at `path`.
// Checks a record struct, record `index` of its trace, against the rules
// its DTD states (rules.hpp); appends what it breaks to `out`. Reading never
// checks rules: a reader that wants them calls this for each record, in trace
// order (orders compare with the record before).
template <typename Record>
void check_rules(RuleChecker& checker, const Record& record, std::uint64_t index, std::vector<RuleViolation>& out) {
    GenericRecord generic{static_cast<std::uint32_t>(Record::type), {}};
    detail::members(record, detail::ToGeneric{generic.values});
    checker.check(generic, index, out);
}

template <typename Codec>
class TypedWriter {
public:
    using RecordType = typename Codec::RecordType;

    explicit TypedWriter(const std::string& path, WriterOptions options = {}) : w_(path, Codec::dtd, options) {
        if (options.auto_window != 0) {
            auto_ = std::make_unique<AutoEncoder>(w_, options.auto_window);
            return;
        }
        if (!options.strict && options.narrow_after != 0) {
            for (std::uint32_t i = 0; i < Codec::dtd.record_count; ++i) runs_.emplace_back(Codec::dtd.records[i].field_count);
        }
    }

    // Writes one record; returns its byte offset within its section.
    template <detail::UserRecord Record>
    METATF_INLINE std::uint64_t write(const Record& o) {
        using D = detail::Desc<Codec, Record>;
        std::uint64_t offset = 0;
        if (auto_) [[unlikely]] {
            return write_auto(o);
        }
        if (!runs_.empty()) adapt(o);
        if constexpr (D::fast) {
            if (w_.initial(D::slot) && write_fixed<detail::Fixed<D, -1>>(o, offset)) return offset;
        }
        if constexpr (D::variant_count > 0 && D::plannable) {
            bool written = false;
            if (const int v = w_.variant(D::slot); v >= 0) {
                detail::with_variant<D>(v, [&]<typename L>() METATF_LAMBDA_INLINE { written = write_fixed<L>(o, offset); });
            }
            if (written) return offset;
        }
        if constexpr (D::plannable) {
            const RecordPlan& plan = w_.plan(D::slot);
            if (plan.usable && !plan.pools) {
                if (plan.plain ? write_planned<true>(o, plan, offset) : write_planned<false>(o, plan, offset)) return offset;
            }
        }
        return write_general(o);
    }

    void comment(std::string_view text) { auto_ ? auto_->comment(text) : w_.comment(text); }
    // Starts section `number`: the records that follow belong to it.
    void section(std::uint8_t number) { auto_ ? auto_->section(number) : w_.section(number); }
    // Metadata: changes a field's width or interpretation for the records
    // that follow (with auto_window, until the encoder changes it again).
    void set_width(RecordType record, std::uint32_t field, std::uint32_t width) {
        if (auto_) auto_->flush();
        w_.metadata(static_cast<std::uint32_t>(record), field, MetaOp::width, width);
    }
    void set_interpretation(RecordType record, std::uint32_t field, MetaOp op, std::uint64_t a = 0, std::int64_t b = 0) {
        if (auto_) auto_->flush();
        w_.metadata(static_cast<std::uint32_t>(record), field, op, a, static_cast<std::uint64_t>(b));
    }
    // The field stores its values (or their differences) in units of `unit`.
    void set_unit(RecordType record, std::uint32_t field, std::uint64_t unit) {
        if (auto_) auto_->flush();
        w_.metadata(static_cast<std::uint32_t>(record), field, MetaOp::unit, unit);
    }
    void close() {
        if (auto_) auto_->flush();
        w_.close();
    }

    TraceWriter& runtime() { return w_; }

private:
    template <typename Check, typename Record>
    static METATF_INLINE bool fits(const Record& o, Check check) {
        detail::members(o, check);
        return check.ok;
    }

    // Writes a record in a layout known at compile time (the initial one or
    // a variant), if its values fit.
    template <typename L, typename Record>
    METATF_INLINE bool write_fixed(const Record& o, std::uint64_t& offset) {
        using D = detail::Desc<Codec, Record>;
        FieldState* s = L::stateless ? nullptr : w_.states(D::slot);
        if (!fits<detail::FixedFits<L>>(o, {s})) return false;
        std::byte* p = w_.reserve_record<D::tag_width>(D::slot, L::size, offset);
        detail::members(o, detail::FixedStore<L>{p, s});
        w_.end_record();
        return true;
    }

    // Writes a record with its plan, if its values fit.
    template <bool Plain, typename Record>
    METATF_INLINE bool write_planned(const Record& o, const RecordPlan& plan, std::uint64_t& offset) {
        using D = detail::Desc<Codec, Record>;
        FieldState* s = w_.states(D::slot);
        detail::PlanEncode<D, Plain> encoded{plan.varying, s};
        detail::members(o, encoded);
        if (!encoded.ok) return false;
        std::byte* p = w_.reserve_planned<D::tag_width>(D::slot, plan.size, offset);
        detail::members(o, detail::PlanStore<D, Plain>{encoded, s, p});
        w_.end_record();
        return true;
    }

    // Field by field, under the encodings metadata has set; unless strict,
    // first changes the encodings of fields that cannot hold their value.
    template <typename Record>
    [[gnu::noinline]] std::uint64_t write_general(const Record& o) {
        if (!w_.options().strict && runs_.empty()) adapt(o);
        return write_fields(o);
    }

    // Writes the metadata that lets each field of the record hold its value
    // (WriterOptions::strict), and with narrow_after the metadata that
    // narrows a field whose last N values all fit fewer bytes.
    template <typename Record>
    [[gnu::noinline]] void adapt(const Record& o) {
        using D = detail::Desc<Codec, Record>;
        if constexpr (D::flat()) {
            // One value a field: each is decided as it is visited, with no table of needs.
            detail::members(o, FitEach<D>{*this});
        } else {
            detail::Needs<D> need{w_.states(D::slot)};
            detail::members(o, need);
            for (std::uint32_t f = 0; f < D::record.field_count; ++f) fit(D::slot, f, need.need[f].fit);
        }
    }

    // adapt() of a flat record: fit() of each integer field's one value.
    template <typename D>
    struct FitEach {
        TypedWriter& t;
        template <std::uint32_t I, typename Member>
        METATF_INLINE void field(detail::Index<I>, const Member& m) const {
            if constexpr (!std::is_same_v<Member, detail::Bytes> && !std::is_floating_point_v<Member>) {
                const FieldState& s = t.w_.states(D::slot)[I];
                if (!codes(s.kind)) t.fit(D::slot, I, fit_value(s, detail::bits_of(m), s.previous));
            }
        }
    };

    // The metadata field f of `slot` needs for a record whose values need `fit`.
    METATF_INLINE void fit(std::uint32_t slot, std::uint32_t f, const FieldFit& fit) {
        if (!fit.sized) return;
        if (fit.to_none) w_.metadata(slot, f, MetaOp::none);
        if (fit.to_unit_one) w_.metadata(slot, f, MetaOp::unit, 1);
        const FieldState& s = w_.states(slot)[f];
        if (!s.sized_by_width()) return;
        const std::uint32_t current = s.stored_width();
        if (fit.width > current) w_.metadata(slot, f, MetaOp::width, fit.width);
        // Never to width 0: a field that stores nothing only says its value repeats.
        if (!runs_.empty()) narrow(slot, f, std::max(fit.width, 1u), current);
    }

    // narrow_after's count for field f of `slot`, whose value needs `width` of its `current` bytes.
    void narrow(std::uint32_t slot, std::uint32_t f, std::uint32_t width, std::uint32_t current) {
        detail::NarrowRun& run = runs_[slot][f];
        if (width >= current) {
            run = {};
        } else if (run.widest = std::max(run.widest, width); ++run.count == w_.options().narrow_after) {
            w_.metadata(slot, f, MetaOp::width, run.widest);
            run = {};
        }
    }

    // Hands the record to the AutoEncoder (WriterOptions::auto_window).
    template <typename Record>
    [[gnu::noinline]] std::uint64_t write_auto(const Record& o) {
        generic_.slot = detail::Desc<Codec, Record>::slot;
        generic_.values.clear();
        detail::members(o, detail::ToGeneric{generic_.values});
        auto_->write(generic_);
        return 0;
    }

    template <typename Record>
    std::uint64_t write_fields(const Record& o) {
        using D = detail::Desc<Codec, Record>;
        const std::uint64_t offset = w_.begin_record(D::slot);
        detail::members(o, detail::Encode<D>(w_, w_.states(D::slot)));
        w_.end_record();
        return offset;
    }

    TraceWriter w_;
    std::vector<std::vector<detail::NarrowRun>> runs_;  // by slot and field; empty unless widths follow the data
    std::unique_ptr<AutoEncoder> auto_;                 // with WriterOptions::auto_window
    GenericRecord generic_;                             // write_auto()'s record, its buffers kept
};

}  // namespace metatf::rt
