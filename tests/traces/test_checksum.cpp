// Checksums of container version 4 (docs/trace-format.md, section 1.3):
// every single-bit flip of a trace, stored or compressed, is refused or
// leaves its records as they were; a damaged frame, state block or chunk is
// refused with an error that names its segment, from a file and from a
// pipe alike, and by a reader that starts at a segment; older versions
// still read; and a DTD text no reader takes is refused by the writer.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <metatf/container/checksum.hpp>
#include <metatf/container/codec.hpp>
#include <metatf/container/container.hpp>
#include <metatf/io/generic.hpp>

#include <pools.hpp>

#include <doctest/doctest.h>

#include "../address_sanitizer.hpp"
#include "trace_support.hpp"

namespace rt = metatf::rt;
using namespace metatf::test;
using rt::ErrorKind;

namespace {

rt::WriterOptions options(int compress, std::uint8_t version = rt::container_version) {
    rt::WriterOptions o;
    o.chunk_bytes = 300;
    o.compress = compress;
    o.version = version;
    o.output.replace = true;
    return o;
}

// 120 records of the pools DTD in segments of about 300 bytes: allocations,
// frees and reallocs whose addresses come from the pool, and from record 60
// on sizes that need 8 bytes, so that the later segments' state blocks
// restore the wider field. Written at level 3 the records compress well
// enough for most chunks to be zstd frames.
void write_pools(const std::string& path, const rt::WriterOptions& o) {
    using namespace pools;
    Writer w(path, o);
    std::vector<std::uint64_t> live;
    for (std::uint64_t i = 0; i < 120; ++i) {
        const std::uint64_t size = (i >= 60 ? std::uint64_t(1) << 33 : 0) + 16 + i % 4 * 8, address = 0x7f0000000000 + i * 48;
        if (i % 3 == 2) {
            w.write(Free{.address = live.back()});
            live.pop_back();
        } else if (i % 7 == 6) {
            w.write(Realloc{.oldAddress = live.front(), .size = size, .address = address});
            live.front() = address;
        } else {
            w.write(Alloc{.size = size, .address = address});
            live.push_back(address);
        }
    }
    w.close();
}

// A record as one line: its index, record type and values.
std::string show_record(const rt::TraceReader& r, std::uint64_t index, const rt::GenericRecord& g) {
    std::string line = std::to_string(index) + " " + r.dtd().records[g.slot].name;
    for (const rt::GenericValue& v : g.values) line += " " + std::to_string(v.integer);
    return line;
}

// The records of the trace at `path` from segment `from` on, or the error that stops them.
std::vector<std::string> decode(const std::string& path, std::size_t from = 0) {
    std::vector<std::string> out;
    try {
        rt::TraceReader r(path, pools::dtd);
        if (from != 0) r.seek_segment(from);
        rt::GenericRecord g;
        while (r.begin_record()) {
            g.slot = r.slot();
            g.values.clear();
            const std::uint64_t index = r.record_index();
            rt::decode_generic(r, g);
            out.push_back(show_record(r, index, g));
        }
    } catch (const rt::TraceError& e) {
        out.push_back("error: " + show(e));
    }
    return out;
}

// The error reading `bytes` through a pipe gives (the reader streams). The
// trace fits in the pipe, whose writing end is closed before reading.
std::string pipe_error(const std::vector<std::uint8_t>& bytes) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(bytes.size() <= static_cast<std::size_t>(::fcntl(fds[1], F_GETPIPE_SZ)));
    REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(fds[1]);
    const std::vector<std::string> records = decode("/dev/fd/" + std::to_string(fds[0]));
    ::close(fds[0]);
    return records.back().starts_with("error: ") ? records.back().substr(7) : "no error";
}

std::string file_error(const TempTrace& t, const TraceBytes& b) {
    b.save(t.path());
    const std::vector<std::string> records = decode(t.path());
    return records.back().starts_with("error: ") ? records.back().substr(7) : "no error";
}

