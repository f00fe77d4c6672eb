// Malformed traces in container versions 2 and 3, continued from
// test_malformed_v2.cpp: zstd chunks, the end frame and its footer, every
// prefix of a trace and every bit flipped, read from a file and a pipe.
#include <doctest/doctest.h>

#include "malformed_v2_support.hpp"

namespace rt = metatf::rt;
using namespace metatf::test;
using rt::ErrorKind;
using namespace metatf::test::segments_v2;

TEST_SUITE("malformed traces in segments") {

TEST_CASE("zstd chunks read back, from a file and from a pipe") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-zstd");
        const Layout l = layout_of(t, f, write_zstd);
        const TraceBytes b = TraceBytes::load(t.path());
        REQUIRE(l.segments.size() == 3);
        for (const Layout::Frame& s : l.segments) {
            REQUIRE(s.chunks.size() == 1);
            CHECK(b.b[s.chunks[0].at + 1] == 1);                             // codec: zstd
            CHECK(s.chunks[0].size * 4 < b.get(s.chunks[0].at + 4 + l.w, l.w));  // much smaller than decoded
        }
        CHECK(read_both<hatf10::Reader>(t, b).file == no_error);
        CHECK(read_both<hatf10::Reader>(t, b).pipe == no_error);
        std::uint64_t allocs = 0, sizes = 0;
        hatf10::Reader r(t.path());
        r.visit([&]<typename R>(const R& record) {
            if constexpr (std::is_same_v<R, hatf10::Alloc>) {
                CHECK(record.address == 0x1000 + allocs * 32);
                sizes += record.size;
                ++allocs;
            }
        });
        CHECK(allocs == 1000);
        CHECK(sizes == 250 * (16 + 24 + 32 + 40));
    }
}

TEST_CASE("a zstd chunk's decoded size that disagrees with its bytes, or is too large") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-zstd-sizes");
        const Layout l = layout_of(t, f, write_zstd);
        const unsigned w = l.w;
        // The second chunk: a file's reader decompresses it ahead, while the
        // first is read, and must still name the record it reached.
        const Layout::Entry& c = l.segments[1].chunks[0];
        const std::uint64_t first = l.segments[1].first_record;
        const std::uint64_t decoded = TraceBytes::load(t.path()).get(c.at + 4 + w, w);
        auto declare = [&](std::uint64_t d) {
            return corrupt<hatf10::Reader>(t, f, write_zstd, [&](TraceBytes& b) { b.set(c.at + 4 + w, d, w); });
        };
        const std::string n = std::to_string(decoded);
        check(declare(decoded + 1), both(ErrorKind::bad_section, c.start, 0, first, first,
                                         "a zstd chunk decodes to " + n + " bytes, not the " + std::to_string(decoded + 1) + " its entry declares"));
        check(declare(decoded - 1), both(ErrorKind::bad_section, c.start, 0, first, first,
                                         "a zstd chunk expands to more than the " + std::to_string(decoded - 1) + " bytes its entry declares"));
        // A bomb's claim is refused before anything is allocated for it:
        // beyond what a reader takes from a chunk of its size, or from any.
        const std::uint64_t most = rt::max_decoded(c.size);
        check(declare(most + 1), frame_error(ErrorKind::bad_section, c.at + 4 + w, first,
                                             "a zstd chunk of " + std::to_string(c.size) + " bytes that decodes to " +
                                                 std::to_string(most + 1) + ", more than the " + std::to_string(most) + " a reader takes from it"));
        const std::uint64_t huge = w == 8 ? std::uint64_t(1) << 40 : 0xffffffffu;
        check(declare(huge), frame_error(ErrorKind::bad_section, c.at + 4 + w, first,
                                         "a chunk that decodes to " + std::to_string(huge) + " bytes, more than the 268435456 a reader takes"));
    }
}

// The allocs of a write_zstd trace, as (size, address) pairs.
std::vector<std::pair<std::uint64_t, std::uint64_t>> allocs_of(const std::string& path) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    hatf10::Reader r(path);
    r.visit([&]<typename R>(const R& record) {
        if constexpr (std::is_same_v<R, hatf10::Alloc>) out.emplace_back(record.size, record.address);
    });
    return out;
}

// A few bits of a zstd frame do not shape what it decodes to (in its
// header, the window size it asks for, within what the chunk needs; in its
// blocks, bits the decoder does not use): flipped, the chunk still decodes
// to the same bytes, which its checksum confirms.
TEST_CASE("every bit flipped in a zstd chunk is refused as that chunk's error, or changes no record") {
    const Format& f = formats[0];
    TempTrace t("v2-zstd-flips");
    const Layout l = layout_of(t, f, write_zstd);
    const TraceBytes base = TraceBytes::load(t.path());
    const auto records = allocs_of(t.path());
    const Layout::Entry& c = l.segments[0].chunks[0];
    const std::string at = show(ErrorKind::bad_section, c.start, 0, 0, "a zstd chunk ");
    int harmless = 0;
    for (std::uint64_t i = c.start; i < c.start + c.size; ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            CAPTURE(i);
            CAPTURE(bit);
            TraceBytes b = base;
            b.b[i] ^= static_cast<std::uint8_t>(1u << bit);
            const Outcome got = read_both<hatf10::Reader>(t, b);
            CHECK(got.pipe == got.file);
            if (got.file == no_error) {
                CHECK(allocs_of(t.path()) == records);
                ++harmless;
            } else {
                CHECK_MESSAGE(got.file.starts_with(at), got.file);
            }
        }
    }
    MESSAGE(harmless << " of " << c.size * 8 << " flips change no record");
    CHECK(harmless < 32);
}

// ---- the end frame

