// What the tests of malformed version-2 and -3 traces share: the formats,
// the traces they corrupt, Layout (the frames decoded from the bytes,
// not with the runtime), and reading a trace from its file and a pipe.
#pragma once

#include <fcntl.h>
#include <unistd.h>
#include <cstring>
#include <string>
#include <vector>
#include <metatf/container/codec.hpp>
#include <metatf/io/generic.hpp>
#include <features.hpp>
#include <hatf10.hpp>
#include <repeats.hpp>
#include <doctest/doctest.h>
#include "../address_sanitizer.hpp"
#include "trace_support.hpp"

namespace metatf::test::segments_v2 {

namespace rt = metatf::rt;
using rt::ErrorKind;


struct Format {
    const char* name;
    rt::Class cls;
    rt::ByteOrder order;
    std::uint8_t version;
    rt::WriterOptions options(std::size_t chunk_bytes) const { return {cls, order, chunk_bytes, {true, {}}, version}; }
};
inline constexpr Format formats[] = {
    {"version 2, 64-bit little-endian", rt::Class::bits64, rt::ByteOrder::little, 2},
    {"version 2, 32-bit big-endian", rt::Class::bits32, rt::ByteOrder::big, 2},
    {"version 3, 64-bit little-endian", rt::Class::bits64, rt::ByteOrder::little, 3},
    {"version 3, 32-bit big-endian", rt::Class::bits32, rt::ByteOrder::big, 3},
};

// A trace's layout, decoded from its bytes: the prologue, the segment
// frames, their chunk entries and state blocks, the end frame and its footer.
struct Layout {
    struct Entry {
        std::uint64_t at;  // section, codec, 2 reserved bytes, stored size (a word), decoded size (a word)
        std::uint8_t section;
        std::uint64_t start, size;  // the chunk's bytes
    };
    struct Frame {
        std::uint64_t at, records, first_record;
        std::uint8_t start_section;
        std::vector<Entry> chunks;
        std::uint64_t payload, end;  // the chunks' bytes
        std::uint64_t state_at = 0, state_size = 0;  // the state block, between the entries and the chunks
    };

    unsigned w = 0;
    std::uint64_t text = 0, data_start = 0, end_frame = 0, records = 0;
    std::vector<Frame> segments;

    static Layout decode(const TraceBytes& b) {
        Layout l;
        l.w = b.word_size();
        l.text = l.name_at() + b.b.at(6);
        l.data_start = l.text + b.get(TraceBytes::ident, l.w);
        std::uint64_t at = l.data_start;
        while (at < b.b.size() && b.b[at] == 'S') {
            Frame f{at, b.get(at + 8, l.w), l.records, b.b.at(at + 1), {}, 0, 0};
            const std::uint64_t count = b.get(at + 2, 2);
            f.state_at = l.entry_at(at, count);
            f.state_size = b.get(at + 8 + l.w, l.w);
            f.payload = f.state_at + f.state_size;
            std::uint64_t start = f.payload;
            for (std::uint64_t i = 0; i < count; ++i) {
                const std::uint64_t entry = l.entry_at(at, i);
                f.chunks.push_back({entry, b.b.at(entry), start, b.get(entry + 4, l.w)});
                start += f.chunks.back().size;
            }
            f.end = start;
            l.records += f.records;
            l.segments.push_back(f);
            at = start;
        }
        l.end_frame = at;
        return l;
    }

    std::uint64_t name_at() const { return TraceBytes::ident + w; }
    std::uint64_t entry_at(std::uint64_t frame, std::uint64_t i) const { return frame + 8 + 2 * w + i * (4 + 2 * w); }
    // The end frame's fields: the totals, the index entries (`part` 0 a
    // frame's offset, 1 its first record), the footer.
    std::uint64_t total_at() const { return end_frame + 8; }
    std::uint64_t count_at() const { return end_frame + 8 + w; }
    std::uint64_t index_at(std::size_t segment, unsigned part) const { return end_frame + 8 + (2 + 2 * segment + part) * w; }
    std::uint64_t footer_at() const { return index_at(segments.size(), 0); }
    std::uint64_t size() const { return footer_at() + w + 4; }

    const Frame* segment_of(std::uint64_t at) const {
        for (const Frame& f : segments) {
            if (at >= f.at && at < f.end) return &f;
        }
        return nullptr;
    }
    // Bytes a generated reader does not check: the DTD's name and text (its
    // fingerprint decides), the records and the state blocks (whose changes
    // may still parse).
    bool unchecked(std::uint64_t at) const {
        const Frame* f = segment_of(at);
        return (at >= name_at() && at < data_start) || (f && at >= f->state_at);
    }
};

// What reading a trace gives from its file and from a pipe: the error, or "no error".
struct Outcome {
    std::string file, pipe;
};
inline const std::string no_error = "no error";

// Reads `bytes` from a pipe, which the reader cannot seek, so it streams. The
// trace fits in the pipe, whose writing end is closed before reading: the
// reader meets the end of the input and never waits.
template <typename Reader>
std::string read_pipe(const std::vector<std::uint8_t>& bytes) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(bytes.size() <= static_cast<std::size_t>(::fcntl(fds[1], F_GETPIPE_SZ)));
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fds[1], bytes.data() + done, bytes.size() - done);
        REQUIRE(n > 0);
        done += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
    const auto e = error_of([&] { read_all<Reader>("/dev/fd/" + std::to_string(fds[0])); });
    ::close(fds[0]);
    return show(e);
}

