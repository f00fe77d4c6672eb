// The two encodings of the realistic workload (realistic_workload.hpp) and
// their hand-written codec.
//
// heap64: the DTD's initial encoding plus what 64-bit values need, set by
// metadata at the start: every address field 8 bytes, thread stored (4
// bytes, interpretation none), time stored (8 bytes, none). The hand-written
// codec knows this layout at compile time; its reader checks that the trace
// starts with exactly these metadata records and has no others.
//
// heap64_compact: narrow fields, set at the start (address and time as
// deltas from the previous value of the same record type and field, thread
// as an offset from the main thread's id), and widened by a metadata record
// just before a record whose value does not fit, then narrowed back just
// after it. Where those records fall depends on the data, so the
// hand-written reader keeps each field's width and interpretation in
// variables, updates them on every metadata record and decodes with them.
// Both writers take the widening decisions from the same CompactPlanner.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <cstring>
#include <string>
#include <type_traits>

#include "handwritten.hpp"
#include "hw_container.hpp"
#include "realistic_workload.hpp"

namespace bench {

// The generated code's slots of the three record types the workload uses, by Kind.
inline constexpr std::uint32_t slot_of[] = {3, 4, 6};
inline constexpr std::uint8_t tag_of[] = {tag::alloc, tag::free, tag::realloc_alloc_free};

// heap64: what 64-bit values need. Field numbers: alloc (size 1, address 2,
// thread 3, time 5), free (address 1, thread 2, time 4), reallocAllocFree
// (size 1, oldAddress 2, newAddress 3, thread 4, time 6).
inline constexpr Change heap64_changes[] = {
    {tag::alloc, 3, 2, op::width, 8, 0},
    {tag::alloc, 3, 3, op::none, 0, 0},
    {tag::alloc, 3, 5, op::none, 0, 0},
    {tag::free, 4, 1, op::width, 8, 0},
    {tag::free, 4, 2, op::none, 0, 0},
    {tag::free, 4, 4, op::none, 0, 0},
    {tag::realloc_alloc_free, 6, 2, op::width, 8, 0},
    {tag::realloc_alloc_free, 6, 3, op::width, 8, 0},
    {tag::realloc_alloc_free, 6, 4, op::none, 0, 0},
    {tag::realloc_alloc_free, 6, 6, op::none, 0, 0},
};

// heap64_compact, at the start: size 2 bytes; addresses delta from 0, 4
// bytes (the width they had); thread baseOffset main_tid, 1 byte; time
// delta from start_time, 2 bytes (4 for the rarer reallocs). An
// interpretation that stores bytes brings back the field's last width (4 for
// thread, 8 for time), hence the widths after it. These narrow widths are
// also compact64's `narrow` below; were they to differ, the two writers'
// files would differ, which the benchmark checks at startup.
inline constexpr Change heap64_compact_changes[] = {
    {tag::alloc, 3, 1, op::width, 2, 0},
    {tag::alloc, 3, 2, op::delta, 0, 0},
    {tag::alloc, 3, 3, op::base_offset, main_tid, 0},
    {tag::alloc, 3, 3, op::width, 1, 0},
    {tag::alloc, 3, 5, op::delta, start_time, 0},
    {tag::alloc, 3, 5, op::width, 2, 0},
    {tag::free, 4, 1, op::delta, 0, 0},
    {tag::free, 4, 2, op::base_offset, main_tid, 0},
    {tag::free, 4, 2, op::width, 1, 0},
    {tag::free, 4, 4, op::delta, start_time, 0},
    {tag::free, 4, 4, op::width, 2, 0},
    {tag::realloc_alloc_free, 6, 1, op::width, 2, 0},
    {tag::realloc_alloc_free, 6, 2, op::delta, 0, 0},
    {tag::realloc_alloc_free, 6, 3, op::delta, 0, 0},
    {tag::realloc_alloc_free, 6, 4, op::base_offset, main_tid, 0},
    {tag::realloc_alloc_free, 6, 4, op::width, 1, 0},
    {tag::realloc_alloc_free, 6, 6, op::delta, start_time, 0},
    {tag::realloc_alloc_free, 6, 6, op::width, 4, 0},
};

inline std::span<const Change> start_changes(Encoding e) {
    if (e == Encoding::heap64) return heap64_changes;
    if (e == Encoding::heap64_compact) return heap64_compact_changes;
    if (e == Encoding::compact) return compact_changes;
    return {};
}

// ---- the widening decisions, shared by both writers ------------------------------------

namespace compact64 {

enum class Source : std::uint8_t { size, address, new_address, thread, time };
enum class How : std::uint8_t { none, base_offset, delta };

// A stored field of a record type under heap64_compact, in layout order.
struct Stored {
    std::uint8_t field;
    std::uint8_t narrow;  // its width between outliers
    How how;
    Source from;
    std::uint64_t origin;  // baseOffset: the base; delta: the initial previous value
};

inline constexpr Stored alloc_fields[] = {{1, 2, How::none, Source::size, 0},
                                          {2, 4, How::delta, Source::address, 0},
                                          {3, 1, How::base_offset, Source::thread, main_tid},
                                          {5, 2, How::delta, Source::time, start_time}};
inline constexpr Stored free_fields[] = {{1, 4, How::delta, Source::address, 0},
                                         {2, 1, How::base_offset, Source::thread, main_tid},
                                         {4, 2, How::delta, Source::time, start_time}};
inline constexpr Stored realloc_fields[] = {{1, 2, How::none, Source::size, 0},
                                            {2, 4, How::delta, Source::address, 0},
                                            {3, 4, How::delta, Source::new_address, 0},
                                            {4, 1, How::base_offset, Source::thread, main_tid},
                                            {6, 4, How::delta, Source::time, start_time}};
inline constexpr std::span<const Stored> fields_of[] = {alloc_fields, free_fields, realloc_fields};
inline constexpr std::size_t max_fields = 5;

inline bool fits(std::uint64_t raw, unsigned width, bool is_signed) {
    if (width >= 8) return true;
    if (!is_signed) return raw >> (8 * width) == 0;
    const auto v = static_cast<std::int64_t>(raw);
    const std::int64_t limit = std::int64_t(1) << (8 * width - 1);
    return v >= -limit && v < limit;
}

// One record's plan: the integer each stored field holds and its width for
// this record (the narrow width, or 2, 4 or 8 bytes when that is too narrow).
struct Plan {
    std::span<const Stored> fields;
    std::array<std::uint64_t, max_fields> raw;
    std::array<std::uint8_t, max_fields> width;
    bool widened;
};

class Planner {
public:
    Planner() {
        for (std::size_t k = 0; k < 3; ++k) {
            for (std::size_t i = 0; i < fields_of[k].size(); ++i) previous_[k][i] = fields_of[k][i].origin;
        }
    }

