// The hand-written baseline: a writer and a reader of exactly the bytes the
// generated HATF codec produces for the benchmark's workload, in plain C++
// (fixed layouts, memcpy, stdio), with no call into the Meta-TF runtime.
// Each knows its encoding at compile time, which is what a hand-written
// codec for one format would do; the generated codec learns it from the
// DTD's initial encoding and the trace's metadata records at run time.
//
// The file around the records is the Meta-TF container (header, embedded
// DTD, section index), written and read here by hand as well, so that both
// sides do the same I/O: records are buffered and written in chunks of at
// least 1 MiB, the header is rewritten at close, and the file is renamed
// into place; the reader freads the header, the index and each chunk.
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

#include "workload.hpp"

namespace bench {

static_assert(std::endian::native == std::endian::little, "the hand-written codec assumes a little-endian host");

enum class Encoding { paper, compact };

inline const char* encoding_name(Encoding e) { return e == Encoding::paper ? "paper" : "compact"; }

// HATF tags (1 byte) and the metadata property codes the compact encoding uses.
namespace tag {
inline constexpr std::uint8_t metadata = 3, alloc = 4, free = 5, realloc_alloc_free = 7;
}
namespace op {
inline constexpr std::uint8_t width = 0, none = 1, base_offset = 2, delta = 3, stride = 6, section_stride = 7;
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
    std::uint64_t size = 0, address = 0, new_address = 0, time = 0;

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
    bool operator==(const Checksum&) const = default;
};

// The container's identity: what the header embeds.
struct Container {
    std::uint64_t fingerprint;
    std::string_view name;
    std::string_view text;
};

namespace hw {

[[noreturn, gnu::cold]] inline void fail(const std::string& why) { throw std::runtime_error("hand-written codec: " + why); }

inline void put16(std::byte* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
inline void put32(std::byte* p, std::uint32_t v) { std::memcpy(p, &v, 4); }
inline void put64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, 8); }
inline std::uint16_t get16(const std::byte* p) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline std::uint32_t get32(const std::byte* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline std::uint64_t get64(const std::byte* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline bool fits16(std::int64_t d) { return d >= -32768 && d <= 32767; }
inline bool fits32(std::int64_t d) { return d >= INT32_MIN && d <= INT32_MAX; }
inline std::uint64_t sext16(std::uint16_t v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int16_t>(v))); }
inline std::uint64_t sext32(std::uint32_t v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v))); }

struct File {
    std::FILE* f;
    File(const std::string& path, const char* mode) : f(std::fopen(path.c_str(), mode)) {
        if (!f) fail("cannot open " + path);
    }
    ~File() {
        if (f) std::fclose(f);
    }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    void write(const void* data, std::size_t n) {
        if (std::fwrite(data, 1, n, f) != n) fail("write error");
    }
    void read_at(std::uint64_t offset, void* out, std::size_t n) {
        if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fread(out, 1, n, f) != n) fail("read error");
    }
};

struct ChunkRef {
    std::uint64_t start, size;
};

inline std::vector<std::byte> prologue(const Container& c, std::uint64_t chunks, std::uint64_t data_start,
                                       std::uint64_t records, std::uint64_t index_offset) {
    std::vector<std::byte> p(16 + 40 + c.name.size() + c.text.size());
    std::memcpy(p.data(), "\177MTF", 4);
    p[4] = std::byte{2};  // 64-bit class
    p[5] = std::byte{1};  // little-endian
    p[6] = static_cast<std::byte>(c.name.size());
    p[7] = std::byte{1};  // container version
    put64(p.data() + 8, c.fingerprint);
    const std::uint64_t words[5] = {chunks, data_start, records, index_offset, c.text.size()};
    for (int i = 0; i < 5; ++i) put64(p.data() + 16 + 8 * i, words[i]);
    std::memcpy(p.data() + 56, c.name.data(), c.name.size());
    std::memcpy(p.data() + 56 + c.name.size(), c.text.data(), c.text.size());
    return p;
}

// Records go to a buffer flushed as a chunk once it holds 1 MiB or more.
class TraceOut {
public:
    static constexpr std::size_t chunk_bytes = std::size_t(1) << 20;