struct Sweep {
    std::uint64_t flipped = 0, refused = 0, unchanged = 0;
    std::string wrong;  // flips that were read as other records
};

// Flips every bit of the trace at `path` in turn (a third of them, spread
// over every byte, under AddressSanitizer) and reads it as a file:
// a copy in memory (memfd), each bit flipped in place and back, so that the
// sweep costs no disk.
Sweep flip_every_bit(const std::string& path) {
    const TraceBytes whole = TraceBytes::load(path);
    const std::vector<std::string> original = decode(path);
    const int fd = ::memfd_create("flips", 0);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, whole.b.data(), whole.b.size()) == static_cast<ssize_t>(whole.b.size()));
    const std::string copy = "/proc/self/fd/" + std::to_string(fd);
    REQUIRE(decode(copy) == original);
    Sweep s;
    for (std::size_t at = 0; at < whole.b.size(); ++at) {
        for (unsigned bit = 0; bit < 8; ++bit) {
            // Under AddressSanitizer, where a read costs several times as much, a third of the bits.
            if (address_sanitizer && (at * 8 + bit) % 3 != 0) continue;
            ++s.flipped;
            const std::uint8_t flipped = whole.b[at] ^ static_cast<std::uint8_t>(1u << bit);
            REQUIRE(::pwrite(fd, &flipped, 1, static_cast<off_t>(at)) == 1);
            const std::vector<std::string> got = decode(copy);
            if (got.back().starts_with("error: ")) {
                ++s.refused;
            } else if (got == original) {
                ++s.unchanged;
            } else {
                s.wrong += "\nbit " + std::to_string(bit) + " of byte " + std::to_string(at);
            }
        }
        REQUIRE(::pwrite(fd, &whole.b[at], 1, static_cast<off_t>(at)) == 1);
    }
    ::close(fd);
    return s;
}

rt::Header header_of(const std::string& path) { return rt::TraceReader(path, pools::dtd).header(); }

std::string segment_name(const rt::Segment& s, std::size_t k) { return "segment " + std::to_string(k) + " at byte " + std::to_string(s.offset); }

}  // namespace

TEST_SUITE("checksums") {

TEST_CASE("CRC32C gives the check value of its definition, in pieces as whole, on any alignment, with or without the instruction") {
    const std::string nine = "123456789";
    const auto bytes = std::as_bytes(std::span(nine));
    CHECK(rt::crc32c(bytes) == 0xe3069283u);
    CHECK(rt::crc32c(bytes.subspan(4), rt::crc32c(bytes.first(4))) == 0xe3069283u);
    CHECK(rt::detail::crc32c_portable(bytes) == 0xe3069283u);
    CHECK(rt::detail::crc32c_portable(bytes.subspan(4), rt::detail::crc32c_portable(bytes.first(4))) == 0xe3069283u);
    CHECK(rt::crc32c({}) == 0u);
    // Against the definition, one bit at a time, for every length and start up to 40 bytes.
    std::vector<std::byte> data(48);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 37 + 11);
    auto bitwise = [](std::span<const std::byte> in) {
        std::uint32_t c = ~0u;
        for (std::byte b : in) {
            c ^= std::to_integer<std::uint32_t>(b);
            for (int k = 0; k < 8; ++k) c = c & 1 ? c >> 1 ^ 0x82f63b78u : c >> 1;
        }
        return ~c;
    };
    for (std::size_t start = 0; start < 8; ++start) {
        for (std::size_t n = 0; n <= 40; ++n) {
            const std::span<const std::byte> piece(data.data() + start, n);
            CHECK(rt::crc32c(piece) == bitwise(piece));
            CHECK(rt::detail::crc32c_portable(piece) == bitwise(piece));
        }
    }
}