    Plan plan(const Event& e) {
        switch (e.kind) {
            case Kind::alloc: return fill<alloc_fields>(e, previous_[0]);
            case Kind::free: return fill<free_fields>(e, previous_[1]);
            case Kind::realloc: return fill<realloc_fields>(e, previous_[2]);
        }
        return {};
    }

private:
    // One record type's fields, a constant, so that the loop unrolls and each field's treatment is known.
    template <const auto& Fields>
    static Plan fill(const Event& e, std::uint64_t* previous) {
        Plan p{Fields, {}, {}, false};
        for (std::size_t i = 0; i < std::size(Fields); ++i) {
            const Stored& f = Fields[i];
            const std::uint64_t v = value(e, f.from);
            std::uint64_t raw = v;
            if (f.how == How::base_offset) raw = v - f.origin;
            if (f.how == How::delta) {
                raw = v - previous[i];
                previous[i] = v;
            }
            unsigned w = f.narrow;
            while (!fits(raw, w, f.how != How::none)) w = w < 2 ? 2 : 2 * w;
            p.raw[i] = raw;
            p.width[i] = static_cast<std::uint8_t>(w);
            p.widened |= w != f.narrow;
        }
        return p;
    }

    static std::uint64_t value(const Event& e, Source s) {
        switch (s) {
            case Source::size: return e.size;
            case Source::address: return e.address;
            case Source::new_address: return e.new_address;
            case Source::thread: return e.thread;
            case Source::time: return e.time;
        }
        return 0;
    }
    std::uint64_t previous_[3][max_fields] = {};
};

// Calls fn(change) for each width change a plan needs: before the record
// (after false) the widths it needs, after it the narrow widths again.
template <typename Fn>
void each_width_change(const Event& e, const Plan& plan, bool after, Fn&& fn) {
    const auto k = static_cast<std::size_t>(e.kind);
    for (std::size_t i = 0; i < plan.fields.size(); ++i) {
        if (plan.width[i] == plan.fields[i].narrow) continue;
        const std::uint64_t w = after ? plan.fields[i].narrow : plan.width[i];
        fn(Change{tag_of[k], slot_of[k], plan.fields[i].field, op::width, w, 0});
    }
}

}  // namespace compact64

// ---- the hand-written writer ----------------------------------------------------------

namespace hw {

inline std::size_t encode_heap64(std::byte* p, const Event& e) {
    switch (e.kind) {
        case Kind::alloc:
            p[0] = std::byte{tag::alloc};
            put32(p + 1, e.size);
            put64(p + 5, e.address);
            put32(p + 13, e.thread);
            put64(p + 17, e.time);
            return 25;
        case Kind::free:
            p[0] = std::byte{tag::free};
            put64(p + 1, e.address);
            put32(p + 9, e.thread);
            put64(p + 13, e.time);
            return 21;
        case Kind::realloc:
            p[0] = std::byte{tag::realloc_alloc_free};
            put32(p + 1, e.size);
            put64(p + 5, e.address);
            put64(p + 13, e.new_address);
            put32(p + 21, e.thread);
            put64(p + 25, e.time);
            return 33;
    }
    fail("bad event");
}

inline void put_widths(TraceOut& out, const Event& e, const compact64::Plan& plan, bool after) {
    compact64::each_width_change(e, plan, after, [&](const Change& c) { out.commit_metadata(encode_change(out.at(), c)); });
}

// A record under the plan's widths: each value stored as 8 bytes, the cursor
// moved by its width (the buffer has room past the record).
inline std::size_t encode_planned(std::byte* p, const Event& e, const compact64::Plan& plan) {
    p[0] = std::byte{tag_of[static_cast<std::size_t>(e.kind)]};
    std::size_t n = 1;
    for (std::size_t i = 0; i < plan.fields.size(); ++i) {
        put64(p + n, plan.raw[i]);
        n += plan.width[i];
    }
    return n;
}

}  // namespace hw

template <Encoding E>
void write_heap64_handwritten(const std::string& path, const Container& c, std::span<const Event> events) {
    hw::TraceOut out(path, c);
    for (const Change& m : start_changes(E)) out.commit_metadata(hw::encode_change(out.at(), m));
    [[maybe_unused]] compact64::Planner planner;
    for (const Event& e : events) {
        if constexpr (E == Encoding::heap64) {
            out.commit(hw::encode_heap64(out.at(), e));
        } else {
            const compact64::Plan plan = planner.plan(e);
            if (plan.widened) hw::put_widths(out, e, plan, false);
            out.commit(hw::encode_planned(out.at(), e, plan));
            if (plan.widened) hw::put_widths(out, e, plan, true);
        }
    }
    out.close();
}

// ---- the hand-written readers -----------------------------------------------------------

namespace hw {

// heap64: the layout is fixed once the start's metadata records have been
// read; each must be the one expected, and no other may come.
class Heap64Reader {
public:
    std::uint64_t decode(const std::byte* p, const std::byte* end, Checksum& sum) {
        std::uint64_t n = 0;
        if (!started_) {
            p = start(p, end);
            n = std::size(heap64_changes);
        }
        for (; p != end; ++n) {
            const auto left = static_cast<std::size_t>(end - p);
            switch (std::to_integer<std::uint8_t>(p[0])) {
                case tag::alloc:
                    if (left < 25) fail("truncated alloc");
                    sum.alloc(get32(p + 1), get64(p + 5), get64(p + 17), get32(p + 13));
                    p += 25;
                    break;
                case tag::free:
                    if (left < 21) fail("truncated free");
                    sum.free(get64(p + 1), get64(p + 13), get32(p + 9));
                    p += 21;
                    break;
                case tag::realloc_alloc_free:
                    if (left < 33) fail("truncated realloc");
                    sum.realloc(get32(p + 1), get64(p + 5), get64(p + 13), get64(p + 25), get32(p + 21));
                    p += 33;
                    break;
                default: fail("unknown tag " + std::to_string(std::to_integer<unsigned>(p[0])) + " (or metadata after the start)");
            }
        }
        return n;
    }

private:
    // The first records must be the metadata that sets the layout.
    [[gnu::noinline]] const std::byte* start(const std::byte* p, const std::byte* end) {
        for (const Change& c : heap64_changes) {
            std::byte want[20];
            const std::size_t n = encode_change(want, c);
            if (static_cast<std::size_t>(end - p) < n || std::memcmp(p, want, n) != 0) {
                fail("a trace that does not start with the heap64 metadata");
            }
            p += n;
        }
        started_ = true;
        return p;
    }
    bool started_ = false;
};

// One integer field's encoding as the metadata records left it, and how to
// decode it: value = base + the stored integer (sign-extended for baseOffset
// and delta) + step; under delta and stride, the value becomes the base.
struct FieldCode {
    std::uint8_t kind = op::none;  // the interpretation, as its metadata property code
    std::uint8_t width = 4, restore = 4;
    std::uint64_t value = 0;  // the interpretation's argument
    std::int64_t stride = 0;
    // derived
    std::uint64_t mask = 0xffffffff, base = 0, step = 0;
    std::uint8_t shift = 0;  // 64 - 8 * width for a sign-extended field, else 0
    bool track = false;

