// Malformed traces: each test writes a valid trace with a generated writer,
// corrupts some bytes, and expects one exact TraceError. The expected offsets
// are computed from the container layout (docs/trace-format.md), decoded by
// TraceBytes without the runtime. Writer-side errors are in
// test_writer_errors.cpp.
//
// Where an error concerns one stored value, its offset is the first byte of
// that value: the class byte, a header word, an index entry, a record's tag,
// a field that runs past its chunk, a section record's number, the field of a
// metadata record that is wrong (its property byte for a change the field
// cannot take). A count that is found wrong only at the end of the data (the
// record count) is reported there, and a repeat count at its group.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <hatf10.hpp>
#include <repeats.hpp>

#include <doctest/doctest.h>

#include "../address_sanitizer.hpp"
#include "hatf_base.hpp"
#include "trace_support.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;
using namespace metatf::test;
using rt::ErrorKind;
using TB = TraceBytes;

namespace {

using namespace hatf10;
using namespace metatf::test::hatf_base;

// The base trace in container version 2: one segment, whose frame has one chunk entry.
TraceBytes version2_base(const TempTrace& t, const Format& f) {
    rt::WriterOptions options = f.options();
    options.version = 2;
    write_base(t.path(), options);
    return TraceBytes::load(t.path());
}

// A trace's bytes in a pipe, written whole and closed, so that a reader of path() streams them.
class Piped {
public:
    explicit Piped(const std::vector<std::uint8_t>& bytes) {
        REQUIRE(::pipe(fds_) == 0);
        REQUIRE(::fcntl(fds_[1], F_GETPIPE_SZ) >= static_cast<int>(bytes.size()));
        REQUIRE(::write(fds_[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
        ::close(fds_[1]);
    }
    ~Piped() { ::close(fds_[0]); }
    Piped(const Piped&) = delete;
    Piped& operator=(const Piped&) = delete;
    std::string path() const { return "/proc/self/fd/" + std::to_string(fds_[0]); }

private:
    int fds_[2] = {-1, -1};
};

std::optional<rt::TraceError> read_hatf10(const std::string& path) {
    return metatf::test::read_error<hatf10::Reader>(path);
}

// Writes the base trace in `f`, changes its bytes, reads it back.
template <typename Corrupt>
std::optional<rt::TraceError> corrupt_base(const TempTrace& t, const Format& f, Corrupt&& corrupt, std::size_t chunk_bytes = std::size_t(1) << 20) {
    write_base(t.path(), f.options(chunk_bytes));
    TraceBytes b = TraceBytes::load(t.path());
    corrupt(b);
    b.save(t.path());
    return read_hatf10(t.path());
}

}  // namespace

TEST_SUITE("malformed traces") {

TEST_CASE("the base trace reads back and has the layout the tests assume") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("base");
        write_base(t.path(), f.options());
        const TraceBytes b = TraceBytes::load(t.path());
        const unsigned w = b.word_size();
        CHECK(w == (f.cls == rt::Class::bits32 ? 4u : 8u));
        CHECK(std::memcmp(b.b.data(), "\177MTF", 4) == 0);
        CHECK(b.b[6] == std::strlen(hatf10::dtd.name));
        CHECK(b.b[7] == 1);
        CHECK(b.get(8, 8) == rt::fingerprint(hatf10::dtd));  // bytes 8-15: the fingerprint, in the trace's order
        const std::uint64_t data = hatf10_data_start(w);
        CHECK(b.word(TB::chunk_count) == 1);
        CHECK(b.word(TB::data_start) == data);
        CHECK(b.word(TB::record_count) == base_records);
        CHECK(b.word(TB::index_offset) == data + base_data);
        CHECK(b.word(TB::text_length) == std::strlen(hatf10::dtd.text));
        CHECK(b.entry(0, TB::number) == 0);
        CHECK(b.entry(0, TB::start) == data);
        CHECK(b.entry(0, TB::size) == base_data);
        CHECK(b.b.size() == data + base_data + 3 * w);
        CHECK(b.b[data] == 1);                                         // comment tag
        CHECK(b.b[data + comment_size] == Alloc::tag);                 // record 1
        CHECK(b.b[data + comment_size + 2 * alloc_size] == Free::tag);  // record 3
        CHECK(read_all<Reader>(t.path()) == base_records);
    }
}

TEST_CASE("a chunk size of 16 splits the base trace into chunks of 20 and 14 bytes") {
    TempTrace t("base-chunks");
    write_base(t.path(), formats[0].options(16));
    const TraceBytes b = TraceBytes::load(t.path());
    const std::uint64_t data = hatf10_data_start(8);
    REQUIRE(b.word(TB::chunk_count) == 2);
    CHECK(b.entry(0, TB::start) == data);
    CHECK(b.entry(0, TB::size) == comment_size + alloc_size);
    CHECK(b.entry(1, TB::start) == data + comment_size + alloc_size);
    CHECK(b.entry(1, TB::size) == alloc_size + free_size);
    CHECK(read_all<Reader>(t.path()) == base_records);
}

TEST_CASE("a missing file is an io error") {
    TempTrace t("missing");
    CHECK(show(read_hatf10(t.path())) ==
          show(ErrorKind::io, 0, -1, 0, "cannot open '" + t.path() + "': No such file or directory"));
}

TEST_CASE("bad magic") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("bad-magic");
        const std::string message = "not a Meta-TF trace (the file does not start with \\177MTF)";
        CHECK(show(corrupt_base(t, f, [](TraceBytes& b) { b.b[1] = 'X'; })) == show(ErrorKind::bad_magic, 0, -1, 0, message));
        CHECK(show(corrupt_base(t, f, [](TraceBytes& b) { b.b[0] = 0x7e; })) == show(ErrorKind::bad_magic, 0, -1, 0, message));
        // Some other file of more than 16 bytes.
        std::ofstream(t.path(), std::ios::binary | std::ios::trunc) << "this is not a trace, only text\n";
        CHECK(show(read_hatf10(t.path())) == show(ErrorKind::bad_magic, 0, -1, 0, message));
    }
}