TEST_CASE("an end frame that does not start with E") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-end-kind");
        const Layout l = layout_of(t, f, write_hatf10);
        check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[l.end_frame] = 'X'; }),
              frame_error(ErrorKind::bad_section, l.end_frame, 6, "a segment frame should start here, not byte 88"));
        // An S makes it a segment frame, of 0 chunks (its reserved bytes).
        check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[l.end_frame] = 'S'; }),
              frame_error(ErrorKind::bad_section, l.end_frame + 2, 6, "a segment of 0 chunks"));
    }
}

TEST_CASE("an end frame's reserved bytes") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-end-reserved");
        const Layout l = layout_of(t, f, write_hatf10);
        for (std::uint64_t at = l.end_frame + 1; at < l.end_frame + 8; ++at) {
            CAPTURE(at);
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[at] = 1; }),
                  frame_error(ErrorKind::bad_header, l.end_frame + 1, 6, "an end frame whose reserved bytes are not 0"));
        }
    }
}

TEST_CASE("an end frame's totals") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-end-totals");
        const Layout l = layout_of(t, f, write_hatf10);
        for (std::uint64_t records : {0u, 5u, 7u, 0xffffffffu}) {
            CAPTURE(records);
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(l.total_at(), records, l.w); }),
                  frame_error(ErrorKind::bad_header, l.total_at(), 6,
                              "the end frame counts " + std::to_string(records) + " records, but the segments hold 6"));
        }
        for (std::uint64_t segments : {0u, 2u, 4u, 0xffffffffu}) {
            CAPTURE(segments);
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(l.count_at(), segments, l.w); }),
                  frame_error(ErrorKind::bad_header, l.count_at(), 6,
                              "the end frame counts " + std::to_string(segments) + " segments, but the trace has 3"));
        }
    }
}

TEST_CASE("an end frame's segment index") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-end-index");
        const Layout l = layout_of(t, f, write_hatf10);
        for (std::size_t i = 0; i < l.segments.size(); ++i) {
            const Layout::Frame& s = l.segments[i];
            const std::string wrong = "entry " + std::to_string(i) + " of the segment index is wrong";
            for (std::uint64_t offset : {s.at - 1, s.at + 1, std::uint64_t(0), l.end_frame}) {
                CAPTURE(offset);
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(l.index_at(i, 0), offset, l.w); }),
                      frame_error(ErrorKind::bad_header, l.index_at(i, 0), 6, wrong));
            }
            for (std::uint64_t first : {s.first_record + 1, s.first_record + s.records, std::uint64_t(0xffffffffu)}) {
                CAPTURE(first);
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(l.index_at(i, 1), first, l.w); }),
                      frame_error(ErrorKind::bad_header, l.index_at(i, 1), 6, wrong));
            }
        }
    }
}

TEST_CASE("a footer that points elsewhere") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-footer");
        const Layout l = layout_of(t, f, write_hatf10);
        for (std::uint64_t offset : {l.end_frame - 1, l.end_frame + 1, l.segments[2].at, std::uint64_t(0), l.size(),
                                     std::uint64_t(0xffffffffu)}) {
            CAPTURE(offset);
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(l.footer_at(), offset, l.w); }),
                  frame_error(ErrorKind::bad_header, l.footer_at(), 6, "the footer does not point to the end frame"));
        }
    }
}

TEST_CASE("a footer that does not end with \\177END") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-footer-magic");
        const Layout l = layout_of(t, f, write_hatf10);
        const std::uint64_t magic = l.footer_at() + l.w;
        for (std::uint64_t at = magic; at < l.size(); ++at) {
            CAPTURE(at);
            // A file without its footer was never finished; a pipe reads the whole end frame first.
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[at] ^= 0x20; }),
                  {show(ErrorKind::truncated, l.size(), -1, 0, "the trace has no end frame: " + unfinished),
                   show(ErrorKind::bad_header, magic, -1, 6, "the footer does not end with \\177END")});
        }
    }
}

TEST_CASE("bytes after the end frame") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-after-end");
        const Layout l = layout_of(t, f, write_hatf10);
        const std::string follow = "bytes follow the end frame";
        // A second footer after the first: the file has a footer, and the end frame is not last.
        check(corrupt_hatf10(t, f,
                             [&](TraceBytes& b) {
                                 const std::vector<std::uint8_t> footer(b.b.end() - (l.w + 4), b.b.end());
                                 b.b.insert(b.b.end(), footer.begin(), footer.end());
                             }),
              frame_error(ErrorKind::bad_header, l.size(), 6, follow));
        // One byte: the file has no footer any more.
        check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b.push_back(0); }),
              {show(ErrorKind::truncated, l.size() + 1, -1, 0, "the trace has no end frame: " + unfinished),
               show(ErrorKind::bad_header, l.size(), -1, 6, follow)});
    }
}

// ---- every prefix, every bit

TEST_CASE("every prefix of a trace is refused, from a file and from a pipe") {
    SUBCASE("hatf10") { check_every_cut<hatf10::Reader>(write_hatf10); }
    SUBCASE("repeats") { check_every_cut<repeats::Reader>(write_repeats); }
    SUBCASE("features") { check_every_cut<features::Reader>(write_features); }
}

TEST_CASE("every bit flipped is refused, or read alike from a file and a pipe when it is in the records") {
    // Some flips in the records must still read, or the sweep tells nothing about them.
    SUBCASE("hatf10") { CHECK(check_every_flip<hatf10::Reader>(write_hatf10) > 0); }
    SUBCASE("repeats") { CHECK(check_every_flip<repeats::Reader>(write_repeats) > 0); }
    SUBCASE("features") { CHECK(check_every_flip<features::Reader>(write_features) > 0); }
}

}  // TEST_SUITE
