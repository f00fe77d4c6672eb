// Malformed traces in container versions 2 and 3 (docs/trace-format.md
// sections 1 and 7-10): every field of a segment frame and of the end frame, every
// prefix of a trace and every bit flipped. Each trace is read twice, from its
// file (the reader checks the frames when it opens it) and from a pipe (it
// checks each frame as it arrives), and both readings must refuse it, each
// with its exact error. The expected offsets come from Layout, which decodes
// the frames from the bytes here, not with the runtime.
//
// A frame's error is at the first byte of the field that is wrong. From a
// file it is raised on opening, at record 0; from a pipe, when the frame is
// reached, at the record the reader was at: the segment's first.
#include <doctest/doctest.h>

#include "malformed_v2_support.hpp"

namespace rt = metatf::rt;
using namespace metatf::test;
using rt::ErrorKind;
using namespace metatf::test::segments_v2;

TEST_SUITE("malformed traces in segments") {

TEST_CASE("the base traces read back and have the layout the tests assume") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-layout");
        const unsigned w = f.cls == rt::Class::bits32 ? 4 : 8;
        write_hatf10(t.path(), f);
        const TraceBytes b = TraceBytes::load(t.path());
        const Layout l = Layout::decode(b);
        CHECK(b.b[7] == f.version);
        CHECK(l.w == w);
        CHECK(l.data_start == l.name_at() + std::strlen(hatf10::dtd.name) + std::strlen(hatf10::dtd.text));
        REQUIRE(l.segments.size() == 3);
        const std::uint64_t records[] = {2, 3, 1}, sizes[] = {21, 23, 5};
        for (std::size_t i = 0; i < 3; ++i) {
            const Layout::Frame& s = l.segments[i];
            CAPTURE(i);
            CHECK(s.at == (i == 0 ? l.data_start : l.segments[i - 1].end));
            CHECK(s.start_section == 0);
            CHECK(b.get(s.at + 4, 4) == 0);      // reserved
            CHECK(b.get(s.at + 8 + w, w) == 0);  // no state block
            CHECK(s.records == records[i]);
            REQUIRE(s.chunks.size() == 1);
            CHECK(s.chunks[0].section == 0);
            CHECK(b.b[s.chunks[0].at + 1] == 0);            // codec: stored
            CHECK(b.get(s.chunks[0].at + 2, 2) == 0);       // reserved
            CHECK(b.get(s.chunks[0].at + 4 + w, w) == sizes[i]);  // decoded size
            CHECK(s.chunks[0].size == sizes[i]);
            CHECK(s.payload == s.at + 12 + 4 * w);
            CHECK(b.get(l.index_at(i, 0), w) == s.at);
            CHECK(b.get(l.index_at(i, 1), w) == s.first_record);
        }
        CHECK(b.b[l.end_frame] == 'E');
        CHECK(b.get(l.end_frame + 1, 7) == 0);  // reserved
        CHECK(b.get(l.total_at(), w) == 6);
        CHECK(b.get(l.count_at(), w) == 3);
        CHECK(b.get(l.footer_at(), w) == l.end_frame);
        CHECK(std::string(b.b.end() - 4, b.b.end()) == "\177END");
        CHECK(l.size() == b.b.size());
        CHECK(read_all<hatf10::Reader>(t.path()) == 6);
        CHECK(read_pipe<hatf10::Reader>(b.b) == no_error);
    }
}

TEST_CASE("the features trace has segments with chunks of several sections") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-features");
        const Layout l = layout_of(t, f, write_features);
        REQUIRE(l.segments.size() == 3);
        auto sections = [&](std::size_t i) {
            std::vector<int> out;
            for (const auto& c : l.segments[i].chunks) out.push_back(c.section);
            return out;
        };
        CHECK(sections(0) == std::vector<int>{0, 3});
        CHECK(sections(1) == std::vector<int>{0, 2, 3});
        CHECK(sections(2) == std::vector<int>{0});
        CHECK(l.segments[0].start_section == 0);
        CHECK(l.segments[1].start_section == 3);
        CHECK(l.segments[1].first_record == 6);
        CHECK(l.segments[2].first_record == 9);
        CHECK(read_all<features::Reader>(t.path()) == 10);
        CHECK(read_pipe<features::Reader>(TraceBytes::load(t.path()).b) == no_error);
    }
}