TEST_CASE("writers write version 4, which costs 4 bytes for the header and 4 a chunk over version 3") {
    TempTrace t3("sum-v3"), t4("sum-v4");
    write_pools(t3.path(), options(0, 3));
    write_pools(t4.path(), options(0));
    const TraceBytes b3 = TraceBytes::load(t3.path()), b4 = TraceBytes::load(t4.path());
    CHECK(b4.b[7] == 4);
    const rt::Header h = header_of(t4.path());
    CHECK(h.segments.size() == 5);
    CHECK(b4.b.size() == b3.b.size() + 4 + 4 * h.chunks.size());
    CHECK(decode(t4.path()) == decode(t3.path()));
}

TEST_CASE("every single-bit flip of a stored or compressed trace is refused or leaves its records as they were") {
    for (const int level : {0, 3}) {
        CAPTURE(level);
        TempTrace t("sum-flips");
        write_pools(t.path(), options(level));
        const rt::Header h = header_of(t.path());
        std::size_t zstd = 0, with_state = 0;
        for (const rt::Chunk& c : h.chunks) zstd += c.codec == 1;
        for (const rt::Segment& s : h.segments) with_state += s.state_size != 0;
        CHECK(with_state >= 2);
        if (level == 0) CHECK(zstd == 0);
        if (level != 0) CHECK(zstd >= h.chunks.size() / 2);
        const Sweep s = flip_every_bit(t.path());
        CHECK(s.wrong == "");
        // More than the rule asks: every byte is checked, so no flip goes unseen, not even
        // one in a zstd frame's unused bits or in a comment of the embedded DTD.
        CHECK(s.unchanged == 0);
        CHECK(s.refused == s.flipped);
        const std::size_t bits = TraceBytes::load(t.path()).b.size() * 8;
        CHECK(s.flipped == (address_sanitizer ? (bits + 2) / 3 : bits));
    }
}

TEST_CASE("a damaged frame, state block or chunk is refused with its segment, from a file and from a pipe") {
    for (const int level : {0, 3}) {
        CAPTURE(level);
        TempTrace t("sum-exact");
        write_pools(t.path(), options(level));
        const TraceBytes whole = TraceBytes::load(t.path());
        const rt::Header h = header_of(t.path());
        // Segment 2 (its chunk read ahead when it is a zstd frame), and the first segment with a state block.
        std::size_t k = 2, stated = 0;
        while (h.segments[stated].state_size == 0) ++stated;
        const rt::Segment& s = h.segments[k];
        const rt::Chunk& c = h.chunks[k];
        REQUIRE(c.segment == k);
        const std::string frame_what = segment_name(s, k) + ": its frame and state block do not match their checksum";
        const std::string chunk_what = segment_name(s, k) + ": its chunk of section 0 does not match its checksum";
        struct Case {
            const char* name;
            std::uint64_t at;
            std::string file, pipe;
        };
        const rt::Segment& st = h.segments[stated];
        const std::string state_what = segment_name(st, stated) + ": its frame and state block do not match their checksum";
        const Case cases[] = {
            // Read when the file is opened; from a pipe, when the segment arrives.
            {"the frame's record count", s.offset + 8, show(ErrorKind::checksum, s.offset + 4, -1, 0, frame_what),
             show(ErrorKind::checksum, s.offset + 4, -1, s.first_record, frame_what)},
            {"the chunk's checksum in its entry", c.entry + 5, show(ErrorKind::checksum, s.offset + 4, -1, 0, frame_what),
             show(ErrorKind::checksum, s.offset + 4, -1, s.first_record, frame_what)},
            {"a state block", st.state_offset + st.state_size - 1, show(ErrorKind::checksum, st.offset + 4, -1, 0, state_what),
             show(ErrorKind::checksum, st.offset + 4, -1, st.first_record, state_what)},
            // Read when the reader reaches the chunk, at the segment's first record.
            {"the chunk's bytes", c.start + c.size / 2, show(ErrorKind::checksum, c.start, 0, s.first_record, chunk_what),
             show(ErrorKind::checksum, c.start, 0, s.first_record, chunk_what)},
            {"the DTD's fingerprint", 8, show(ErrorKind::checksum, 16 + 8, -1, 0, "the header and the embedded DTD do not match their checksum"),
             show(ErrorKind::checksum, 16 + 8, -1, 0, "the header and the embedded DTD do not match their checksum")},
            {"the DTD's text", h.data_start - 10, show(ErrorKind::checksum, 16 + 8, -1, 0, "the header and the embedded DTD do not match their checksum"),
             show(ErrorKind::checksum, 16 + 8, -1, 0, "the header and the embedded DTD do not match their checksum")},
        };
        for (const Case& x : cases) {
            CAPTURE(x.name);
            TraceBytes b = whole;
            b.b[x.at] ^= 0x10;
            CHECK(file_error(t, b) == x.file);
            CHECK(pipe_error(b.b) == x.pipe);
        }
    }
}

