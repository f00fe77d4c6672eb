// Writer-side errors (a value the encoding cannot carry, a writer closed or
// destroyed, refused requests) and the reader's work budget: each case
// expects one exact TraceError, and no file left where a write failed.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <hatf10.hpp>
#include <repeats.hpp>

#include <doctest/doctest.h>

#include "hatf_base.hpp"
#include "trace_support.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;
using namespace metatf::test;
using rt::ErrorKind;
using namespace hatf10;
using namespace metatf::test::hatf_base;

TEST_SUITE("writer errors") {

TEST_CASE("a value that does not fit fails the write and close() leaves no file") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("bad-value");
        const std::uint64_t data = hatf10_data_start(f.word());
        {
            rt::WriterOptions strict = f.options();
            strict.strict = true;  // else the writer widens the field
            Writer w(t.path(), strict);
            w.comment("x");                            // record 0: 4 bytes
            w.write(Alloc{.size = 1, .address = 2});  // record 1: 9 bytes
            CHECK(t.has_partial());
            // Record 2's size field would start after its tag.
            CHECK(show(error_of([&] { w.write(Alloc{.size = 0x100000000, .address = 3}); })) ==
                  show(ErrorKind::bad_value, data + 4 + alloc_size + 1, 0, 2,
                       "value 4294967296 of field 'size' (none) does not fit in 4 bytes"));
            const auto unusable = show(ErrorKind::usage, 0, 0, 2, "an earlier write failed; the trace cannot be completed");
            CHECK(show(error_of([&] { w.close(); })) == unusable);
            CHECK(show(error_of([&] { w.write(Free{.address = 2}); })) == unusable);
            CHECK(show(error_of([&] { w.comment("y"); })) == unusable);
            CHECK(!fs::exists(t.path()));
        }
        CHECK(!fs::exists(t.path()));
        CHECK(!t.has_partial());
    }
}

TEST_CASE("other values the current encoding cannot carry, in a strict writer") {
    TempTrace t("bad-value-kinds");
    const std::uint64_t data = hatf10_data_start(8);
    rt::WriterOptions strict = formats[0].options();
    strict.strict = true;
    SUBCASE("a narrowed width") {
        Writer w(t.path(), strict);
        w.set_width(RecordType::Alloc, Alloc::size_field, 1);  // record 0: 4 + 8 bytes
        CHECK(show(error_of([&] { w.write(Alloc{.size = 256, .address = 1}); })) ==
              show(ErrorKind::bad_value, data + 12 + 1, 0, 1, "value 256 of field 'size' (none) does not fit in 1 bytes"));
    }
    SUBCASE("a default field given another value") {
        Writer w(t.path(), strict);
        // thread is `default 0`, after tag, size and address.
        CHECK(show(error_of([&] { w.write(Alloc{.size = 1, .address = 2, .thread = 5}); })) ==
              show(ErrorKind::bad_value, data + alloc_size, 0, 0, "value 5 of field 'thread' (default) differs from the field's default"));
    }
    SUBCASE("a bytes field of the wrong length") {
        Writer w(t.path(), strict);
        w.set_interpretation(RecordType::Free, Free::attributes_attributesLength_field, rt::MetaOp::none);  // 4 bytes
        CHECK(show(error_of([&] {
                  w.write(Free{.address = 1, .attributes_attributesLength = 2, .attributes_attributesData = rt::as_bytes("abc")});
              })) == show(ErrorKind::bad_value, data + 4 + free_size + 1, 0, 1, "field 'attributes.attributesData' takes 2 bytes, not 3"));
    }
}

TEST_CASE("the temporary file's descriptor is high and close-on-exec") {
    TempTrace t("descriptor");
    Writer w(t.path());
    // Its number: the one whose /proc/self/fd link names the .partial file.
    const std::string prefix = fs::path(t.path()).filename().string() + ".";
    int found = -1;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const std::string target = fs::read_symlink(e.path(), ec).filename().string();
        if (!ec && target.starts_with(prefix) && target.ends_with(".partial")) {
            found = std::stoi(e.path().filename().string());
        }
    }
    REQUIRE(found >= 0);
    CHECK(found >= 512);
    CHECK((::fcntl(found, F_GETFD) & FD_CLOEXEC) != 0);
}

TEST_CASE("a writer destroyed without close() leaves no file") {
    TempTrace t("no-close");
    {
        Writer w(t.path());
        w.write(Alloc{.size = 1, .address = 2});
        CHECK(t.has_partial());
        CHECK(!fs::exists(t.path()));
    }
    CHECK(!fs::exists(t.path()));
    CHECK(!t.has_partial());
    {
        Writer w(t.path());  // nothing written at all
    }
    CHECK(!fs::exists(t.path()));
    CHECK(!t.has_partial());
}