TEST_CASE("unknown class") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("bad-class");
        for (std::uint8_t cls : {0, 3, 255}) {
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[4] = cls; })) ==
                  show(ErrorKind::bad_header, 4, -1, 0, "unknown class " + std::to_string(cls)));
        }
    }
}

TEST_CASE("unknown byte order") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("bad-order");
        for (std::uint8_t order : {0, 3}) {
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[5] = order; })) ==
                  show(ErrorKind::bad_header, 5, -1, 0, "unknown byte order " + std::to_string(order)));
        }
    }
}

TEST_CASE("unsupported container version") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("bad-version");
        for (std::uint8_t version : {0, rt::container_version + 1}) {
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[7] = version; })) ==
                  show(ErrorKind::bad_header, 7, -1, 0, "container version " + std::to_string(version) + " is not supported"));
        }
    }
}

TEST_CASE("a file shorter than the ident") {
    TempTrace t("short");
    for (std::size_t size : {0, 4, 15}) {
        CAPTURE(size);
        CHECK(show(corrupt_base(t, formats[0], [&](TraceBytes& b) { b.b.resize(size); })) ==
              show(ErrorKind::bad_header, size, -1, 0, "the file is too short for a Meta-TF header"));
    }
}

TEST_CASE("truncated header words") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("short-words");
        const unsigned w = f.word();
        // Cut in the middle of the record count word, and just before the DTD name.
        for (std::uint64_t size : {TB::ident, TB::ident + 2 * w + 1, TB::ident + 5 * w - 1}) {
            CAPTURE(size);
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b.resize(size); })) ==
                  show(ErrorKind::truncated, size, -1, 0, "the trace ends in the middle of the header's words"));
        }
    }
}

TEST_CASE("the embedded DTD runs past the end of the file") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("short-dtd");
        const unsigned w = f.word();
        const std::string message = "the embedded DTD runs past the end of the file";
        // Cut inside the name, inside the text.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b.resize(TB::ident + 5 * w + 2); })) ==
              show(ErrorKind::bad_header, TB::ident + 5 * w, -1, 0, message));
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b.resize(hatf10_data_start(w) - 100); })) ==
              show(ErrorKind::bad_header, TB::ident + 5 * w, -1, 0, message));
        // A text length larger than the file.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::text_length, b.b.size()); })) ==
              show(ErrorKind::bad_header, TB::ident + 5 * w, -1, 0, message));
    }
}

TEST_CASE("data start wrong") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("data-start");
        const unsigned w = f.word();
        const std::uint64_t data = hatf10_data_start(w);
        for (std::uint64_t start : {data - 1, data + 1, std::uint64_t(0)}) {
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::data_start, start); })) ==
                  show(ErrorKind::bad_header, TB::ident + w, -1, 0,
                       "data starts at byte " + std::to_string(start) + ", not right after the embedded DTD"));
        }
        // A DTD text length one short moves the end of the DTD instead.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::text_length, b.word(TB::text_length) - 1); })) ==
              show(ErrorKind::bad_header, TB::ident + w, -1, 0,
                   "data starts at byte " + std::to_string(data) + ", not right after the embedded DTD"));
    }
}

