// Random traces for any generated codec: random records that the writer's
// current encodings accept, random metadata changes, section switches and
// comments; then a read back through the generated reader that must return
// exactly what was written.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include <metatf/io/generic.hpp>
#include <metatf/io/reader.hpp>
#include <metatf/io/writer.hpp>
#include <metatf/typed.hpp>

namespace metatf::test {

namespace rt = metatf::rt;

template <typename Tuple>
struct variant_of;
template <typename... T>
struct variant_of<std::tuple<T...>> {
    using type = std::variant<T...>;
};

// Fields whose values size other fields: repeat counts and lengths. They keep
// small values and are left out of random metadata changes.
inline std::set<std::uint32_t> sizing_fields(const rt::RecordDesc& r) {
    std::set<std::uint32_t> out;
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        if (r.layout[i].op == rt::LayoutStep::repeat) out.insert(r.layout[i].index);
    }
    for (std::uint32_t f = 0; f < r.field_count; ++f) {
        if (r.fields[f].width_from != rt::no_field) out.insert(static_cast<std::uint32_t>(r.fields[f].width_from));
    }
    return out;
}

class Random {
public:
    explicit Random(std::uint64_t seed) : rng_(seed) {}
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
    std::uint64_t bits() { return rng_(); }
    bool chance(unsigned percent) { return below(100) < percent; }

    // A value that `width` bytes hold, unsigned or two's complement.
    std::uint64_t fitting(unsigned width, bool is_signed) {
        if (width == 0) return 0;
        std::uint64_t v = bits();
        if (width < 8) v &= (std::uint64_t(1) << (8 * width)) - 1;
        return is_signed ? rt::sign_extend(v, width) : v;
    }
    // Small values more often, as real traces have.
    std::uint64_t skewed(unsigned width, bool is_signed) {
        const unsigned w = chance(70) ? std::min(width, 1u) : width;
        return fitting(w, is_signed);
    }

private:
    std::mt19937_64 rng_;
};

// Fills a record struct through visit_fields with values the writer accepts
// under `states` (a copy of the writer's, advanced as the writer will advance).
class Filler {
public:
    Filler(Random& random, std::vector<rt::FieldState> states, std::set<std::uint32_t> sizing,
           std::deque<std::vector<std::byte>>& arena, const rt::LivePools& pools)
        : random_(random), states_(std::move(states)), sizing_(std::move(sizing)), arena_(arena), pools_(pools) {}

    void field(std::uint32_t i, std::uint64_t& v) { v = next(i); }
    void field(std::uint32_t i, std::int64_t& v) { v = static_cast<std::int64_t>(next(i)); }
    void field(std::uint32_t i, double& v) {
        const rt::FieldState& s = states_[i];
        // Values the field's width holds exactly.
        v = s.width == 4 ? static_cast<double>(static_cast<float>(random_.below(1 << 20)) / 64.0f)
                         : static_cast<double>(random_.bits() >> 11) / 1024.0;
    }
    void field(std::uint32_t i, std::span<const std::byte>& v) {
        const rt::FieldState& s = states_[i];
        const std::uint64_t n =
            s.desc->width_from == rt::no_field ? s.width : last_[static_cast<std::uint32_t>(s.desc->width_from)];
        auto& bytes = arena_.emplace_back(n);
        for (auto& b : bytes) b = static_cast<std::byte>(random_.below(256));
        v = bytes;
    }
    template <typename Vector, typename Body>
    void repeat(std::uint32_t count, Vector& elements, Body&& body) {
        elements.resize(last_[count]);
        for (auto& e : elements) body(e);
    }

private:
    // What `stored` stands for in the field's units (up to 4: the stored
    // number loses two bits, so that the product cannot overflow).
    static std::uint64_t in_units(const rt::FieldState& s, std::uint64_t stored, bool is_signed) {
        if (s.unit == 1) return stored;
        const std::uint64_t quarter = is_signed ? static_cast<std::uint64_t>(static_cast<std::int64_t>(stored) >> 2) : stored >> 2;
        return quarter * s.unit;
    }

