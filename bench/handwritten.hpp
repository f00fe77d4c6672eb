// The hand-written baseline: a writer and a reader of exactly the bytes the
// generated HATF codec produces for the benchmark's workload, in plain C++
// (fixed layouts, memcpy, stdio), with no call into the Meta-TF runtime.
// Each knows its encoding at compile time, which is what a hand-written
// codec for one format would do; the generated codec learns it from the
// DTD's initial encoding and the trace's metadata records at run time.
//
// The file around the records is the Meta-TF container, version 2, written
// and read by hand as well (hw_container.hpp), so that both sides do the
// same I/O.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hw_container.hpp"
#include "workload.hpp"

namespace bench {

static_assert(std::endian::native == std::endian::little, "the hand-written codec assumes a little-endian host");

// paper and compact encode the workload of workload.hpp; heap64 and
// heap64_compact the one of realistic_workload.hpp (heap64_codec.hpp).
enum class Encoding { paper, compact, heap64, heap64_compact };
inline constexpr Encoding all_encodings[] = {Encoding::paper, Encoding::compact, Encoding::heap64, Encoding::heap64_compact};

inline const char* encoding_name(Encoding e) {
    constexpr const char* names[] = {"paper", "compact", "heap64", "heap64-compact"};
    return names[static_cast<int>(e)];
}
constexpr bool is_heap64(Encoding e) { return e == Encoding::heap64 || e == Encoding::heap64_compact; }
// Whether the encoding stores the time (and the heap64 ones the thread).
constexpr bool has_time(Encoding e) { return e != Encoding::paper; }

// HATF tags (1 byte) and the metadata property codes the compact encoding uses.
namespace tag {
inline constexpr std::uint8_t metadata = 3, alloc = 4, free = 5, realloc_alloc_free = 7;
}
namespace op {
inline constexpr std::uint8_t width = 0, none = 1, base_offset = 2, delta = 3, default_value = 4, section_offset = 5, stride = 6,
                              section_stride = 7;
}

// One metadata change at the start of a compact trace. `slot` and `field`
// index the generated code's record types and fields.
struct Change {
    std::uint8_t record_tag;
    std::uint32_t slot;
    std::uint8_t field;
    std::uint8_t op;
    std::uint64_t a;
    std::int64_t b;
};

// The compact encoding, applied to the DTD's initial one (the paper's):
//   alloc:            size 2 bytes, address delta 2 bytes, time stride +1 (stores nothing)
//   free:             address baseOffset 4 bytes, time delta 2 bytes
//   reallocAllocFree: size 2 bytes, addresses 4 bytes as before, time delta 2 bytes
inline constexpr Change compact_changes[] = {
    {tag::alloc, 3, 1, op::width, 2, 0},
    {tag::alloc, 3, 2, op::delta, heap_base, 0},
    {tag::alloc, 3, 2, op::width, 2, 0},
    {tag::alloc, 3, 5, op::stride, 0, 1},
    {tag::free, 4, 1, op::base_offset, heap_base, 0},
    {tag::free, 4, 4, op::delta, 0, 0},
    {tag::free, 4, 4, op::width, 2, 0},
    {tag::realloc_alloc_free, 6, 1, op::width, 2, 0},
    {tag::realloc_alloc_free, 6, 6, op::delta, 0, 0},
    {tag::realloc_alloc_free, 6, 6, op::width, 2, 0},
};

// What a reader does with the records: sums that both readers must agree on.
// Addresses are mixed with xor, sizes and times added: unlike operations keep
// the compiler from loading two adjacent record members with one wide load,
// which would straddle the reader's two narrower stores (a store-forwarding
// stall that belongs to this consumer, not to either codec).
struct Checksum {
    std::uint64_t allocs = 0, frees = 0, reallocs = 0;
    std::uint64_t size = 0, address = 0, new_address = 0, time = 0, thread = 0;