    TraceOut(const std::string& path, const Container& c)
        : path_(path), temporary_(path + ".partial"), container_(c), file_(temporary_, "wb+"),
          buffer_(std::make_unique<std::byte[]>(chunk_bytes + 64)) {
        const auto p = prologue(c, 0, 0, 0, 0);
        file_.write(p.data(), p.size());
        position_ = data_start_ = p.size();
    }

    std::byte* at() { return buffer_.get() + used_; }
    void commit(std::size_t n) {
        used_ += n;
        ++records_;
        if (used_ >= chunk_bytes) flush();
    }

    void close() {
        flush();
        std::vector<std::byte> index(24 * chunks_.size());
        for (std::size_t i = 0; i < chunks_.size(); ++i) {
            put64(index.data() + 24 * i, 0);
            put64(index.data() + 24 * i + 8, chunks_[i].start);
            put64(index.data() + 24 * i + 16, chunks_[i].size);
        }
        file_.write(index.data(), index.size());
        const auto p = prologue(container_, chunks_.size(), data_start_, records_, position_);
        if (std::fseek(file_.f, 0, SEEK_SET) != 0) fail("seek error");
        file_.write(p.data(), p.size());
        if (std::fclose(file_.f) != 0) fail("write error");
        file_.f = nullptr;
        if (std::rename(temporary_.c_str(), path_.c_str()) != 0) fail("cannot rename " + temporary_);
    }

private:
    void flush() {
        if (used_ == 0) return;
        file_.write(buffer_.get(), used_);
        chunks_.push_back({position_, used_});
        position_ += used_;
        used_ = 0;
    }

    std::string path_, temporary_;
    Container container_;
    File file_;
    std::unique_ptr<std::byte[]> buffer_;
    std::size_t used_ = 0;
    std::uint64_t position_ = 0, data_start_ = 0, records_ = 0;
    std::vector<ChunkRef> chunks_;
};

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
        for (const Change& m : compact_changes) out.commit(hw::encode_change(out.at(), m));
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

// Reads a trace of the encoding E. With Decode false it only does the I/O
// (header, index, every chunk), the floor under both readers.
template <Encoding E, bool Decode = true>
Checksum read_handwritten(const std::string& path, std::uint64_t fingerprint) {
    hw::File f(path, "rb");
    std::byte head[56];
    f.read_at(0, head, sizeof head);
    if (std::memcmp(head, "\177MTF", 4) != 0 || head[4] != std::byte{2} || head[5] != std::byte{1} ||
        hw::get64(head + 8) != fingerprint) {
        hw::fail("not a 64-bit little-endian trace of this DTD");
    }
    const std::uint64_t chunks = hw::get64(head + 16), records = hw::get64(head + 32), index_offset = hw::get64(head + 40);
    std::vector<std::byte> index(24 * chunks);
    f.read_at(index_offset, index.data(), index.size());
    std::vector<std::byte> buffer;
    hw::CompactState s;
    Checksum sum;
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < chunks; ++i) {
        const std::byte* e = index.data() + 24 * i;
        if (hw::get64(e) != 0) hw::fail("a chunk of another section");
        buffer.resize(hw::get64(e + 16));
        f.read_at(hw::get64(e + 8), buffer.data(), buffer.size());
        if constexpr (Decode) n += hw::decode_chunk<E>(buffer.data(), buffer.data() + buffer.size(), s, sum);
    }
    if (Decode && n != records) hw::fail("record count differs from the header");
    return sum;
}

// Writes a finished file image the way both writers do (chunks, then the
// header again at offset 0, then rename): the I/O floor under both writers.
inline void write_image(const std::string& path, std::span<const std::byte> image, std::size_t prologue_size) {
    const std::string temporary = path + ".partial";
    hw::File f(temporary, "wb+");
    for (std::size_t at = 0; at < image.size(); at += hw::TraceOut::chunk_bytes) {
        f.write(image.data() + at, std::min(hw::TraceOut::chunk_bytes, image.size() - at));
    }
    if (std::fseek(f.f, 0, SEEK_SET) != 0) hw::fail("seek error");
    f.write(image.data(), prologue_size);
    if (std::fclose(f.f) != 0) hw::fail("write error");
    f.f = nullptr;
    if (std::rename(temporary.c_str(), path.c_str()) != 0) hw::fail("cannot rename " + temporary);
}

}  // namespace bench
