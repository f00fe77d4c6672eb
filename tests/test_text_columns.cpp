// Text forms with columns padded by blanks (docs/dtd-language.md, section 15,
// `column N` and `column N left`: printf's `%5u` and `%-3d`), read and written
// by the runtime's generic TextReader and TextWriter.
#include <sstream>
#include <string>

#include <metatf/forms/text.hpp>

#include "lower/lower.hpp"
#include "support.hpp"
#include "text_support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

// CSV whose values are padded: "c,  697,-5  ,    FF,  W,ab    ".
const char* const csv_dtd = R"dtd(tag.width = 1;
n.width = 4; n.text = decimal column 5;
m.width = 4; m.type = signed; m.text = decimal column 4 left;
h.width = 4; h.text = hex digits 2 upper column 6;
c.width = 1; c.text = chars "RW" column 3;
ls.width = 1; ls.text = omit; s.type = bytes; s.width = ls.value; s.text = string column 6 left;
text { separator = ","; }
csv : (tag, n, m, h, c, ls, s) { tag.value = 4; tag.mnemonic = "c"; }
)dtd";

// The start of blkparse's default line, "%3d,%-3d %2d %2s": "  8,0    3  G".
const char* const blk_dtd = R"dtd(tag.width = 1;
major.width = 4; major.text = decimal column 3;
minor.width = 4; minor.text = decimal column 3 left; minor.before = ",";
cpu.width = 4; cpu.text = decimal column 2;
al.width = 1; al.text = omit; action.type = bytes; action.width = al.value; action.text = string column 2;
text { separator = " "; }
event : (tag, major, minor, cpu, al, action) { tag.value = 4; tag.mnemonic = ""; }
)dtd";

const lower::LoweredDtd& csv() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(csv_dtd));
    return lowered;
}

const lower::LoweredDtd& blk() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(blk_dtd));
    return lowered;
}

// Reads `text` and writes each record back: the canonical form of the text.
std::string normalized(const lower::LoweredDtd& dtd, const std::string& text) { return test::normalized(dtd.desc(), text); }
std::string error(const lower::LoweredDtd& dtd, const std::string& text) { return test::text_error(dtd.desc(), text); }

// A csv record of the values given.
rt::GenericRecord csv_record(std::uint64_t n, std::int64_t m, std::uint64_t h, std::uint64_t c, const std::string& s) {
    rt::GenericRecord r;
    r.slot = 3;
    r.values = {{1, n, 0, {}}, {2, static_cast<std::uint64_t>(m), 0, {}}, {3, h, 0, {}}, {4, c, 0, {}}, {5, s.size(), 0, {}},
                {6, 0, 0, rt::as_bytes(s)}};
    return r;
}

std::string written(const rt::GenericRecord& r) { return test::written(csv().desc(), r); }

}  // namespace

TEST_CASE("columns: values are padded with blanks, right- or left-aligned, and read back") {
    REQUIRE(std::string(csv().desc().records[3].name) == "csv");
    CHECK(written(csv_record(697, -5, 0xff, 1, "ab")) == "c,  697,-5  ,    FF,  W,ab    \n");
    const std::string line = "c,  697,-5  ,    FF,  W,ab    \n";
    CHECK(normalized(csv(), line) == line);
    const std::string blk_lines = "  8,0    3  G\n  8,16   0 UT\n";
    CHECK(normalized(blk(), blk_lines) == blk_lines);  // blanks at the start pad the first value
}

TEST_CASE("columns: a value wider than its column widens it, as printf does") {
    CHECK(written(csv_record(1234567, -12345, 0x1234567, 0, "abcdefgh")) == "c,1234567,-12345,1234567,  R,abcdefgh\n");
    const std::string wide = "c,1234567,-12345,1234567,  R,abcdefgh\n";
    CHECK(normalized(csv(), wide) == wide);
    const std::string blk_wide = "259,123456 12 UTX\n";
    CHECK(normalized(blk(), blk_wide) == blk_wide);
}

TEST_CASE("columns: other padding is read and written back as the column's") {
    CHECK(normalized(csv(), "c,697,-5,ff,W,ab\n") == "c,  697,-5  ,    FF,  W,ab    \n");
    CHECK(normalized(csv(), "c, 697,-5     ,FF,   W,  ab\n") == "c,  697,-5  ,    FF,  W,  ab  \n");
    CHECK(error(csv(), "c, 697  ,-5,FF,W,ab\n") == "line 1, column 7: unexpected ' ' in field 'n' of record 'csv'");  // right-aligned
    CHECK(normalized(blk(), "8,0 3 G\n") == "  8,0    3  G\n");
}

TEST_CASE("columns: a pad that is not blank is an error at its column") {
    CHECK(error(csv(), "c,xx697,-5  ,    FF,  W,ab    \n") == "line 1, column 3: expected a decimal number for field 'n' of record 'csv', not 'xx697'");
    CHECK(error(csv(), "c,  697,-5x ,    FF,  W,ab    \n") == "line 1, column 11: unexpected 'x' in field 'm' of record 'csv'");
    CHECK(error(csv(), "c,  697,-5  ,  x FF,  W,ab    \n") == "line 1, column 16: expected a hexadecimal number for field 'h' of record 'csv', not 'x FF'");
    CHECK(error(blk(), "x 8,0    3  G\n") == "line 1, column 1: expected a decimal number for field 'major' of record 'event', not 'x'");
}

TEST_CASE("columns: the writer refuses a string whose blank its padding would take") {
    CHECK_THROWS_WITH_AS(written(csv_record(1, 1, 1, 1, "ab ")),
                         "line 1: field 's' of record 'csv' ends with a blank, which its column's padding would take", rt::TextError);
    CHECK(written(csv_record(1, 1, 1, 1, " ab")) == "c,    1,1   ,    01,  W, ab   \n");
    CHECK(normalized(csv(), "c,    1,1   ,    01,  W, ab   \n") == "c,    1,1   ,    01,  W, ab   \n");
}