template <typename Reader>
Outcome read_both(const TempTrace& t, const TraceBytes& b) {
    b.save(t.path());
    return {show(metatf::test::read_error<Reader>(t.path())), read_pipe<Reader>(b.b)};
}

// One error from both readings, the pipe's at record `pipe_record`.
inline Outcome both(ErrorKind kind, std::uint64_t offset, int section, std::uint64_t file_record, std::uint64_t pipe_record,
             const std::string& message) {
    return {show(kind, offset, section, file_record, message), show(kind, offset, section, pipe_record, message)};
}

// A frame's error: from a file on opening, from a pipe at the record where the frame is reached.
inline Outcome frame_error(ErrorKind kind, std::uint64_t offset, std::uint64_t pipe_record, const std::string& message) {
    return both(kind, offset, -1, 0, pipe_record, message);
}

inline void check(const Outcome& got, const Outcome& expected) {
    CHECK(got.file == expected.file);
    CHECK(got.pipe == expected.pipe);
}

// ---- the traces

// Writes a trace in a format.
using Write = void (*)(const std::string& path, const Format& f);
inline constexpr std::size_t small_chunks = 16;

// hatf10: records of 12, 9, 9, 5, 9 and 5 bytes. With chunks of 16 bytes the
// writer ends a segment after records 1 and 4: segments of 2, 3 and 1
// records, of 21, 23 and 5 bytes, each one chunk of section 0.
inline void write_hatf10(const std::string& path, const Format& f) {
    using namespace hatf10;
    Writer w(path, f.options(small_chunks));
    w.comment("malformed");
    w.write(Alloc{.size = 24, .address = 0x1000});
    w.write(Alloc{.size = 32, .address = 0x2000});
    w.write(Free{.address = 0x1000});
    w.write(Alloc{.size = 16, .address = 0x3000});
    w.write(Free{.address = 0x2000});
    w.close();
}

// repeats: groups of 9, 7, 5, 11 and 7 bytes, in segments of 2, 2 and 1.
inline void write_repeats(const std::string& path, const Format& f) {
    using namespace repeats;
    Writer w(path, f.options(small_chunks));
    w.write(Group{.n = 2, .n_items = {{.x = 1}, {.x = 2}}});
    w.write(Group{.n = 1, .n_items = {{.x = 3}}});
    w.write(Group{.n = 0, .n_items = {}});
    w.write(Group{.n = 3, .n_items = {{.x = 4}, {.x = 5}, {.x = 6}}});
    w.write(Group{.n = 1, .n_items = {{.x = 7}}});
    w.close();
}

// features, with sections: records 0-5 (tick, section 3, four marks) end a
// segment in section 3, with chunks of sections 0 and 3; records 6-8
// (section 0, tick, an event whose addr goes to section 2) one that starts in
// section 3, with chunks of sections 0, 2 and 3; record 9 (a tick) the last.
inline void write_features(const std::string& path, const Format& f) {
    using namespace features;
    Writer w(path, f.options(small_chunks));
    w.write(Tick{.id = 1});
    w.section(3);
    for (std::uint64_t id = 1; id <= 4; ++id) w.write(Mark{.id = id});
    w.section(0);
    w.write(Tick{.id = 2});
    Event e{};
    e.seq = 103;  // stride 100 3
    e.konst = 7;
    e.base = 0x10000;
    e.label = rt::as_bytes("abc");
    e.addr = 0x7f0000000000;
    w.write(e);
    w.write(Tick{.id = 3});
    w.close();
}

// hatf10 compressed: 1000 allocs in chunks of about 4 KiB, each a zstd frame.
inline void write_zstd(const std::string& path, const Format& f) {
    using namespace hatf10;
    rt::WriterOptions options = f.options(4096);
    options.compress = 3;
    Writer w(path, options);
    for (std::uint64_t i = 0; i < 1000; ++i) w.write(Alloc{.size = 16 + i % 4 * 8, .address = 0x1000 + i * 32});
    w.close();
}

// A trace written by `write` in `f`, its bytes changed by `change`, read both ways.
template <typename Reader, typename Change>
Outcome corrupt(const TempTrace& t, const Format& f, Write write, Change&& change) {
    write(t.path(), f);
    TraceBytes b = TraceBytes::load(t.path());
    change(b);
    return read_both<Reader>(t, b);
}