TEST_CASE("a segment that a section record ends starts in the section it leads to") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-section-end");
        {
            using namespace features;
            Writer w(t.path(), f.options(small_chunks));
            for (std::uint64_t id = 1; id <= 5; ++id) w.write(Tick{.id = id});  // 15 bytes
            w.section(3);                                                          // 17: the segment ends
            w.write(Mark{.id = 1});
            w.close();
        }
        const Layout l = Layout::decode(TraceBytes::load(t.path()));
        REQUIRE(l.segments.size() == 2);
        CHECK(l.segments[1].first_record == 6);
        CHECK(l.segments[1].start_section == 3);
        CHECK(read_all<features::Reader>(t.path()) == 7);
        CHECK(read_pipe<features::Reader>(TraceBytes::load(t.path()).b) == no_error);
    }
}

// ---- segment frames

TEST_CASE("a segment frame that does not start with S") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-frame-kind");
        for (const Layout::Frame& s : layout_of(t, f, write_hatf10).segments) {
            CAPTURE(s.at);
            for (std::uint8_t kind : {0, int{'X'}, int{'s'}, 0xd3}) {
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[s.at] = kind; }),
                      frame_error(ErrorKind::bad_section, s.at, s.first_record,
                                  "a segment frame should start here, not byte " + std::to_string(kind)));
            }
            // An E makes it an end frame, whose reserved bytes are the frame's chunk count and more.
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[s.at] = 'E'; }),
                  frame_error(ErrorKind::bad_header, s.at + 1, s.first_record, "an end frame whose reserved bytes are not 0"));
        }
    }
}

TEST_CASE("a segment's start section with no chunk in the segment") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-start-section");
        for (const Layout::Frame& s : layout_of(t, f, write_hatf10).segments) {
            CAPTURE(s.at);
            for (std::uint8_t section : {1, 7, 255}) {
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[s.at + 1] = section; }),
                      frame_error(ErrorKind::bad_section, s.at + 1, s.first_record,
                                  "a segment that starts in section " + std::to_string(section) + " but holds no chunk of it"));
            }
        }
    }
}

TEST_CASE("a segment's start section naming another of its chunks") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-start-other");
        const Layout l = layout_of(t, f, write_features);
        auto start = [&](std::size_t segment, std::uint8_t section) {
            return corrupt<features::Reader>(t, f, write_features,
                                             [&](TraceBytes& b) { b.b[l.segments[segment].at + 1] = section; });
        };
        // Segment 0 (records 0-5) made to start in section 3: its chunk of
        // section 3 is reached at record 2, after the section record.
        const Layout::Entry& marks = l.segments[0].chunks[1];
        check(start(0, 3), both(ErrorKind::bad_section, marks.start, 3, 2, 2,
                                "the segment frames say this chunk starts with record 0, not record 2"));
        // Segment 1 (records 6-8) made to start in section 0: record 6 is the
        // section record in section 3, and section 0's chunk comes at record 7.
        const Layout::Entry& ticks = l.segments[1].chunks[0];
        check(start(1, 0), both(ErrorKind::bad_section, ticks.start, 0, 7, 7,
                                "the segment frames say this chunk starts with record 6, not record 7"));
        // ... or in section 2, which holds the event's addr, read within record 8.
        const Layout::Entry& values = l.segments[1].chunks[1];
        check(start(1, 2), both(ErrorKind::bad_section, values.start, 2, 8, 8,
                                "the segment frames say this chunk starts with record 6, but section 2 holds strided values"));
    }
}