    std::uint64_t next(std::uint32_t i) {
        rt::FieldState& s = states_[i];
        if (s.desc->fixed) return last_[i] = s.desc->fixed_value;  // its metadata keeps it storable (fixed_metadata())
        const bool is_signed = s.desc->type == rt::Type::signed_int;
        std::uint64_t v = 0;
        // A split field's elements are drawn as its kept interpretation's stored integers.
        const unsigned width = s.stored_width();
        switch (rt::stored_as(s)) {
            case rt::Interp::none: v = sizing_.count(i) ? random_.below(4) : in_units(s, random_.skewed(width, is_signed), is_signed); break;
            case rt::Interp::intern: v = random_.below(4); break;  // a string's length (only lengths are interned)
            case rt::Interp::section_offset: v = random_.skewed(s.width, false); break;  // an offset: unsigned
            case rt::Interp::default_value: v = s.value; break;
            case rt::Interp::base_offset: v = s.value + in_units(s, random_.skewed(width, true), true); break;
            case rt::Interp::delta: v = s.previous += in_units(s, random_.skewed(width, true), true); break;
            case rt::Interp::stride: v = s.previous += static_cast<std::uint64_t>(s.stride); break;
            case rt::Interp::section_stride: v = random_.skewed(s.restore, is_signed); break;
            case rt::Interp::live: {  // mostly a live value, some of them too far back for the width; else any
                const std::uint64_t live = pools_.live(s.pool);
                v = live > 0 && random_.chance(80) ? *pools_.value_back(s.pool, random_.below(std::min<std::uint64_t>(live, 300)))
                                                   : random_.bits();
                break;
            }
            case rt::Interp::predict: {  // values the pool or a predictor guesses (a repeat, a step), and any
                const std::uint64_t live = s.pool == 0 ? 0 : pools_.live(s.pool);
                const std::uint64_t last = last_[i], pick = random_.below(5);
                if (pick == 0 && live > 0) {
                    v = *pools_.value_back(s.pool, random_.below(std::min<std::uint64_t>(live, 300)));
                } else {
                    v = pick == 1 ? last : pick == 2 ? last + 16 : pick == 3 ? last - random_.skewed(2, false) : random_.bits();
                }
                break;
            }
        }
        if (sizing_.count(i) && s.kind == rt::Interp::none && !rt::fits_unsigned(v, s.width)) v = 0;
        last_[i] = v;
        return v;
    }

    Random& random_;
    std::vector<rt::FieldState> states_;
    std::set<std::uint32_t> sizing_;
    std::deque<std::vector<std::byte>>& arena_;
    const rt::LivePools& pools_;
    std::map<std::uint32_t, std::uint64_t> last_;
};

struct TraceShape {
    rt::WriterOptions options;
    int steps = 2000;
    std::uint64_t seed = 1;
    // Percent of the metadata steps of a record type with variants that set
    // one of them in full (RecordDesc::variants).
    unsigned steer_to_variants = 0;
    // Read the trace a third time with the DTD-driven decoder (decode_generic).
    bool generic_check = false;
};

// Writes a random trace with the generated Writer of `Codec`'s namespace and
// reads it back with its Reader; every record must come back equal.
template <typename Records, typename Writer, typename Reader, typename RecordType, typename Comment, typename Section,
          typename Metadata>
class RoundTrip {
public:
    using Any = typename variant_of<Records>::type;