template <typename Change>
Outcome corrupt_hatf10(const TempTrace& t, const Format& f, Change&& change) {
    return corrupt<hatf10::Reader>(t, f, write_hatf10, change);
}

inline Layout layout_of(const TempTrace& t, const Format& f, Write write) {
    write(t.path(), f);
    return Layout::decode(TraceBytes::load(t.path()));
}

inline const std::string unfinished = "its writer did not finish it ('mtf recover' saves its complete segments)";

// How a trace cut after `size` bytes is refused, from a file and from a pipe.
inline Outcome cut_error(const Layout& l, std::uint64_t size) {
    const std::uint64_t name = l.name_at();  // after the ident and one word, the DTD text's length
    if (size < TraceBytes::ident) return both(ErrorKind::bad_header, size, -1, 0, 0, "the file is too short for a Meta-TF header");
    if (size < name) return both(ErrorKind::truncated, size, -1, 0, 0, "the trace ends in the middle of the header's words");
    if (size < l.data_start) {
        // A file's DTD is checked against its size; a pipe runs dry in the name or the text.
        return {show(ErrorKind::bad_header, name, -1, 0, "the embedded DTD runs past the end of the file"),
                show(ErrorKind::truncated, size, -1, 0,
                     std::string("the trace ends in the middle of ") + (size < l.text ? "the DTD name" : "the embedded DTD"))};
    }
    // A file is checked for its footer first; a pipe reads the frames until
    // it runs dry, having read the records of the segments before the cut.
    const std::string file = show(ErrorKind::truncated, size, -1, 0, "the trace has no end frame: " + unfinished);
    const Layout::Frame* f = l.segment_of(size);
    const std::uint64_t records = f ? f->first_record : l.records;
    std::string pipe;
    if (size == (f ? f->at : l.end_frame)) {
        pipe = "the trace ends without its end frame: " + unfinished;
    } else {
        const char* part = !f ? "the end frame" : size < f->state_at ? "a segment frame" : size < f->payload ? "a state block" : "a chunk";
        pipe = std::string("the trace ends in the middle of ") + part;
    }
    return {file, show(ErrorKind::truncated, size, -1, records, pipe)};
}

// Every prefix of the trace `write` makes is refused, with the error that cut_error() predicts.
template <typename Reader>
void check_every_cut(Write write) {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-cut");
        write(t.path(), f);
        const TraceBytes whole = TraceBytes::load(t.path());
        const Layout l = Layout::decode(whole);
        REQUIRE(l.size() == whole.b.size());
        std::string wrong;
        for (std::uint64_t size = 0; size < whole.b.size(); ++size) {
            TraceBytes cut;
            cut.b.assign(whole.b.begin(), whole.b.begin() + static_cast<std::ptrdiff_t>(size));
            const Outcome got = read_both<Reader>(t, cut), expected = cut_error(l, size);
            if (got.file != expected.file || got.pipe != expected.pipe) {
                wrong += "\ncut at " + std::to_string(size) + ": " + got.file + " | " + got.pipe;
            }
        }
        CHECK(wrong == "");
    }
}

// Under AddressSanitizer a read costs about five times as much: there every
// third byte gets one bit flipped (bit `at % 8`, so every bit of a byte is
// flipped somewhere), and the normal build's run flips all eight of every
// byte.
inline constexpr bool sanitized = address_sanitizer;

// Every bit flipped (one bit per byte in the DTD text, which the reader does
// not check) is refused by both readings alike, or read by both when it is
// in a byte that Layout::unchecked() allows. Returns how many flips in the
// records were read.
template <typename Reader>
std::uint64_t check_every_flip(Write write) {
    std::uint64_t read = 0;
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-flip");
        write(t.path(), f);
        const TraceBytes whole = TraceBytes::load(t.path());
        const Layout l = Layout::decode(whole);
        std::string wrong;
        for (std::uint64_t at = 0; at < whole.b.size(); ++at) {
            if (sanitized && at % 3 != 0) continue;
            const bool one_bit = (at >= l.text && at < l.data_start) || sanitized;
            for (unsigned bit = one_bit ? at % 8 : 0; bit < (one_bit ? at % 8 + 1 : 8); ++bit) {
                TraceBytes b = whole;
                b.b[at] ^= static_cast<std::uint8_t>(1u << bit);
                const Outcome got = read_both<Reader>(t, b);
                const bool file_read = got.file == no_error, pipe_read = got.pipe == no_error;
                read += file_read && l.segment_of(at);
                // Versions 2 and 3 differ in bit 0: a trace whose state blocks are empty reads as either.
                const bool other_version = at == 7 && bit == 0;
                if (file_read != pipe_read || (file_read && !l.unchecked(at) && !other_version)) {
                    wrong += "\nbit " + std::to_string(bit) + " of byte " + std::to_string(at) + ": " + got.file + " | " + got.pipe;
                }
            }
        }
        CHECK(wrong == "");
    }
    return read;
}

}  // namespace metatf::test::segments_v2