    void alloc(std::uint64_t s, std::uint64_t a, std::uint64_t t) {
        ++allocs;
        size += s;
        address ^= a;
        time += t;
    }
    void free(std::uint64_t a, std::uint64_t t) {
        ++frees;
        address ^= a * 3;
        time += t * 3;
    }
    void realloc(std::uint64_t s, std::uint64_t from, std::uint64_t to, std::uint64_t t) {
        ++reallocs;
        size += s * 5;
        address ^= from * 5;
        new_address += to;
        time += t * 5;
    }
    // The heap64 encodings store the thread too.
    void alloc(std::uint64_t s, std::uint64_t a, std::uint64_t t, std::uint64_t th) {
        alloc(s, a, t);
        thread += th;
    }
    void free(std::uint64_t a, std::uint64_t t, std::uint64_t th) {
        free(a, t);
        thread += th * 3;
    }
    void realloc(std::uint64_t s, std::uint64_t from, std::uint64_t to, std::uint64_t t, std::uint64_t th) {
        realloc(s, from, to, t);
        thread += th * 5;
    }
    bool operator==(const Checksum&) const = default;
};

namespace hw {

inline bool fits16(std::int64_t d) { return d >= -32768 && d <= 32767; }
inline bool fits32(std::int64_t d) { return d >= INT32_MIN && d <= INT32_MAX; }
inline std::uint64_t sext16(std::uint16_t v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int16_t>(v))); }
inline std::uint64_t sext32(std::uint32_t v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v))); }

inline unsigned metadata_values(std::uint8_t o) { return o == op::none ? 0 : (o == op::stride || o == op::section_stride) ? 2 : 1; }

inline std::size_t encode_change(std::byte* p, const Change& c) {
    p[0] = std::byte{tag::metadata};
    p[1] = std::byte{c.record_tag};
    p[2] = std::byte{c.field};
    p[3] = std::byte{c.op};
    const unsigned values = metadata_values(c.op);
    if (values > 0) put64(p + 4, c.a);
    if (values > 1) put64(p + 12, static_cast<std::uint64_t>(c.b));
    return 4 + 8 * values;
}

// The previous values that delta and stride fields count from.
struct CompactState {
    std::uint64_t alloc_address = heap_base, alloc_time = 0;
    std::uint64_t free_time = 0;
    std::uint64_t realloc_time = 0;
};

inline std::size_t encode_paper(std::byte* p, const Event& e) {
    switch (e.kind) {
        case Kind::alloc:
            if (e.address > 0xffffffffu) fail("alloc address does not fit");
            p[0] = std::byte{tag::alloc};
            put32(p + 1, e.size);
            put32(p + 5, static_cast<std::uint32_t>(e.address));
            return 9;
        case Kind::free:
            if (e.address > 0xffffffffu) fail("free address does not fit");
            p[0] = std::byte{tag::free};
            put32(p + 1, static_cast<std::uint32_t>(e.address));
            return 5;
        case Kind::realloc:
            if ((e.address | e.new_address) > 0xffffffffu) fail("realloc address does not fit");
            p[0] = std::byte{tag::realloc_alloc_free};
            put32(p + 1, e.size);
            put32(p + 5, static_cast<std::uint32_t>(e.address));
            put32(p + 9, static_cast<std::uint32_t>(e.new_address));
            return 13;
    }
    fail("bad event");
}

inline std::size_t encode_compact(std::byte* p, const Event& e, CompactState& s) {
    switch (e.kind) {
        case Kind::alloc: {
            const auto d = static_cast<std::int64_t>(e.address - s.alloc_address);
            if (e.size > 0xffff || !fits16(d) || e.time != s.alloc_time + 1) fail("alloc does not fit the compact encoding");
            p[0] = std::byte{tag::alloc};
            put16(p + 1, static_cast<std::uint16_t>(e.size));
            put16(p + 3, static_cast<std::uint16_t>(d));
            s.alloc_address = e.address;
            s.alloc_time = e.time;
            return 5;
        }
        case Kind::free: {
            const auto d = static_cast<std::int64_t>(e.address - heap_base);
            const auto dt = static_cast<std::int64_t>(e.time - s.free_time);
            if (!fits32(d) || !fits16(dt)) fail("free does not fit the compact encoding");
            p[0] = std::byte{tag::free};
            put32(p + 1, static_cast<std::uint32_t>(d));
            put16(p + 5, static_cast<std::uint16_t>(dt));
            s.free_time = e.time;
            return 7;
        }
        case Kind::realloc: {
            const auto dt = static_cast<std::int64_t>(e.time - s.realloc_time);
            if (e.size > 0xffff || (e.address | e.new_address) > 0xffffffffu || !fits16(dt)) {
                fail("realloc does not fit the compact encoding");
            }
            p[0] = std::byte{tag::realloc_alloc_free};
            put16(p + 1, static_cast<std::uint16_t>(e.size));
            put32(p + 3, static_cast<std::uint32_t>(e.address));
            put32(p + 7, static_cast<std::uint32_t>(e.new_address));
            put16(p + 11, static_cast<std::uint16_t>(dt));
            s.realloc_time = e.time;
            return 13;
        }
    }
    fail("bad event");
}