TEST_CASE("a segment's chunk count") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-chunk-count");
        const Layout l = layout_of(t, f, write_hatf10);
        for (const Layout::Frame& s : l.segments) {
            CAPTURE(s.at);
            for (std::uint64_t count : {0, 257, 0xffff}) {
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(s.at + 2, count, 2); }),
                      frame_error(ErrorKind::bad_section, s.at + 2, s.first_record, "a segment of " + std::to_string(count) + " chunks"));
            }
        }
        // More chunks than the frame has: the first bytes of the records are
        // read as a chunk entry. Segment 1's alloc record, tag 4 and size 32:
        // in a 64-bit little-endian trace 32 is the codec; in a 32-bit
        // big-endian one the section is 4, the codec and reserved bytes 0,
        // and the sizes are 0x20000020 and 0x00050000.
        const Layout::Frame& s = l.segments[1];
        const bool le = f.order == rt::ByteOrder::little;
        check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(s.at + 2, 2, 2); }),
              le ? frame_error(ErrorKind::bad_section, s.payload + 1, 2, "a chunk stored with codec 32, which this reader does not know")
                 : frame_error(ErrorKind::bad_section, s.payload + 4, 2, "a stored chunk whose two sizes differ"));
        // More chunks than there are bytes: the last frame's second entry runs
        // out. A file has no footer then; a pipe runs dry in the frame.
        const Layout::Frame& last = l.segments[2];
        const std::uint64_t cut = last.payload + 3;
        check(corrupt_hatf10(t, f,
                             [&](TraceBytes& b) {
                                 b.set(last.at + 2, 2, 2);
                                 b.b.resize(cut);
                             }),
              {show(ErrorKind::truncated, cut, -1, 0, "the trace has no end frame: " + unfinished),
               show(ErrorKind::truncated, cut, -1, 5, "the trace ends in the middle of a segment frame")});
    }
}

TEST_CASE("a segment frame's reserved bytes") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-frame-reserved");
        for (const Layout::Frame& s : layout_of(t, f, write_hatf10).segments) {
            for (std::uint64_t at = s.at + 4; at < s.at + 8; ++at) {
                CAPTURE(at);
                for (std::uint8_t value : {1, 0x80}) {
                    check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[at] = value; }),
                          frame_error(ErrorKind::bad_section, s.at + 4, s.first_record, "a segment frame whose reserved bytes are not 0"));
                }
            }
        }
    }
}

TEST_CASE("a segment's record count that disagrees with its records") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-records");
        const Layout l = layout_of(t, f, write_hatf10);
        for (std::size_t i = 0; i < l.segments.size(); ++i) {
            const Layout::Frame& s = l.segments[i];
            const bool last = i + 1 == l.segments.size();
            // (The largest count only where the end frame is left alone: its sums would outgrow a 32-bit word.)
            for (std::uint64_t count : {s.records - 1, s.records + 1, std::uint64_t(0), std::uint64_t(0xffffffffu)}) {
                CAPTURE(i);
                CAPTURE(count);
                const std::uint64_t total = l.records - s.records + count;
                // A file: the end frame's total disagrees. A pipe: the next
                // segment's first record is not where the counts put it, or,
                // after the last segment, the end frame disagrees.
                const std::string totals = "the end frame counts 6 records, but the segments hold " + std::to_string(total);
                const Layout::Frame* next = last ? nullptr : &l.segments[i + 1];
                const Outcome expected{
                    show(ErrorKind::bad_header, l.total_at(), -1, 0, totals),
                    next ? show(ErrorKind::bad_section, next->payload, 0, next->first_record,
                                "the segment frames say this chunk starts with record " + std::to_string(total - l.records + next->first_record) +
                                    ", not record " + std::to_string(next->first_record))
                         : show(ErrorKind::bad_header, l.total_at(), -1, l.records, totals)};
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(s.at + 8, count, l.w); }), expected);

                // The end frame made to agree (its total and the later index entries):
                // both readings find the records where the counts do not put them.
                const auto agreeing = [&](TraceBytes& b) {
                    b.set(s.at + 8, count, l.w);
                    b.set(l.total_at(), total, l.w);
                    for (std::size_t j = i + 1; j < l.segments.size(); ++j) {
                        b.set(l.index_at(j, 1), l.segments[j].first_record - s.records + count, l.w);
                    }
                };
                const Outcome expected_agreeing =
                    next ? both(ErrorKind::bad_section, next->payload, 0, next->first_record, next->first_record,
                                "the segment frames say this chunk starts with record " +
                                    std::to_string(total - l.records + next->first_record) + ", not record " +
                                    std::to_string(next->first_record))
                         : both(ErrorKind::bad_header, l.end_frame, 0, l.records, l.records,
                                "the segment frames count " + std::to_string(total) + " records, but the trace holds 6");
                if (count != 0xffffffffu) check(corrupt_hatf10(t, f, agreeing), expected_agreeing);
            }
        }
    }
}