TEST_CASE("section index cut off or misplaced") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("index-cut");
        const unsigned w = f.word();
        const auto expected = show(ErrorKind::bad_section, TB::ident + 3 * w, -1, 0,
                                   "the section index does not fit between the data and the end of the file");
        // Index cut off entirely, by one byte, or followed by a stray byte.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b.resize(b.word(TB::index_offset)); })) == expected);
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b.pop_back(); })) == expected);
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b.push_back(0); })) == expected);
        // The index offset word off by one either way, or before the data, or far past the end.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::index_offset, b.word(TB::index_offset) - 1); })) == expected);
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::index_offset, b.word(TB::index_offset) + 1); })) == expected);
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::index_offset, 3); })) == expected);
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::index_offset, 0xfffffff0u); })) == expected);
        // A chunk count the index has no room for.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::chunk_count, 2); })) == expected);
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::chunk_count, 0xffffffffu); })) == expected);
    }
}

TEST_CASE("section index entries out of range") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("index-range");
        const unsigned w = f.word();
        const std::uint64_t data = hatf10_data_start(w);
        const std::uint64_t index = data + base_data;
        const auto out_of_place = show(ErrorKind::bad_section, index, -1, 0, "chunk 0 of the section index is out of place");
        // Start before or after the data start, or far outside the file.
        for (std::uint64_t start : {data - 1, data + 1, index, std::uint64_t(0xfffffff0u)}) {
            CAPTURE(start);
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(0, TB::start, start); })) == out_of_place);
        }
        // Size running into the index or past the file.
        for (std::uint64_t size : {base_data + 1, base_data + 3 * w, std::uint64_t(0xffffffffu)}) {
            CAPTURE(size);
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(0, TB::size, size); })) == out_of_place);
        }
        // Size short of the index: the chunks leave a gap before it.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(0, TB::size, base_data - 1); })) ==
              show(ErrorKind::bad_section, index, -1, 0, "the section index does not cover the data"));
        // Section numbers past 255, and not declared by hatf10 (which declares none).
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(0, TB::number, 300); })) ==
              show(ErrorKind::bad_section, index, -1, 0, "section number 300 is out of range"));
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(0, TB::number, 7); })) ==
              show(ErrorKind::bad_section, index, -1, 0, "the section index names section 7, which the DTD does not define"));
    }
}

TEST_CASE("the second of two section index entries wrong") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("index-second");
        const unsigned w = f.word();
        const std::uint64_t index = hatf10_data_start(w) + base_data;
        const std::uint64_t second = index + 3 * w;  // entry 1
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(1, TB::number, 255); }, 16)) ==
              show(ErrorKind::bad_section, second, -1, 0, "the section index names section 255, which the DTD does not define"));
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(1, TB::start, b.entry(1, TB::start) + 1); }, 16)) ==
              show(ErrorKind::bad_section, second, -1, 0, "chunk 1 of the section index is out of place"));
        // Two chunks overlapping by one byte.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_entry(0, TB::size, b.entry(0, TB::size) + 1); }, 16)) ==
              show(ErrorKind::bad_section, second, -1, 0, "chunk 1 of the section index is out of place"));
    }
}

// Found by fuzz_mtf_trace: the error was placed where a version-1 index
// entry would be, past the end of a version-2 file.
TEST_CASE("a version-2 segment frame naming a section the DTD does not define") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("frame-section");
        TraceBytes b = version2_base(t, f);
        const unsigned w = f.word();
        // The frame: 8 fixed bytes, two words, then the chunk's entry.
        const std::uint64_t frame = hatf10_first_frame(w);
        const std::uint64_t entry = frame + 8 + 2 * w;
        REQUIRE(b.b.at(frame) == 'S');
        REQUIRE(b.b.at(frame + 1) == 0);  // the section the segment starts in
        REQUIRE(b.b.at(entry) == 0);      // the chunk's section
        b.b[frame + 1] = 7;               // both, so that only section 7's being undefined is wrong
        b.b[entry] = 7;
        b.save(t.path());
        CHECK(show(read_hatf10(t.path())) ==
              show(ErrorKind::bad_section, entry, -1, 0, "a segment holds a chunk of section 7, which the DTD does not define"));
    }
}