// Decodes one chunk; returns the number of records in it.
template <Encoding E>
std::uint64_t decode_chunk(const std::byte* p, const std::byte* end, CompactState& s, Checksum& sum) {
    std::uint64_t n = 0;
    for (; p != end; ++n) {
        const auto left = static_cast<std::size_t>(end - p);
        const auto t = std::to_integer<std::uint8_t>(p[0]);
        if (t == tag::metadata) {  // the encoding is known here; skip the records that announce it
            if (left < 4) fail("truncated metadata");
            const std::size_t len = 4 + 8 * metadata_values(std::to_integer<std::uint8_t>(p[3]));
            if (left < len) fail("truncated metadata");
            p += len;
            continue;
        }
        if constexpr (E == Encoding::paper) {
            switch (t) {
                case tag::alloc:
                    if (left < 9) fail("truncated alloc");
                    sum.alloc(get32(p + 1), get32(p + 5), 0);
                    p += 9;
                    break;
                case tag::free:
                    if (left < 5) fail("truncated free");
                    sum.free(get32(p + 1), 0);
                    p += 5;
                    break;
                case tag::realloc_alloc_free:
                    if (left < 13) fail("truncated realloc");
                    sum.realloc(get32(p + 1), get32(p + 5), get32(p + 9), 0);
                    p += 13;
                    break;
                default: fail("unknown tag " + std::to_string(t));
            }
        } else {
            switch (t) {
                case tag::alloc:
                    if (left < 5) fail("truncated alloc");
                    s.alloc_address += sext16(get16(p + 3));
                    s.alloc_time += 1;
                    sum.alloc(get16(p + 1), s.alloc_address, s.alloc_time);
                    p += 5;
                    break;
                case tag::free:
                    if (left < 7) fail("truncated free");
                    s.free_time += sext16(get16(p + 5));
                    sum.free(heap_base + sext32(get32(p + 1)), s.free_time);
                    p += 7;
                    break;
                case tag::realloc_alloc_free:
                    if (left < 13) fail("truncated realloc");
                    s.realloc_time += sext16(get16(p + 11));
                    sum.realloc(get16(p + 1), get32(p + 3), get32(p + 7), s.realloc_time);
                    p += 13;
                    break;
                default: fail("unknown tag " + std::to_string(t));
            }
        }
    }
    return n;
}

}  // namespace hw

// Writes `events` as a trace of the encoding E.
template <Encoding E>
void write_handwritten(const std::string& path, const Container& c, std::span<const Event> events) {
    hw::TraceOut out(path, c);
    [[maybe_unused]] hw::CompactState s;
    if constexpr (E == Encoding::compact) {
        for (const Change& m : compact_changes) out.commit_metadata(hw::encode_change(out.at(), m));
    }
    for (const Event& e : events) {
        if constexpr (E == Encoding::paper) {
            out.commit(hw::encode_paper(out.at(), e));
        } else {
            out.commit(hw::encode_compact(out.at(), e, s));
        }
    }
    out.close();
}

// Reads a trace of the encoding E; without Decode, only its I/O.
template <Encoding E, bool Decode = true>
Checksum read_handwritten(const std::string& path, const Container& c) {
    hw::CompactState s;
    Checksum sum;
    hw::read_chunks<Decode>(path, c, 0, [&](const std::byte* begin, const std::byte* end) {
        return hw::decode_chunk<E>(begin, end, s, sum);
    });
    return sum;
}

}  // namespace bench