// The features trace's state blocks: segment 1 restores tick.id's delta
// (previous value 1); segment 2 also event.seq's stride (previous 103,
// stride 3) and the cursor of value section 2 (one 8-byte element in).
TEST_CASE("the state blocks of a version-3 trace") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v3-state");
        const Layout l = layout_of(t, f, write_features);
        const TraceBytes b = TraceBytes::load(t.path());
        if (f.version == 2) {
            for (const Layout::Frame& s : l.segments) CHECK(s.state_size == 0);
            continue;
        }
        REQUIRE(l.segments.size() == 3);
        CHECK(l.segments[0].state_size == 0);  // the DTD's own encodings
        auto field_entry = [&](std::uint64_t at, std::uint8_t tag, std::uint8_t field, rt::MetaOp op, std::uint64_t a) {
            CHECK(b.b[at] == 'F');
            CHECK(b.b[at + 1] == 0);  // the record's section: 0, a global record
            CHECK(b.b[at + 2] == tag);
            CHECK(b.get(at + 3, 4) == field);  // 4 bytes: a DTD's field may be past the 255 metadata names
            CHECK(b.b[at + 7] == static_cast<std::uint8_t>(op));
            CHECK(b.get(at + 8, 8) == a);  // values take 8 bytes in either class
        };
        const Layout::Frame& one = l.segments[1];
        REQUIRE(one.state_size == 16);
        field_entry(one.state_at, 6, features::Tick::id_field, rt::MetaOp::delta, 1);
        const Layout::Frame& two = l.segments[2];
        REQUIRE(two.state_size == 24 + 16 + 10);
        field_entry(two.state_at, 5, features::Event::seq_field, rt::MetaOp::stride, 103);
        CHECK(b.get(two.state_at + 16, 8) == 3);
        field_entry(two.state_at + 24, 6, features::Tick::id_field, rt::MetaOp::delta, 2);
        CHECK(b.b[two.state_at + 40] == 'C');
        CHECK(b.b[two.state_at + 41] == 2);
        CHECK(b.get(two.state_at + 42, 8) == 8);
    }
}