TEST_CASE("header record count disagrees with the records") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("record-count");
        const unsigned w = f.word();
        const std::uint64_t end = hatf10_data_start(w) + base_data;  // found once every record is read
        for (std::uint64_t count : {std::uint64_t(0), base_records - 1, base_records + 1, std::uint64_t(0xffffffffu)}) {
            CAPTURE(count);
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.set_word(TB::record_count, count); })) ==
                  show(ErrorKind::bad_header, end, 0, base_records,
                       "the header counts " + std::to_string(count) + " records, but the trace holds " + std::to_string(base_records)));
        }
    }
}

TEST_CASE("unknown tag in the data") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("unknown-tag");
        const std::uint64_t data = hatf10_data_start(f.word());
        const std::uint64_t record2 = data + comment_size + alloc_size;
        for (std::uint8_t tag : {0, 14, 99, 255}) {
            CAPTURE(tag);
            CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[record2] = tag; })) ==
                  show(ErrorKind::unknown_tag, record2, 0, 2, "no record of section 0 has tag " + std::to_string(tag)));
        }
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[data] = 0; })) ==
              show(ErrorKind::unknown_tag, data, 0, 0, "no record of section 0 has tag 0"));
        // A comment read as a free record: its address takes the 2 length bytes and
        // "ma", and the next tag read is 'l' (108).
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[data] = Free::tag; })) ==
              show(ErrorKind::unknown_tag, data + free_size, 0, 1, "no record of section 0 has tag 108"));
    }
}

TEST_CASE("record fields that run past the end of their chunk") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("past-chunk");
        const unsigned w = f.word();
        const std::uint64_t data = hatf10_data_start(w);
        // The last chunk loses the last 2 bytes of the free record; the header
        // and index are patched to match, so only the record is wrong.
        const auto shortened = corrupt_base(t, f, [&](TraceBytes& b) {
            const std::uint64_t index = b.word(TB::index_offset);
            b.b.erase(b.b.begin() + static_cast<std::ptrdiff_t>(index - 2), b.b.begin() + static_cast<std::ptrdiff_t>(index));
            b.set_word(TB::index_offset, index - 2);
            b.set_entry(0, TB::size, base_data - 2);
        });
        const std::uint64_t record3 = data + comment_size + 2 * alloc_size;
        CHECK(show(shortened) ==
              show(ErrorKind::truncated, record3 + 1, 0, 3, "record 'free' needs 4 bytes here, more than its chunk holds"));

        // Two chunks [comment, alloc] [alloc, free]: the boundary moved 2 bytes
        // back cuts record 1's address; moved 2 bytes on, record 2's size.
        const std::uint64_t first = comment_size + alloc_size;
        const auto back = corrupt_base(
            t, f,
            [&](TraceBytes& b) {
                b.set_entry(0, TB::size, first - 2);
                b.set_entry(1, TB::start, data + first - 2);
                b.set_entry(1, TB::size, base_data - first + 2);
            },
            16);
        // In the machine's byte order the generated reader takes an untouched
        // record's fields in one step, so it reports the whole record short;
        // otherwise it goes field by field.
        const bool native = f.order == rt::ByteOrder::little;
        CHECK(show(back) == (native ? show(ErrorKind::truncated, data + comment_size + 1, 0, 1,
                                           "record 'alloc' needs 8 bytes here, more than its chunk holds")
                                    : show(ErrorKind::truncated, data + comment_size + 1 + 4, 0, 1,
                                           "record 'alloc' needs 4 bytes here, more than its chunk holds")));
        const auto on = corrupt_base(
            t, f,
            [&](TraceBytes& b) {
                b.set_entry(0, TB::size, first + 2);
                b.set_entry(1, TB::start, data + first + 2);
                b.set_entry(1, TB::size, base_data - first - 2);
            },
            16);
        CHECK(show(on) == show(ErrorKind::truncated, data + first + 1, 0, 2,
                               native ? "record 'alloc' needs 8 bytes here, more than its chunk holds"
                                      : "record 'alloc' needs 4 bytes here, more than its chunk holds"));
    }
}

TEST_CASE("a comment length that runs past the end of its chunk") {
    TempTrace t("comment-length");
    const std::uint64_t data = hatf10_data_start(8);
    CHECK(show(corrupt_base(t, formats[0], [&](TraceBytes& b) { b.b[data + 1] = 200; })) ==
          show(ErrorKind::truncated, data + 3, 0, 0, "record 'comment' needs 200 bytes here, more than its chunk holds"));
}