    RoundTrip(const rt::DtdDesc& dtd, TraceShape shape) : dtd_(dtd), shape_(shape), random_(shape.seed) {
        // Sections that fields stride through from the start hold values, never records.
        for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
            for (std::uint32_t f = 0; f < dtd.records[i].field_count; ++f) {
                const rt::Encoding& e = dtd.records[i].fields[f].initial;
                if (e.kind == rt::Interp::section_stride) value_sections_.insert(e.section);
            }
        }
    }

    void run(const std::string& path) {
        {
            Writer w(path, shape_.options);
            // Split streams: the writer routes each field before the first record.
            for (const rt::SplitField& f : rt::split_fields(dtd_, shape_.options.split)) {
                const rt::Encoding& e = dtd_.records[f.slot].fields[f.field].initial;
                REQUIRE(e.restore != 0);
                // `split` where the field's interpretation can go with it.
                const bool keeps = e.kind == rt::Interp::none || e.kind == rt::Interp::base_offset || e.kind == rt::Interp::delta;
                written_.push_back(Any(std::in_place_type<Metadata>, Metadata{static_cast<RecordType>(f.slot), f.field,
                                                                              keeps ? rt::MetaOp::split : rt::MetaOp::section_stride, f.section, 1}));
            }
            for (int i = 0; i < shape_.steps; ++i) step(w);
            w.close();
        }
        Reader r(path);
        std::size_t n = 0;
        for (const Any& want : written_) {
            INFO("record " << n);
            REQUIRE(r.next());
            REQUIRE(static_cast<std::uint32_t>(r.type()) == static_cast<std::uint32_t>(want.index()));
            std::visit([&](const auto& w) { check(r, w); }, want);
            // The reader follows the metadata to the same variant as the writer.
            if (const auto v = writer_variant_.find(n); v != writer_variant_.end()) {
                CHECK(r.runtime().variant(static_cast<std::uint32_t>(r.type())) == v->second);
            }
            ++n;
        }
        CHECK_FALSE(r.next());
        records_read = n;

        // The visitor interface decodes untouched records in its own loop: it must agree too.
        Reader again(path);
        std::size_t k = 0;
        again.visit([&](const auto& got) {
            using T = std::decay_t<decltype(got)>;
            INFO("visited record " << k);
            REQUIRE(k < written_.size());
            const T* want = std::get_if<T>(&written_[k]);
            REQUIRE(want != nullptr);
            compare(got, *want);
            ++k;
        });
        CHECK(k == written_.size());
        if (shape_.generic_check) check_generic(path);
    }

    std::size_t records_read = 0;
    // The records written while their type's encodings were a variant.
    std::size_t variant_records() const {
        return static_cast<std::size_t>(std::ranges::count_if(writer_variant_, [](const auto& v) { return v.second >= 0; }));
    }