TEST_CASE("a state block that is wrong is refused where the segment starts, from a file and from a pipe") {
    for (const Format& f : formats) {
        if (f.version != 3) continue;
        INFO("format: " << std::string(f.name));
        TempTrace t("v3-bad-state");
        const Layout l = layout_of(t, f, write_features);
        const std::uint64_t at = l.segments[1].state_at, first = l.segments[1].first_record;
        auto wrong = [&](auto&& change) { return corrupt<features::Reader>(t, f, write_features, change); };
        auto refused = [&](ErrorKind kind, std::uint64_t offset, const std::string& message) {
            return both(kind, offset, -1, first, first, message);
        };
        check(wrong([&](TraceBytes& b) { b.b[at] = 'X'; }),
              refused(ErrorKind::bad_section, at, "a state block entry of kind 88, which this reader does not know"));
        check(wrong([&](TraceBytes& b) { b.b[at + 1] = 9; }),
              refused(ErrorKind::bad_metadata, at, "the state block names tag 6 of section 9, which no record the metadata can change has"));
        check(wrong([&](TraceBytes& b) { b.b[at + 2] = 1; }),
              refused(ErrorKind::bad_metadata, at, "the state block names tag 1 of section 0, which no record the metadata can change has"));
        check(wrong([&](TraceBytes& b) { b.set(at + 3, 0, 4); }),
              refused(ErrorKind::bad_metadata, at, "the state block names field 0 of record 'tick'"));
        check(wrong([&](TraceBytes& b) { b.set(at + 3, 7, 4); }),
              refused(ErrorKind::bad_metadata, at, "the state block names field 7 of record 'tick'"));
        check(wrong([&](TraceBytes& b) { b.b[at + 7] = 200; }),
              refused(ErrorKind::bad_section, at + 7, "a state block entry with metadata property 200, which is unknown"));
        check(wrong([&](TraceBytes& b) {
                  b.b[at + 7] = static_cast<std::uint8_t>(rt::MetaOp::width);
                  b.set(at + 8, 9, 8);
              }),
              refused(ErrorKind::bad_metadata, at, "the state block changes field 'id' of record 'tick': width 9 is more than 8 bytes"));
        // A property with two values where the block holds one.
        check(wrong([&](TraceBytes& b) { b.b[at + 7] = static_cast<std::uint8_t>(rt::MetaOp::stride); }),
              refused(ErrorKind::bad_section, at + 16, "an entry runs past the end of its state block"));
        const std::uint64_t cursor = l.segments[2].state_at + 40, second = l.segments[2].first_record;
        check(wrong([&](TraceBytes& b) { b.b[cursor + 1] = 0; }),
              both(ErrorKind::bad_metadata, cursor, -1, second, second,
                   "the state block sets a cursor in section 0, which holds no values there"));
    }
}

// Frames that move a record from segment 0's count to segment 1's (the
// index agreeing): a read from the start finds it where segment 1 starts; a
// read of segment 0 alone, which stops at the record the frames say ends
// it, finds the record it would leave unread.
TEST_CASE("a read that stops where a segment starts finds a record the frames leave out") {
    for (const Format& f : formats) {
        if (f.version != 3) continue;
        INFO("format: " << std::string(f.name));
        TempTrace t("v3-miscount");
        const Layout l = layout_of(t, f, write_hatf10);
        TraceBytes b = TraceBytes::load(t.path());
        b.set(l.segments[0].at + 8, 1, l.w);
        b.set(l.segments[1].at + 8, 4, l.w);
        b.set(l.index_at(1, 1), 1, l.w);
        b.save(t.path());
        CHECK(show(metatf::test::read_error<hatf10::Reader>(t.path())) ==
              show(ErrorKind::bad_section, l.segments[1].chunks[0].start, 0, 2, "the segment frames say this chunk starts with record 1, not record 2"));
        const auto alone = error_of([&] {
            rt::TraceReader r(t.path(), hatf10::dtd);
            r.seek_segment(0);
            while (r.record_index() < 1 && r.begin_record()) {
                rt::GenericRecord g;
                rt::decode_generic(r, g);
            }
            r.check_segment_end(1);
        });
        // Record 1 (the first alloc, 12 bytes after the 12-byte comment) is left.
        CHECK(show(alone) == show(ErrorKind::bad_section, l.segments[0].chunks[0].start + 12, 0, 1,
                                  "the segment frames count 1 records up to here, but section 0's chunks hold more"));
    }
}