TEST_CASE("a bytes field whose length runs past the end of its chunk") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("bytes-length");
        const unsigned w = f.word();
        const std::uint64_t data = hatf10_data_start(w);
        const std::string caller = "abc";
        auto write = [&] {
            Writer out(t.path(), f.options());
            // Stores attributesLength (1 byte) from here on: a metadata record of 4 bytes, no value.
            out.set_interpretation(RecordType::Alloc, Alloc::attributes_attributesLength_field, rt::MetaOp::none);
            out.write(Alloc{.size = 1, .address = 2, .attributes_attributesLength = caller.size(),
                            .attributes_attributesData = rt::as_bytes(caller)});  // 1 + 4 + 4 + 1 + 3 bytes
            out.write(Free{.address = 2});
            out.close();
        };
        write();
        REQUIRE(read_all<Reader>(t.path()) == 3);
        const std::uint64_t length_at = data + 4 + 1 + 4 + 4;
        auto patch = [&](std::uint8_t length) {
            write();
            TraceBytes b = TraceBytes::load(t.path());
            REQUIRE(b.b[length_at] == caller.size());
            b.b[length_at] = length;
            b.save(t.path());
            return read_hatf10(t.path());
        };
        CHECK(show(patch(200)) ==
              show(ErrorKind::truncated, length_at + 1, 0, 1, "record 'alloc' needs 200 bytes here, more than its chunk holds"));
        CHECK(show(patch(3 + free_size + 1)) ==
              show(ErrorKind::truncated, length_at + 1, 0, 1, "record 'alloc' needs 9 bytes here, more than its chunk holds"));
        // A length that swallows the free record exactly: the records parse, the count does not agree.
        CHECK(show(patch(3 + free_size)) ==
              show(ErrorKind::bad_header, length_at + 1 + 3 + free_size, 0, 2, "the header counts 3 records, but the trace holds 2"));
    }
}

TEST_CASE("a repeat count that runs past the end") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("repeat-count");
        const unsigned w = f.word();
        const std::uint64_t data = TB::ident + 5 * w + std::strlen(repeats::dtd.name) + std::strlen(repeats::dtd.text);
        // group: tag, n (4 bytes), n times x (2 bytes).
        auto patch = [&](std::uint64_t at, std::uint64_t count) {
            {
                repeats::Writer out(t.path(), f.options());
                out.write(repeats::Group{.n = 2, .n_items = {{.x = 1}, {.x = 2}}});  // record 0: 9 bytes
                out.write(repeats::Group{.n = 1, .n_items = {{.x = 3}}});            // record 1: 7 bytes
                out.close();
            }
            REQUIRE(read_all<repeats::Reader>(t.path()) == 2);
            TraceBytes b = TraceBytes::load(t.path());
            REQUIRE(b.word(TB::index_offset) == data + 16);
            b.set(at, count, 4);
            b.save(t.path());
            return metatf::test::read_error<repeats::Reader>(t.path());
        };
        // Counts past the limit of 2^24, or past what the rest of the chunk could hold
        // (8 per byte plus 1024, for groups that store nothing): refused before the
        // group is read, at the group's first byte.
        for (std::uint64_t count : {std::uint64_t(0xffffffffu), (std::uint64_t(1) << 24) + 1, std::uint64_t(11 * 8 + 1025)}) {
            CAPTURE(count);
            CHECK(show(patch(data + 1, count)) ==
                  show(ErrorKind::bad_value, data + 5, 0, 0,
                       "repeat count " + std::to_string(count) + " of field 'n' is more than the record can hold"));
        }
        // A count within that bound: the element past the chunk is refused.
        CHECK(show(patch(data + 9 + 1, 100)) ==
              show(ErrorKind::truncated, data + 16, 0, 1, "record 'group' needs 2 bytes here, more than its chunk holds"));
        // Record 0 reaching into record 1: 3 elements take record 1's tag and count bytes,
        // and then what is left of the count is read as a tag.
        CHECK(show(patch(data + 1, 3)) ==
              show(ErrorKind::unknown_tag, data + 11, 0, 1, "no record of section 0 has tag 0"));
    }
}

// A trace whose record 1 is a metadata record setting alloc.size's width to
// 2, changed by `change` and read back. The offsets of its fields:
struct MetadataTrace {
    const Format& f;
    TempTrace t{"metadata"};
    unsigned w = f.word();
    std::uint64_t data = hatf10_data_start(w);
    std::uint64_t m = data + alloc_size;  // tag 3, record tag, field, property, value (a word)
    std::uint64_t record_tag = m + 1, field = m + 2, property = m + 3, value = m + 4;