TEST_CASE("refused requests leave the writer usable") {
    for (const Format& f : formats) {
        INFO("format: " << std::string(f.name));
        TempTrace t("refused");
        const unsigned w = f.word();
        {
            Writer out(t.path(), f.options());
            out.write(Alloc{.size = 1, .address = 2});  // record 0
            CHECK(show(error_of([&] { out.comment(std::string(65536, 'c')); })) ==
                  show(ErrorKind::usage, 0, 0, 1, "a comment holds at most 65535 bytes, not 65536"));
            CHECK(show(error_of([&] { out.set_width(RecordType::Alloc, Alloc::size_field, 9); })) ==
                  show(ErrorKind::bad_metadata, 0, 0, 1, "metadata for field 'size' of record 'alloc': width 9 is more than 8 bytes"));
            CHECK(show(error_of([&] { out.set_width(RecordType::Comment, 1, 2); })) ==
                  show(ErrorKind::bad_metadata, 0, 0, 1, "the predefined record 'comment' cannot be changed"));
            CHECK(show(error_of([&] { out.set_width(RecordType::Alloc, 8, 2); })) ==
                  show(ErrorKind::bad_metadata, 0, 0, 1, "record 'alloc' has no field 8"));
            CHECK(show(error_of([&] { out.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::base_offset, std::uint64_t(1) << 40); })) ==
                  (w == 4 ? show(ErrorKind::bad_metadata, 0, 0, 1, "a metadata value does not fit the 4-byte values of this trace's class")
                          : std::string("no error")));
            CHECK(show(error_of([&] { out.section(5); })) == show(ErrorKind::usage, 0, 0, w == 4 ? 1 : 2, "section 5 is not defined by the DTD"));
            out.comment(std::string(65535, 'c'));  // HATF 1.0's longest
            out.close();
            CHECK(show(error_of([&] { out.write(Free{.address = 2}); })) ==
                  show(ErrorKind::usage, 0, 0, w == 4 ? 2 : 3, "the trace is closed"));
            CHECK(show(error_of([&] { out.close(); })) == show(ErrorKind::usage, 0, 0, w == 4 ? 2 : 3, "the trace is closed"));
        }
        Reader r(t.path());
        REQUIRE(r.next());
        CHECK(r.type() == RecordType::Alloc);
        if (w == 8) {
            REQUIRE(r.next());
            CHECK(r.type() == RecordType::Metadata);
        }
        REQUIRE(r.next());
        REQUIRE(r.type() == RecordType::Comment);
        CHECK(r.get<Comment>().text == std::string(65535, 'c'));
        CHECK(!r.next());
    }
}

}  // TEST_SUITE

TEST_SUITE("work budget") {

// Seven metadata records' worth of trouble: the count stores nothing and says
// 2^24 - 1, and the repeated element stores nothing, so each 1-byte record asks
// for 16.7 M elements. The reader's budget for the whole trace stops it at once.
TEST_CASE("groups that expand to far more elements than the trace has bytes are refused") {
    TempTrace t("repeat-bomb");
    const std::uint64_t count = (std::uint64_t(1) << 24) - 1, records = 2'200'000;
    rt::WriterOptions options;
    options.output.replace = true;
    options.chunk_bytes = std::size_t(4) << 20;  // one chunk, so the check of each record alone lets it pass
    {
        rt::TraceWriter w(t.path(), repeats::dtd, options);
        const auto slot = static_cast<std::uint32_t>(repeats::RecordType::Group);
        w.metadata(slot, repeats::Group::n_field, rt::MetaOp::default_value, count);
        w.metadata(slot, repeats::Group::x_field, rt::MetaOp::default_value, 0);
        for (std::uint64_t i = 0; i < records; ++i) {
            w.begin_record(slot);
            w.write_int(w.states(slot)[repeats::Group::n_field], count);
            w.check_count(w.states(slot)[repeats::Group::n_field], count, count);
            w.end_record();
        }
        w.close();
    }
    const auto error = metatf::test::read_error<repeats::Reader>(t.path());
    REQUIRE(error);
    CHECK(error->kind == ErrorKind::bad_value);
    CHECK(error->record == 2);  // the first group, after the two metadata records
    CHECK(error->message.starts_with("repeated groups expand to more than "));
}

}  // TEST_SUITE