TEST_CASE("a version-2 segment frame with a state block") {
    for (const Format& f : formats) {
        if (f.version != 2) continue;
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-state");
        const Layout l = layout_of(t, f, write_hatf10);
        for (const Layout::Frame& s : l.segments) {
            for (std::uint64_t length : {1u, 0x80u, 0xffffffffu}) {
                CAPTURE(length);
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.set(s.at + 8 + l.w, length, l.w); }),
                      frame_error(ErrorKind::bad_section, s.at + 8 + l.w, s.first_record,
                                  "a version-2 segment frame with a state block"));
            }
        }
    }
}

TEST_CASE("a chunk of a section the DTD does not define") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-chunk-section");
        for (const Layout::Frame& s : layout_of(t, f, write_hatf10).segments) {
            const std::uint64_t entry = s.chunks[0].at;
            for (std::uint8_t section : {1, 7, 255}) {
                CAPTURE(section);
                // The segment's start section, 0, is left without a chunk.
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[entry] = section; }),
                      frame_error(ErrorKind::bad_section, s.at + 1, s.first_record, "a segment that starts in section 0 but holds no chunk of it"));
                // With the start section moved too, the section itself is refused.
                check(corrupt_hatf10(t, f,
                                     [&](TraceBytes& b) {
                                         b.b[entry] = section;
                                         b.b[s.at + 1] = section;
                                     }),
                      frame_error(ErrorKind::bad_section, entry, s.first_record,
                                  "a segment holds a chunk of section " + std::to_string(section) + ", which the DTD does not define"));
            }
        }
    }
}

TEST_CASE("two chunks of one section in a segment") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-chunk-twice");
        const Layout l = layout_of(t, f, write_features);
        const Layout::Frame& s = l.segments[1];  // chunks of sections 0, 2 and 3
        check(corrupt<features::Reader>(t, f, write_features, [&](TraceBytes& b) { b.b[s.chunks[2].at] = 2; }),
              frame_error(ErrorKind::bad_section, s.chunks[2].at, 6, "a segment with two chunks of section 2"));
    }
}

TEST_CASE("a chunk's codec") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-codec");
        for (const Layout::Frame& s : layout_of(t, f, write_hatf10).segments) {
            // A stored chunk said to be zstd: its first byte is a record's tag, not a zstd frame's magic number.
            check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[s.chunks[0].at + 1] = 1; }),
                  both(ErrorKind::bad_section, s.chunks[0].start, 0, s.first_record, s.first_record,
                       "a zstd chunk does not decode: Unknown frame descriptor"));
            // 0 (stored), 1 (zstd) and 2 (zstd in byte planes) are the codecs there are.
            for (std::uint8_t codec : {3, 255}) {
                CAPTURE(codec);
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[s.chunks[0].at + 1] = codec; }),
                      frame_error(ErrorKind::bad_section, s.chunks[0].at + 1, s.first_record,
                                  "a chunk stored with codec " + std::to_string(codec) + ", which this reader does not know"));
            }
        }
    }
}

TEST_CASE("a chunk in byte planes names 2 to 8 of them") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-entry-planes");
        const Layout layout = layout_of(t, f, write_hatf10);
        const Layout::Frame& s = layout.segments.front();
        const std::uint64_t entry = s.chunks[0].at;
        for (std::uint8_t planes : {0, 1, 9}) {
            CAPTURE(int(planes));
            check(corrupt_hatf10(t, f,
                                 [&](TraceBytes& b) {
                                     b.b[entry + 1] = 2;
                                     b.b[entry + 2] = planes;
                                 }),
                  frame_error(ErrorKind::bad_section, entry + 2, s.first_record,
                              "a chunk in " + std::to_string(planes) + " byte planes (2 to 8 there may be)"));
        }
        // The byte after the planes is still reserved.
        check(corrupt_hatf10(t, f,
                             [&](TraceBytes& b) {
                                 b.b[entry + 1] = 2;
                                 b.b[entry + 2] = 4;
                                 b.b[entry + 3] = 1;
                             }),
              frame_error(ErrorKind::bad_section, entry + 3, s.first_record, "a chunk entry whose reserved bytes are not 0"));
    }
}