TEST_CASE("a reader that starts at a segment checks that segment, not those before it") {
    TempTrace t("sum-seek");
    write_pools(t.path(), options(3));
    const rt::Header h = header_of(t.path());
    const std::vector<std::string> all = decode(t.path());
    TraceBytes b = TraceBytes::load(t.path());
    const rt::Chunk& c = h.chunks[3];
    b.b[c.start + 3] ^= 1;
    b.save(t.path());
    const rt::Segment& s = h.segments[3];
    CHECK(decode(t.path(), 3) == std::vector<std::string>{"error: " + show(ErrorKind::checksum, c.start, 0, s.first_record,
                                                                           segment_name(s, 3) + ": its chunk of section 0 does not match its checksum")});
    const std::vector<std::string> from_4 = decode(t.path(), 4);
    CHECK(from_4 == std::vector<std::string>(all.begin() + static_cast<std::ptrdiff_t>(h.segments[4].first_record), all.end()));
}

TEST_CASE("traces of versions 1, 2 and 3 still read, and give the records of version 4") {
    TempTrace t("sum-older");
    write_pools(t.path(), options(0));
    const std::vector<std::string> v4 = decode(t.path());
    CHECK(v4.size() == 122);  // the records, and the metadata that widens the sizes of alloc and realloc
    for (const std::uint8_t version : {1, 2, 3}) {
        CAPTURE(int(version));
        write_pools(t.path(), options(0, version));
        CHECK(TraceBytes::load(t.path()).b[7] == version);
        CHECK(decode(t.path()) == v4);
    }
}

TEST_CASE("a DTD text longer than readers take is refused by the writer, and named by the reader") {
    TempTrace t("sum-dtd-limit");
    std::string text(rt::max_dtd_text + 1, ' ');
    rt::DtdDesc big = pools::dtd;
    big.text = text.c_str();
    const auto refused = error_of([&] { rt::TraceWriter(t.path(), big, options(0)); });
    CHECK(show(refused) == show(ErrorKind::usage, 0, -1, 0, "the DTD text is 16777217 bytes long, more than the 16777216 (16 MiB) a reader takes"));
    CHECK_FALSE(std::filesystem::exists(t.path()));
    CHECK_FALSE(t.has_partial());
    // At the limit it is written and read.
    text.pop_back();
    big.text = text.c_str();
    {
        rt::TraceWriter w(t.path(), big, options(0));
        w.close();
    }
    CHECK(decode(t.path()) == std::vector<std::string>{});
    // A trace that claims more: the reader names the limit, not the end of the file.
    TraceBytes b = TraceBytes::load(t.path());
    b.set(16, rt::max_dtd_text + 1, 8);
    const std::string claim = show(ErrorKind::bad_header, 16, -1, 0, "the embedded DTD is 16777217 bytes long, more than the 16777216 (16 MiB) a reader takes");
    CHECK(file_error(t, b) == claim);
    b.b.resize(1000);  // a pipe reads no further than the claim
    CHECK(pipe_error(b.b) == claim);
}