    template <typename Change>
    std::string error(Change&& change) {
        {
            Writer out(t.path(), f.options());
            out.write(Alloc{.size = 24, .address = 0x1000});
            out.set_width(RecordType::Alloc, Alloc::size_field, 2);
            out.write(Alloc{.size = 16, .address = 0x2000});
            out.close();
        }
        REQUIRE(read_all<Reader>(t.path()) == 3);
        TraceBytes b = TraceBytes::load(t.path());
        REQUIRE(b.b[m] == 3);
        REQUIRE(b.b[record_tag] == Alloc::tag);
        REQUIRE(b.get(value, w) == 2);
        change(b);
        b.save(t.path());
        return show(read_hatf10(t.path()));
    }
};

TEST_CASE("metadata naming a missing record tag") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        MetadataTrace mt{f};
        for (std::uint8_t tag : {0, 14, 200}) {
            CAPTURE(tag);
            CHECK(mt.error([&](TraceBytes& b) { b.b[mt.record_tag] = tag; }) ==
                  show(ErrorKind::bad_metadata, mt.record_tag, 0, 1,
                       "metadata names tag " + std::to_string(tag) + ", which no record of section 0 has"));
        }
    }
}

TEST_CASE("metadata naming a predefined record") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        MetadataTrace mt{f};
        CHECK(mt.error([&](TraceBytes& b) { b.b[mt.record_tag] = 1; }) ==
              show(ErrorKind::bad_metadata, mt.record_tag, 0, 1, "metadata cannot change the predefined record 'comment'"));
    }
}

TEST_CASE("metadata naming a missing field index") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        MetadataTrace mt{f};
        for (std::uint8_t index : {0, 8, 255}) {
            CAPTURE(index);
            CHECK(mt.error([&](TraceBytes& b) { b.b[mt.field] = index; }) ==
                  show(ErrorKind::bad_metadata, mt.field, 0, 1,
                       "metadata names field " + std::to_string(index) + " of record 'alloc', which has fields 1 to 7"));
        }
        // Field 7 exists in alloc, not in free (fields 1 to 6).
        CHECK(mt.error([&](TraceBytes& b) {
                  b.b[mt.record_tag] = Free::tag;
                  b.b[mt.field] = 7;
              }) == show(ErrorKind::bad_metadata, mt.field, 0, 1, "metadata names field 7 of record 'free', which has fields 1 to 6"));
    }
}

TEST_CASE("metadata with an unknown property code") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        MetadataTrace mt{f};
        for (std::uint8_t code : {14, 255}) {
            CAPTURE(code);
            CHECK(mt.error([&](TraceBytes& b) { b.b[mt.property] = code; }) ==
                  show(ErrorKind::bad_metadata, mt.property, 0, 1, "metadata property " + std::to_string(code) + " is unknown"));
        }
    }
}

TEST_CASE("metadata with an illegal change") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        MetadataTrace mt{f};
        // A change the field cannot take is reported at its property byte, where the change starts.
        const std::string size_field = "metadata for field 'size' of record 'alloc': ";
        CHECK(mt.error([&](TraceBytes& b) { b.set(mt.value, 9, mt.w); }) ==
              show(ErrorKind::bad_metadata, mt.property, 0, 1, size_field + "width 9 is more than 8 bytes"));
        CHECK(mt.error([&](TraceBytes& b) { b.set(mt.value, 0xffffffffu, mt.w); }) ==
              show(ErrorKind::bad_metadata, mt.property, 0, 1, size_field + "width 4294967295 is more than 8 bytes"));
        // hatf10 declares no sections: sectionOffset 2 (the value) names none.
        CHECK(mt.error([&](TraceBytes& b) { b.b[mt.property] = 5; }) ==
              show(ErrorKind::bad_metadata, mt.property, 0, 1, size_field + "there is no section 2"));
        const std::string data_field = "metadata for field 'attributes.attributesData' of record 'alloc': ";
        CHECK(mt.error([&](TraceBytes& b) { b.b[mt.field] = Alloc::attributes_attributesData_field; }) ==
              show(ErrorKind::bad_metadata, mt.property, 0, 1, data_field + "its width is the value of another field"));
        CHECK(mt.error([&](TraceBytes& b) {
                  b.b[mt.field] = Alloc::attributes_attributesData_field;
                  b.b[mt.property] = 3;  // delta
              }) == show(ErrorKind::bad_metadata, mt.property, 0, 1,
                         data_field + "interpretation 'delta' applies to integer fields, not 'bytes'"));
        CHECK(mt.error([&](TraceBytes& b) {
                  b.b[mt.property] = 10;  // unit
                  b.set(mt.value, 0, mt.w);
              }) == show(ErrorKind::bad_metadata, mt.property, 0, 1, size_field + "unit 0 is not between 1 and 4294967295"));
        if (mt.w == 8) {
            CHECK(mt.error([&](TraceBytes& b) {
                      b.b[mt.property] = 10;
                      b.set(mt.value, 0x100000000u, mt.w);
                  }) == show(ErrorKind::bad_metadata, mt.property, 0, 1, size_field + "unit 4294967296 is not between 1 and 4294967295"));
        }
        CHECK(mt.error([&](TraceBytes& b) {
                  b.b[mt.field] = Alloc::attributes_attributesData_field;
                  b.b[mt.property] = 10;
              }) == show(ErrorKind::bad_metadata, mt.property, 0, 1, data_field + "a unit applies to integer fields, not 'bytes'"));
    }
}