    static FieldCode absent(std::uint8_t restore) {  // the DTD's `default 0`
        FieldCode f;
        f.kind = op::default_value;
        f.width = 0;
        f.restore = restore;
        f.mask = 0;
        return f;
    }
    bool stores() const { return kind != op::default_value && kind != op::stride; }
    void set_width(std::uint64_t w) {
        if (w > 8) fail("a width over 8 bytes");
        if (stores()) width = static_cast<std::uint8_t>(w);
        if (w != 0) restore = static_cast<std::uint8_t>(w);
        derive_width();
    }
    void set_interpretation(std::uint8_t op, std::uint64_t a, std::uint64_t b) {
        if (op == op::section_offset || op == op::section_stride || op > op::section_stride) {
            fail("metadata property " + std::to_string(op) + " is not supported by this reader");
        }
        kind = op;
        if (op != op::none) value = a;
        stride = static_cast<std::int64_t>(b);
        width = stores() ? restore : 0;
        track = op == op::delta || op == op::stride;
        base = op == op::none ? 0 : value;
        step = op == op::stride ? b : 0;
        derive_width();
    }
    void derive_width() {
        mask = width == 0 ? 0 : ~std::uint64_t(0) >> (64 - 8 * width);
        shift = (kind == op::base_offset || kind == op::delta) && width != 0 ? static_cast<std::uint8_t>(64 - 8 * width) : 0;
    }
    // The chunk has 8 readable bytes past its end (read_chunks' padding).
    std::uint64_t take(const std::byte*& p) {
        const std::uint64_t raw = get64(p) & mask;
        p += width;
        const auto stored = static_cast<std::uint64_t>(static_cast<std::int64_t>(raw << shift) >> shift);
        const std::uint64_t v = base + stored + step;
        if (track) base = v;
        return v;
    }
};

// heap64_compact: every field the checksum uses keeps its encoding in a
// FieldCode, changed by each metadata record. Metadata for another field or
// record type is refused (this reader does not decode it). The field numbers
// come from the compact64 tables (only the numbers: the DTD's layout).
class Heap64CompactReader {
public:
    Heap64CompactReader() {
        // The DTD's initial encodings: size and addresses none, 4 bytes (FieldCode's
        // default); thread default 0 (4 bytes once stored); time default 0 (8 bytes once stored).
        fields_[0][3] = fields_[1][2] = fields_[2][4] = FieldCode::absent(4);
        fields_[0][5] = fields_[1][4] = fields_[2][6] = FieldCode::absent(8);
        for (std::size_t k = 0; k < 3; ++k) measure(k);
    }