TEST_CASE("version 5: a compressed trace keeps its DTD text as a zstd frame, and a damaged one is refused at the header") {
    TempTrace t("sum-v5");
    write_pools(t.path(), options(3, 5));
    const TraceBytes v5 = TraceBytes::load(t.path());
    CHECK(v5.b[7] == 5);
    const std::vector<std::string> records = decode(t.path());
    CHECK(records.size() == 122);
    rt::Header h = rt::TraceReader(t.path(), pools::dtd).header();
    CHECK(h.dtd_text == pools::dtd.text);
    CHECK(rt::zstd_frame(std::as_bytes(std::span(h.dtd_stored.data(), h.dtd_stored.size()))));
    CHECK(h.dtd_stored.size() < h.dtd_text.size());
    // Stored chunks, or a writer asked for version 4: the text as it is, version 4.
    write_pools(t.path(), options(0));
    CHECK(TraceBytes::load(t.path()).b[7] == 4);
    write_pools(t.path(), options(3, 4));
    const TraceBytes v4 = TraceBytes::load(t.path());
    CHECK(v4.b[7] == 4);
    CHECK(decode(t.path()) == records);
    CHECK(v5.b.size() < v4.b.size());

    // A version-5 header whose text is not one whole zstd frame, its checksum right.
    const auto with_text = [&](const std::string& stored) {
        rt::Header bad = h;
        bad.dtd_stored = stored;
        TraceBytes out;
        for (const std::byte x : rt::encode_prologue(bad)) out.b.push_back(std::to_integer<std::uint8_t>(x));
        out.b.insert(out.b.end(), v5.b.begin() + static_cast<std::ptrdiff_t>(h.data_start), v5.b.end());
        return out;
    };
    const std::uint64_t at = h.data_start - h.dtd_stored.size();  // where the text starts, whatever its length
    const std::string not_frame = show(ErrorKind::bad_header, at, -1, 0, "the embedded DTD of a version-5 trace is not a zstd frame");
    CHECK(pipe_error(with_text(h.dtd_text).b) == not_frame);
    CHECK(file_error(t, with_text(h.dtd_text)) == not_frame);
    CHECK(pipe_error(with_text(h.dtd_stored.substr(0, h.dtd_stored.size() - 1)).b) ==
          show(ErrorKind::bad_header, at, -1, 0, "the embedded DTD does not decode: the zstd frame is cut short"));
    // A frame of a text longer than readers take.
    std::string text(rt::max_dtd_text + 1, ' ');
    for (std::size_t i = 0; i < text.size(); ++i) text[i] = "0123456789abcdef"[(i * 2654435761u) >> 7 & 15];
    std::vector<std::byte> frame;
    REQUIRE(rt::Compressor(1).compress(std::as_bytes(std::span(text.data(), text.size())), frame));
    CHECK(file_error(t, with_text(std::string(reinterpret_cast<const char*>(frame.data()), frame.size()))) ==
          show(ErrorKind::bad_header, at, -1, 0, "the embedded DTD does not decode: the zstd frame declares 16777217 bytes, more than the 16777216 a reader takes"));
}

namespace {

// The trace `whole` with the state block of segment `k` replaced by `state`,
// its frame's length word and checksum made to match (the end frame's index
// is not: a pipe reader meets the block first).
TraceBytes with_state(const TraceBytes& whole, const rt::Header& h, std::size_t k, std::span<const std::byte> state) {
    const rt::Segment& s = h.segments[k];
    const unsigned w = whole.word_size();
    std::vector<std::byte> frame(s.state_offset - s.offset);
    for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = std::byte{whole.b[s.offset + i]};
    for (unsigned i = 0; i < w; ++i) frame[8 + w + i] = std::byte(state.size() >> (8 * i));  // little-endian
    for (std::size_t i = 4; i < 8; ++i) frame[i] = std::byte{0};
    const std::uint32_t sum = rt::crc32c(state, rt::crc32c(frame));
    for (std::size_t i = 0; i < 4; ++i) frame[4 + i] = std::byte(sum >> (8 * i));
    TraceBytes out;
    out.b.assign(whole.b.begin(), whole.b.begin() + static_cast<std::ptrdiff_t>(s.offset));
    for (const std::byte x : frame) out.b.push_back(std::to_integer<std::uint8_t>(x));
    for (const std::byte x : state) out.b.push_back(std::to_integer<std::uint8_t>(x));
    out.b.insert(out.b.end(), whole.b.begin() + static_cast<std::ptrdiff_t>(s.state_offset + s.state_size), whole.b.end());
    return out;
}

std::vector<std::byte> zstd_of(const std::vector<std::byte>& bytes) {
    std::vector<std::byte> frame;
    REQUIRE(rt::Compressor(3).compress(bytes, frame));
    return frame;
}

}  // namespace