TEST_CASE("a metadata record cut by the end of its chunk") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        MetadataTrace mt{f};
        // The trace is one chunk: end it right after the metadata's property byte.
        const auto e = mt.error([&](TraceBytes& b) {
            const std::uint64_t index = b.word(TB::index_offset);
            b.b.erase(b.b.begin() + static_cast<std::ptrdiff_t>(mt.value), b.b.begin() + static_cast<std::ptrdiff_t>(index));
            b.set_word(TB::index_offset, mt.value);
            b.set_word(TB::record_count, 2);
            b.set_entry(0, TB::size, mt.value - mt.data);
        });
        CHECK(e == show(ErrorKind::truncated, mt.value, 0, 1,
                        "record 'metadata' needs " + std::to_string(mt.w) + " bytes here, more than its chunk holds"));
    }
}

TEST_CASE("a section record naming an undefined section") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("section-record");
        const std::uint64_t data = hatf10_data_start(f.word());
        const std::uint64_t number = data + alloc_size + 1;  // record 1: tag 2, section number
        for (std::uint8_t section : {1, 7, 255}) {
            CAPTURE(section);
            const auto e = error_of([&] {
                {
                    Writer out(t.path(), f.options());
                    out.write(Alloc{.size = 1, .address = 2});
                    out.section(0);  // back to section 0: legal, and 2 bytes to corrupt
                    out.write(Free{.address = 2});
                    out.close();
                }
                REQUIRE(read_all<Reader>(t.path()) == 3);
                TraceBytes b = TraceBytes::load(t.path());
                REQUIRE(b.b[number] == 0);
                b.b[number] = section;
                b.save(t.path());
                read_all<Reader>(t.path());
            });
            CHECK(show(e) == show(ErrorKind::bad_section, number, 0, 1,
                                  "a section record names section " + std::to_string(section) + ", which the DTD does not define"));
        }
    }
}

TEST_CASE("a trace written with another DTD") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("wrong-dtd");
        const unsigned w = f.word();
        const std::uint64_t name = TB::ident + 5 * w;  // the DTD name follows the words
        const std::uint64_t fingerprint = 8;        {
            repeats::Writer out(t.path(), f.options());
            out.write(repeats::Group{.n = 0, .n_items = {}});
            out.close();
        }
        CHECK(show(read_hatf10(t.path())) ==
              show(ErrorKind::wrong_dtd, fingerprint, -1, 0, "the trace's DTD 'repeats' lays out records differently from this reader's DTD 'hatf10'"));
        write_base(t.path(), f.options());
        CHECK(show(metatf::test::read_error<repeats::Reader>(t.path())) ==
              show(ErrorKind::wrong_dtd, fingerprint, -1, 0, "the trace's DTD 'hatf10' lays out records differently from this reader's DTD 'repeats'"));
        // Another name, the same layout: the layout decides, so the trace reads.
        CHECK(show(corrupt_base(t, f, [&](TraceBytes& b) { b.b[name + 5] = '1'; })) == "no error");
    }
}

TEST_CASE("a trace of a DTD with the same name but another layout") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("wrong-fingerprint");
        // The fingerprint (bytes 8-15) differs.
        CHECK(show(corrupt_base(t, f, [](TraceBytes& b) { b.b[12] ^= 0x10; })) ==
              show(ErrorKind::wrong_dtd, 8, -1, 0, "the trace's DTD 'hatf10' lays out records differently from this reader's DTD 'hatf10'"));
    }
}

}  // TEST_SUITE

// Found by fuzz_mtf_trace, which reads every input from a pipe as well.
TEST_SUITE("traces from a pipe") {

TEST_CASE("a pipe that goes on after the end frame is refused, as a file is") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("pipe-after-end");
        TraceBytes b = version2_base(t, f);
        CHECK(read_all<Reader>(Piped(b.b).path()) == base_records);
        const std::uint64_t end = b.b.size();
        b.b.push_back(0);
        CHECK(show(read_hatf10(Piped(b.b).path())) ==
              show(ErrorKind::bad_header, end, -1, base_records, "bytes follow the end frame"));
    }
}