    std::uint64_t decode(const std::byte* p, const std::byte* end, Checksum& sum) {
        std::uint64_t n = 0;
        for (; p != end; ++n) {
            const auto left = static_cast<std::size_t>(end - p);
            switch (std::to_integer<std::uint8_t>(p[0])) {
                case tag::alloc: {
                    if (left < length_[0]) fail("truncated alloc");
                    auto& f = fields_[0];
                    ++p;
                    const std::uint64_t size = f[1].take(p), address = f[2].take(p), thread = f[3].take(p), time = f[5].take(p);
                    sum.alloc(size, address, time, thread);
                    break;
                }
                case tag::free: {
                    if (left < length_[1]) fail("truncated free");
                    auto& f = fields_[1];
                    ++p;
                    const std::uint64_t address = f[1].take(p), thread = f[2].take(p), time = f[4].take(p);
                    sum.free(address, time, thread);
                    break;
                }
                case tag::realloc_alloc_free: {
                    if (left < length_[2]) fail("truncated realloc");
                    auto& f = fields_[2];
                    ++p;
                    const std::uint64_t size = f[1].take(p), from = f[2].take(p), to = f[3].take(p), thread = f[4].take(p),
                                        time = f[6].take(p);
                    sum.realloc(size, from, to, time, thread);
                    break;
                }
                case tag::metadata: p += apply(p, left); break;
                default: fail("unknown tag " + std::to_string(std::to_integer<unsigned>(p[0])));
            }
        }
        return n;
    }

private:
    [[gnu::noinline]] std::size_t apply(const std::byte* p, std::size_t left) {
        if (left < 4) fail("truncated metadata");
        const auto record = std::to_integer<std::uint8_t>(p[1]), field = std::to_integer<std::uint8_t>(p[2]),
                   property = std::to_integer<std::uint8_t>(p[3]);
        const std::size_t n = 4 + 8 * metadata_values(property);
        if (left < n) fail("truncated metadata");
        const std::size_t k = record == tag::alloc ? 0 : record == tag::free ? 1 : record == tag::realloc_alloc_free ? 2 : 3;
        if (k == 3 || !decoded(k, field)) {
            fail("metadata for field " + std::to_string(field) + " of the record with tag " + std::to_string(record) +
                 ", which this reader does not decode");
        }
        FieldCode& f = fields_[k][field];
        const std::uint64_t a = n > 4 ? get64(p + 4) : 0, b = n > 12 ? get64(p + 12) : 0;
        if (property == op::width) {
            f.set_width(a);
        } else {
            f.set_interpretation(property, a, b);
        }
        measure(k);
        return n;
    }

    static bool decoded(std::size_t k, unsigned field) {
        for (const compact64::Stored& s : compact64::fields_of[k]) {
            if (s.field == field) return true;
        }
        return false;
    }
    // A record's length: the tag and the fields it decodes (the others store nothing).
    void measure(std::size_t k) {
        length_[k] = 1;
        for (const compact64::Stored& s : compact64::fields_of[k]) length_[k] += fields_[k][s.field].width;
    }

    FieldCode fields_[3][8];
    std::size_t length_[3] = {};
};

}  // namespace hw

// Reads a heap64 trace of the encoding E; without Decode, only its I/O.
template <Encoding E, bool Decode = true>
Checksum read_heap64_handwritten(const std::string& path, const Container& c) {
    std::conditional_t<E == Encoding::heap64, hw::Heap64Reader, hw::Heap64CompactReader> reader;
    Checksum sum;
    hw::read_chunks<Decode>(path, c, 8, [&](const std::byte* begin, const std::byte* end) { return reader.decode(begin, end, sum); });
    return sum;
}

}  // namespace bench
