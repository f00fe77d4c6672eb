// TraceError::what(): the position comes first when the error has one, and is
// left out for I/O failures and for errors about the file as a whole.
#include <fstream>
#include <string>

#include <hatf10.hpp>

#include <doctest/doctest.h>

#include "trace_support.hpp"

namespace rt = metatf::rt;
using rt::ErrorKind;
using rt::TraceError;

TEST_SUITE("trace errors") {

TEST_CASE("a place in the trace is shown before the message") {
    const TraceError in_section(ErrorKind::truncated, "cut", 40, 2, 7);
    CHECK(in_section.has_position);
    CHECK(std::string(in_section.what()) == "byte 40, section 2, record 7: cut");
    CHECK(std::string(TraceError(ErrorKind::bad_header, "odd", 4, -1, 0).what()) == "byte 4, record 0: odd");
    // Byte 0 is a place once a section is being read or records have been.
    CHECK(std::string(TraceError(ErrorKind::bad_value, "wide", 0, 0, 0).what()) == "byte 0, section 0, record 0: wide");
    CHECK(std::string(TraceError(ErrorKind::usage, "closed", 0, -1, 3).what()) == "byte 0, record 3: closed");
}

TEST_CASE("an error without a place in the trace is its message alone") {
    const TraceError io(ErrorKind::io, "cannot write 'x'", 120, 1, 3);
    CHECK_FALSE(io.has_position);
    CHECK(std::string(io.what()) == "cannot write 'x'");
    const TraceError whole_file(ErrorKind::bad_magic, "not a trace", 0, -1, 0);
    CHECK_FALSE(whole_file.has_position);
    CHECK(std::string(whole_file.what()) == "not a trace");
    const TraceError none(ErrorKind::usage, "no text form");
    CHECK_FALSE(none.has_position);
    CHECK(std::string(none.what()) == "no text form");
    CHECK(none.message == "no text form");
    CHECK((none.offset == 0 && none.section == -1 && none.record == 0));
}

TEST_CASE("a reader's errors before the first record have no position") {
    metatf::test::TempTrace t("error-position");
    const auto missing = metatf::test::read_error<hatf10::Reader>(t.path());
    REQUIRE(missing);
    CHECK(std::string(missing->what()) == "cannot open '" + t.path() + "': No such file or directory");
    { std::ofstream(t.path(), std::ios::binary) << "this is not a trace, only text\n"; }
    const auto text = metatf::test::read_error<hatf10::Reader>(t.path());
    REQUIRE(text);
    CHECK(std::string(text->what()) == "not a Meta-TF trace (the file does not start with \\177MTF)");
}

TEST_CASE("a writer's output failures are 'output' errors that name the file, without a position") {
    const std::string path = "/nonexistent-metatf-dir/x.mtf";
    try {
        hatf10::Writer w(path);
        FAIL("a writer in a missing directory");
    } catch (const TraceError& e) {
        CHECK(e.kind == ErrorKind::output);
        CHECK_FALSE(e.has_position);
        CHECK(std::string(e.what()) == path + ": cannot create a temporary file beside it: No such file or directory");
    }
    metatf::test::TempTrace t("error-output");
    { std::ofstream(t.path()) << "kept"; }
    try {
        hatf10::Writer w(t.path());
        FAIL("a writer over an existing file");
    } catch (const TraceError& e) {
        CHECK(e.kind == ErrorKind::output);
        CHECK(std::string(e.what()) == t.path() + ": exists; use -f (--force) to replace it");
    }
}

}  // TEST_SUITE