TEST_CASE("a bad segment frame met in a pipe names the record reached") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("pipe-second-frame");
        rt::WriterOptions options = f.options(16);  // two segments: the comment and an alloc, then the rest
        options.version = 2;
        write_base(t.path(), options);
        TraceBytes b = TraceBytes::load(t.path());
        const unsigned w = f.word();
        const std::uint64_t second = hatf10_first_frame(w) + (8 + 2 * w) + (4 + 2 * w) + comment_size + alloc_size;
        REQUIRE(b.b.at(second) == 'S');
        b.b[second] = 'x';
        CHECK(show(read_hatf10(Piped(b.b).path())) ==
              show(ErrorKind::bad_section, second, -1, 2, "a segment frame should start here, not byte 120"));
    }
}

using metatf::test::address_sanitizer;

// VmRSS, or VmHWM (its peak), of this process in KiB.
std::uint64_t memory_kib(const std::string& key) {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with(key + ":")) return std::stoull(line.substr(key.size() + 1));
    }
    FAIL("no " << key << " in /proc/self/status");
    return 0;
}

TEST_CASE("a chunk a pipe's frame claims is read as its bytes arrive, not allocated whole") {
    TempTrace t("pipe-claimed-chunk");
    const Format& f = formats[0];
    TraceBytes b = version2_base(t, f);
    const unsigned w = f.word();
    const std::uint64_t sizes = hatf10_first_frame(w) + 8 + 2 * w + 4;  // the chunk's stored and decoded size
    const std::uint64_t claimed = std::uint64_t(1) << 28;                 // the most the reader takes
    b.set(sizes, claimed, w);
    b.set(sizes + w, claimed, w);
    b.b.resize(sizes + 2 * w + 100);  // the frame and 100 bytes of the chunk
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM starts again from VmRSS
    const std::uint64_t before = memory_kib("VmRSS");
    CHECK(show(read_hatf10(Piped(b.b).path())) ==
          show(ErrorKind::truncated, b.b.size(), -1, 0, "the trace ends in the middle of a chunk"));
    CHECK(memory_kib("VmHWM") - before < 16 * 1024);  // it was 256 MiB
}

TEST_CASE("a compressed trace ten times longer is read in no more memory") {
    // Allocations with 64-bit addresses, times and sizes that vary, in zstd
    // chunks of 256 KiB: the reader holds a chunk and the next, whatever the length.
    const auto write = [](const std::string& path, std::uint64_t records) {
        rt::WriterOptions options;
        options.compress = 1;
        options.chunk_bytes = std::size_t(1) << 18;
        Writer w(path, options);
        for (std::uint64_t i = 0; i < records; ++i) {
            w.write(Alloc{.size = 16 + i * 7919 % 4096, .address = 0x5565'4a9e'0000 + i * 48, .time = i * 3});
        }
        w.close();
    };
    // The peak of this process's memory while `path` is read, above what it held before, in KiB.
    const auto read_peak = [](const std::string& path) {
        std::ofstream("/proc/self/clear_refs") << "5";
        const std::uint64_t before = memory_kib("VmRSS");
        std::uint64_t sum = 0, n = 0;
        for (Reader r(path); r.next(); ++n) {
            if (r.type() == RecordType::Alloc) sum += r.get<Alloc>().address;
        }
        CHECK(sum != 0);
        return std::pair{memory_kib("VmHWM") - before, n};
    };
    TempTrace short_trace("rss-short"), long_trace("rss-long");
    write(short_trace.path(), 100'000);
    write(long_trace.path(), 1'000'000);
    REQUIRE(fs::file_size(long_trace.path()) > 8 * fs::file_size(short_trace.path()));
    read_peak(short_trace.path());  // a first read makes what every read keeps (a thread, a zstd context)
    // Not structured bindings: Clang's lambdas (INFO) cannot capture one.
    const auto short_peak = read_peak(short_trace.path()), long_peak = read_peak(long_trace.path());
    const auto short_kib = short_peak.first, short_records = short_peak.second;
    const auto long_kib = long_peak.first, long_records = long_peak.second;
    CHECK(short_records > 100'000);
    CHECK(long_records > 1'000'000);
    INFO("peak above the start: " << short_kib << " KiB for the short trace, " << long_kib << " KiB for the long one");
    // AddressSanitizer holds freed memory back (its quarantine), so each chunk read
    // adds to the peak there; the other builds check the reader's own memory.
    if (!address_sanitizer) CHECK(long_kib <= short_kib + 2048);
}

}  // TEST_SUITE