TEST_CASE("version 6: a compressing writer stores state blocks as zstd frames where smaller; a damaged one is refused at the block") {
    // Encodings chosen from the data, 16 records at a time, change many fields: blocks worth compressing.
    rt::WriterOptions o6 = options(3), o5 = options(3, 5);
    o6.auto_window = o5.auto_window = 16;
    TempTrace t("sum-v6"), t5("sum-v6-as-5");
    write_pools(t.path(), o6);
    write_pools(t5.path(), o5);
    const TraceBytes v6 = TraceBytes::load(t.path()), v5 = TraceBytes::load(t5.path());
    CHECK(v6.b[7] == 6);
    CHECK(v5.b[7] == 5);
    CHECK(decode(t.path()) == decode(t5.path()));
    const rt::Header h = header_of(t.path()), h5 = header_of(t5.path());
    REQUIRE(h.segments.size() == h5.segments.size());
    std::size_t packed = 0, k = 0;
    for (std::size_t i = 0; i < h.segments.size(); ++i) {
        const rt::Segment& s = h.segments[i];
        const auto block = std::span(v6.b).subspan(s.state_offset, s.state_size);
        if (rt::zstd_frame(std::as_bytes(block))) {
            CHECK(s.state_size < h5.segments[i].state_size);
            if (packed++ == 0) k = i;
        } else {
            CHECK(s.state_size == h5.segments[i].state_size);
        }
        // A reader that starts at the segment reads what one from the start does.
        if (i % 3 == 1) CHECK(decode(t.path(), i) == decode(t5.path(), i));
    }
    CHECK(packed >= 2);
    REQUIRE(packed != 0);
    CHECK(v6.b.size() < v5.b.size());

    // Through a pipe, whose reader meets the changed block before the end frame.
    const rt::Segment& s = h.segments[k];
    const auto error = [&](std::span<const std::byte> state) { return pipe_error(with_state(v6, h, k, state).b); };
    const auto at = [&](ErrorKind kind, const std::string& message) { return show(kind, s.state_offset, -1, s.first_record, message); };
    std::vector<std::byte> block(s.state_size);
    std::memcpy(block.data(), v6.b.data() + s.state_offset, block.size());
    CHECK(error(block) == "no error");
    block.pop_back();
    CHECK(error(block) == at(ErrorKind::bad_section, "the state block does not decode: the zstd frame is cut short"));
    CHECK(error(zstd_of(std::vector<std::byte>(64, std::byte{'X'}))) ==
          at(ErrorKind::bad_section, "a state block entry of kind 88, which this reader does not know (byte 0 of the decompressed state block)"));
    std::vector<std::byte> cursor(64, std::byte{0});
    cursor[0] = std::byte{'C'};
    cursor[1] = std::byte{5};
    CHECK(error(zstd_of(cursor)) == at(ErrorKind::bad_metadata, "the state block sets a cursor in section 5, which holds no values there (byte 0 of the decompressed state block)"));
    // A few bytes that declare megabytes cost the budget before they are decoded.
    const std::string bomb = error(zstd_of(std::vector<std::byte>(std::size_t(1) << 20, std::byte{'C'})));
    CHECK(bomb.starts_with(at(ErrorKind::bad_section, "a compressed state block that declares 1048576 bytes, more than the limit for the ")));
    CHECK(bomb.ends_with(" bytes of records read (see ReaderLimits)"));
}

}  // TEST_SUITE