private:
    template <typename T>
    void check(Reader& r, const T& want) {
        compare(r.template get<T>(), want);
    }

    template <typename T>
    void compare(const T& got, const T& want) {
        if constexpr (std::is_same_v<T, Comment>) {
            CHECK(got.text == want.text);
        } else if constexpr (std::is_same_v<T, Section>) {
            CHECK(got.number == want.number);
        } else if constexpr (std::is_same_v<T, Metadata>) {
            CHECK(got.record == want.record);
            CHECK(got.field == want.field);
            CHECK(got.op == want.op);
            CHECK(got.a == want.a);
            CHECK(got.b == want.b);
        } else {
            CHECK(got == want);
        }
    }

    // The DTD-driven decoder, which shares no code with the generated
    // reader's paths, must find the values that were written; every third
    // record is only skipped (skip_generic), which must keep the state the
    // records after it need (deltas, pools, predictions) all the same.
    void check_generic(const std::string& path) {
        rt::TraceReader reader(path, dtd_);
        rt::GenericRecord got, scratch;
        std::size_t n = 0;
        while (reader.begin_record()) {
            if (n % 3 == 1) {
                REQUIRE(n < written_.size());
                REQUIRE(reader.slot() == written_[n].index());
                rt::skip_generic(reader, scratch);
                ++n;
                continue;
            }
            rt::decode_generic(reader, got);
            INFO("record " << n << " decoded generically");
            REQUIRE(n < written_.size());
            REQUIRE(got.slot == written_[n].index());
            std::visit([&](const auto& want) { compare_generic(got, want); }, written_[n]);
            ++n;
        }
        CHECK(n == written_.size());
    }

    template <typename T>
    void compare_generic(const rt::GenericRecord& got, const T& want) {
        if constexpr (rt::detail::UserRecord<T>) {
            std::vector<rt::GenericValue> expected;
            rt::detail::members(want, rt::detail::ToGeneric{expected});
            REQUIRE(got.values.size() == expected.size());
            for (std::size_t i = 0; i < expected.size(); ++i) {
                const rt::GenericValue &g = got.values[i], &e = expected[i];
                CHECK(g.field == e.field);
                CHECK(g.integer == e.integer);
                CHECK(std::memcmp(&g.real, &e.real, sizeof(double)) == 0);
                CHECK(std::ranges::equal(g.bytes, e.bytes));
            }
        }
    }

    bool allowed_here(const rt::RecordDesc& r, int section) const {
        return r.predefined == rt::Predefined::none && (r.section == 0 || r.section == section);
    }

    void step(Writer& w) {
        const unsigned roll = static_cast<unsigned>(random_.below(100));
        if (roll < 4) return comment(w);
        if (roll < 8) return switch_section(w);
        if (roll < 16) return change_metadata(w);
        write_record(w);
    }

    void comment(Writer& w) {
        std::string& text = texts_.emplace_back(random_.below(256), 'x');
        for (char& c : text) c = static_cast<char>('a' + random_.below(26));
        w.comment(text);
        written_.push_back(Any(std::in_place_type<Comment>, Comment{text}));
    }

    void switch_section(Writer& w) {
        std::vector<std::uint8_t> choices{0};
        for (std::uint32_t i = 0; i < dtd_.section_count; ++i) {
            if (!value_sections_.count(dtd_.sections[i].number)) choices.push_back(dtd_.sections[i].number);
        }
        const std::uint8_t n = choices[random_.below(choices.size())];
        w.section(n);
        section_ = n;
        record_sections_.insert(n);
        written_.push_back(Any(std::in_place_type<Section>, Section{n}));
    }

    std::vector<std::uint32_t> slots_here() const {
        std::vector<std::uint32_t> out;
        for (std::uint32_t i = 0; i < dtd_.record_count; ++i) {
            if (allowed_here(dtd_.records[i], section_)) out.push_back(i);
        }
        return out;
    }

    void change_metadata(Writer& w) {
        const auto slots = slots_here();
        if (slots.empty()) return;
        const std::uint32_t slot = slots[random_.below(slots.size())];
        const rt::RecordDesc& r = dtd_.records[slot];
        if (r.field_count < 2) return;  // only the tag (PTF's gr, ts, te): nothing to change
        if (r.variant_count != 0 && random_.chance(shape_.steer_to_variants)) return steer(w, slot);
        const auto sizing = sizing_fields(r);
        const std::uint32_t field = 1 + static_cast<std::uint32_t>(random_.below(r.field_count - 1));
        const rt::FieldState& s = w.runtime().states(slot)[field];
        if (s.desc->fixed) return fixed_metadata(w, slot, field, *s.desc);
        if (sizing.count(field)) {  // counts and lengths: stored small, interned, or back to their DTD setting
            if (!rt::table_section(dtd_, -1) && !rt::intern_problem(r, field) && random_.chance(25)) {
                w.set_interpretation(static_cast<RecordType>(slot), field, rt::MetaOp::intern);
                written_.push_back(Any(std::in_place_type<Metadata>,
                                       Metadata{static_cast<RecordType>(slot), field, rt::MetaOp::intern, 0, 0}));
            } else if (random_.chance(50)) {
                const auto width = 1 + static_cast<std::uint32_t>(random_.below(2));
                w.set_width(static_cast<RecordType>(slot), field, width);
                written_.push_back(Any(std::in_place_type<Metadata>,
                                       Metadata{static_cast<RecordType>(slot), field, rt::MetaOp::width, width, 0}));
            } else {
                w.set_interpretation(static_cast<RecordType>(slot), field, rt::MetaOp::none);
                written_.push_back(Any(std::in_place_type<Metadata>,
                                       Metadata{static_cast<RecordType>(slot), field, rt::MetaOp::none, 0, 0}));
            }
            return;
        }
        const bool small = shape_.options.cls == rt::Class::bits32;
        const auto arg = [&] { return random_.fitting(small ? 3 : 8, s.desc->type == rt::Type::signed_int); };
        rt::MetaOp op = rt::MetaOp::width;
        std::uint64_t a = 0, b = 0;
        const rt::Type t = s.desc->type;
        if (t == rt::Type::floating) {
            a = random_.chance(50) ? 4 : 8;
        } else if (t == rt::Type::bytes) {
            if (s.desc->width_from != rt::no_field) return;
            a = random_.below(6);
        } else {
            op = random_.chance(5) ? rt::MetaOp::split : static_cast<rt::MetaOp>(random_.below(12));
            switch (op) {
                case rt::MetaOp::unit: a = random_.chance(25) ? 1 : 2 + random_.below(3); break;
                case rt::MetaOp::live:
                case rt::MetaOp::feed:
                case rt::MetaOp::predict:
                    if (rt::table_section(dtd_, -1)) return;  // a DTD with tables has no pools or predictions
                    if (op != rt::MetaOp::feed && s.restore == 0) return;  // a code needs a width
                    a = (op == rt::MetaOp::live ? 1 : 0) + random_.below(2);
                    if (op == rt::MetaOp::predict) b = random_.chance(50) ? rt::all_predictors : random_.below(rt::all_predictors + 1);
                    break;
                case rt::MetaOp::width: a = (rt::codes(s.kind) ? 1 : 0) + random_.below(rt::codes(s.kind) ? 8 : 9); break;
                case rt::MetaOp::none:
                case rt::MetaOp::intern: break;  // not drawn: lengths only (above)
                case rt::MetaOp::base_offset:
                case rt::MetaOp::delta:
                case rt::MetaOp::default_value: a = arg(); break;
                case rt::MetaOp::stride: a = arg(); b = random_.fitting(1, true); break;
                case rt::MetaOp::split:
                case rt::MetaOp::section_offset:
                case rt::MetaOp::section_stride: {
                    const bool strided = op != rt::MetaOp::section_offset;
                    const rt::Interp kept = rt::stored_as(s);  // what a split keeps
                    if (op == rt::MetaOp::split && kept != rt::Interp::none && kept != rt::Interp::base_offset && kept != rt::Interp::delta) return;
                    std::vector<std::uint8_t> targets;
                    for (std::uint32_t i = 0; i < dtd_.section_count; ++i) {
                        const std::uint8_t n = dtd_.sections[i].number;
                        if (!strided || !record_sections_.count(n)) targets.push_back(n);
                    }
                    if (targets.empty() || (strided && s.restore == 0)) return;
                    a = targets[random_.below(targets.size())];
                    b = 1 + random_.below(3);
                    if (strided) value_sections_.insert(static_cast<std::uint8_t>(a));
                    break;
                }
            }
        }
        announce(w, slot, field, op, a, b);
    }

    // Writes the metadata record `op` of `field` and remembers it.
    void announce(Writer& w, std::uint32_t slot, std::uint32_t field, rt::MetaOp op, std::uint64_t a, std::uint64_t b) {
        const auto type = static_cast<RecordType>(slot);
        if (op == rt::MetaOp::width) {
            w.set_width(type, field, static_cast<std::uint32_t>(a));
        } else if (op == rt::MetaOp::unit) {
            w.set_unit(type, field, a);
        } else {
            w.set_interpretation(type, field, op, a, static_cast<std::int64_t>(b));
        }
        const bool two = op == rt::MetaOp::stride || op == rt::MetaOp::section_stride || op == rt::MetaOp::split || op == rt::MetaOp::predict;
        written_.push_back(Any(std::in_place_type<Metadata>, Metadata{type, field, op, a, two ? b : 0}));
    }

    // The metadata that makes record type `slot` one of its variants: for
    // each field that differs, no feed, unit 1, the variant's interpretation
    // and its width.
    void steer(Writer& w, std::uint32_t slot) {
        const rt::RecordDesc& r = dtd_.records[slot];
        const auto k = static_cast<std::uint32_t>(random_.below(r.variant_count));
        for (std::uint32_t f = 1; f < r.field_count; ++f) {
            const rt::Encoding& e = r.variants[k].fields[f];
            const rt::FieldState& s = w.runtime().states(slot)[f];
            if (s.feed != 0) announce(w, slot, f, rt::MetaOp::feed, 0, 0);
            if (s.unit != 1) announce(w, slot, f, rt::MetaOp::unit, 1, 0);
            const bool same = s.kind == e.kind && s.value == e.value && s.stride == e.stride && s.section == e.section;
            if (!same) announce(w, slot, f, rt::op_of(e.kind), e.kind == rt::Interp::section_offset ? e.section : e.value, static_cast<std::uint64_t>(e.stride));
            if (rt::stores_bytes(e.kind) && r.fields[f].width_from == rt::no_field && s.width != e.width) {
                announce(w, slot, f, rt::MetaOp::width, e.width, 0);
            }
        }
        // Variants need a trace in the machine's (little-endian) byte order.
        const bool native = shape_.options.order == rt::ByteOrder::little;
        REQUIRE(w.runtime().variant(slot) == (native ? static_cast<int>(k) : -1));
    }

    // A field whose value the DTD fixes: a width that holds the value, a
    // default of the value, or none.
    void fixed_metadata(Writer& w, std::uint32_t slot, std::uint32_t field, const rt::FieldDesc& f) {
        const bool is_signed = f.type == rt::Type::signed_int;
        std::uint32_t least = 1;
        while (least < 8 && !(is_signed ? rt::fits_signed(f.fixed_value, least) : rt::fits_unsigned(f.fixed_value, least))) ++least;
        const auto type = static_cast<RecordType>(slot);
        Metadata m{type, field, rt::MetaOp::none, 0, 0};
        switch (random_.below(3)) {
            case 0:
                m.op = rt::MetaOp::width;
                m.a = least + random_.below(9 - least);
                w.set_width(type, field, static_cast<std::uint32_t>(m.a));
                break;
            case 1:
                m.op = rt::MetaOp::default_value;
                m.a = f.fixed_value;
                w.set_interpretation(type, field, m.op, m.a);
                break;
            default: w.set_interpretation(type, field, m.op); break;
        }
        written_.push_back(Any(std::in_place_type<Metadata>, m));
    }

    void write_record(Writer& w) {
        const auto slots = slots_here();
        if (slots.empty()) return;
        const std::uint32_t slot = slots[random_.below(slots.size())];
        write_slot(w, slot, std::make_index_sequence<std::tuple_size_v<Records>>{});
    }

    template <std::size_t... I>
    void write_slot(Writer& w, std::uint32_t slot, std::index_sequence<I...>) {
        (try_write<I>(w, slot), ...);
    }

    template <std::size_t I>
    void try_write(Writer& w, std::uint32_t slot) {
        using T = std::tuple_element_t<I, Records>;
        if constexpr (!std::is_same_v<T, Comment> && !std::is_same_v<T, Section> && !std::is_same_v<T, Metadata>) {
            if (slot != I) return;
            const rt::RecordDesc& r = dtd_.records[slot];
            rt::FieldState* states = w.runtime().states(slot);
            Filler filler(random_, std::vector<rt::FieldState>(states, states + r.field_count), sizing_fields(r), arena_,
                          w.runtime().pools());
            T record{};
            visit_fields(record, filler);
            writer_variant_[written_.size()] = w.runtime().variant(slot);
            w.write(record);
            written_.push_back(Any(std::in_place_type<T>, record));
        }
    }

    const rt::DtdDesc& dtd_;
    TraceShape shape_;
    Random random_;
    int section_ = 0;
    std::set<std::uint8_t> record_sections_{0};
    std::set<std::uint8_t> value_sections_;
    std::vector<Any> written_;
    std::map<std::size_t, int> writer_variant_;  // per user record written: the writer's variant(slot)
    std::deque<std::vector<std::byte>> arena_;
    std::deque<std::string> texts_;
};

}  // namespace metatf::test