TEST_CASE("a chunk entry's reserved bytes") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-entry-reserved");
        for (const Layout::Frame& s : layout_of(t, f, write_hatf10).segments) {
            const std::uint64_t entry = s.chunks[0].at;
            for (std::uint64_t at : {entry + 2, entry + 3}) {
                check(corrupt_hatf10(t, f, [&](TraceBytes& b) { b.b[at] = 0x10; }),
                      frame_error(ErrorKind::bad_section, entry + 2, s.first_record, "a chunk entry whose reserved bytes are not 0"));
            }
        }
    }
}

TEST_CASE("a chunk's stored and decoded sizes") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("v2-sizes");
        const Layout l = layout_of(t, f, write_hatf10);
        const unsigned w = l.w;
        const std::uint64_t file_size = l.size();
        for (const Layout::Frame& s : l.segments) {
            const Layout::Entry& c = s.chunks[0];
            CAPTURE(c.at);
            auto sizes = [&](std::uint64_t stored, std::uint64_t decoded) {
                return corrupt_hatf10(t, f, [&](TraceBytes& b) {
                    b.set(c.at + 4, stored, w);
                    b.set(c.at + 4 + w, decoded, w);
                });
            };
            // Stored uncompressed, the two sizes must agree.
            const auto differ = frame_error(ErrorKind::bad_section, c.at + 4, s.first_record, "a stored chunk whose two sizes differ");
            check(sizes(c.size + 1, c.size), differ);
            check(sizes(c.size, c.size + 1), differ);
            check(sizes(c.size, 0), differ);
            // Past the end of the file: a file checks the size; a pipe refuses
            // a chunk over 256 MiB before reading it, and otherwise runs dry.
            const std::string past = " bytes runs past the end of the file";
            check(sizes(0xffffffffu, 0xffffffffu),
                  {show(ErrorKind::truncated, c.at + 4, -1, 0, "a chunk of 4294967295" + past),
                   show(ErrorKind::bad_section, c.start, 0, s.first_record, "chunk of 4294967295 bytes is too large")});
            check(sizes(1000, 1000), {show(ErrorKind::truncated, c.at + 4, -1, 0, "a chunk of 1000" + past),
                                      show(ErrorKind::truncated, file_size, -1, s.first_record, "the trace ends in the middle of a chunk")});
        }
        // Segment 1's chunk a byte longer: the file's next frame is one byte
        // on, at its start section; the pipe's records run into the frame's S.
        const Layout::Frame &s = l.segments[1], &next = l.segments[2];
        auto resize = [&](std::uint64_t size) {
            return corrupt_hatf10(t, f, [&](TraceBytes& b) {
                b.set(s.chunks[0].at + 4, size, w);
                b.set(s.chunks[0].at + 4 + w, size, w);
            });
        };
        check(resize(24), {show(ErrorKind::bad_section, next.at + 1, -1, 0, "a segment frame should start here, not byte 0"),
                           show(ErrorKind::unknown_tag, next.at, 0, 5, "no record of section 0 has tag 83")});
        // A byte shorter: the file's next frame starts at the last byte of
        // record 4's address, 0; the pipe's record 4 runs past its chunk. In
        // the machine's byte order the generated reader takes the record's
        // fields in one step, so it reports the whole record short.
        const std::uint64_t record4 = s.payload + 14;
        const bool native = f.order == rt::ByteOrder::little;
        check(resize(22), {show(ErrorKind::bad_section, next.at - 1, -1, 0, "a segment frame should start here, not byte 0"),
                           native ? show(ErrorKind::truncated, record4 + 1, 0, 4, "record 'alloc' needs 8 bytes here, more than its chunk holds")
                                  : show(ErrorKind::truncated, record4 + 5, 0, 4, "record 'alloc' needs 4 bytes here, more than its chunk holds")});
    }
}

}  // TEST_SUITE
