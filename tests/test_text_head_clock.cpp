// Text forms of real tools' lines (docs/dtd-language.md, section 15): a
// mnemonic after a head of shared fields (`mnemonicAfter`, blkparse's
// action, strace's exit and signal lines) and a time of day as one value
// (`text = clock`, strace -tt), read and written by the runtime's generic
// TextReader and TextWriter.
#include <string>

#include <metatf/forms/text.hpp>

#include "lower/lower.hpp"
#include "support.hpp"
#include "text_support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

// "4711 05:48:55.543726  Q 8 [a]", "4711 05:48:55.543726 UT 3", "4711 05:48:55.543726 +++ 0".
const char* const dtd_text = R"dtd(tag.width = 1;
pid.width = 4; pid.text = decimal column 4;
time.width = 8; time.scale = 6; time.text = clock;
n.width = 4;
cl.width = 1; cl.text = omit; command.type = bytes; command.width = cl.value; command.before = " ["; command.after = "]";
text { separator = " "; mnemonicAfter = "time"; }
queue : (tag, pid, time, n, cl, command) { tag.value = 4; tag.mnemonic = "Q"; tag.before = "  "; }
unplug : (tag, pid, time, n) { tag.value = 5; tag.mnemonic = "UT"; }
exit : (tag, pid, time, n) { tag.value = 6; tag.mnemonic = "+++"; }
)dtd";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

std::string normalized(const std::string& text) { return test::normalized(dtd().desc(), text); }
std::string error(const std::string& text) { return test::text_error(dtd().desc(), text); }

}  // namespace

TEST_CASE("head: the record is the one whose mnemonic follows the shared fields, written back as it was") {
    const std::string lines = "4711 05:48:55.543726  Q 8 [kjournald]\n  12 23:59:59.000001 UT 3\n4711 00:00:00.000000 +++ 0\n";
    CHECK(normalized(lines) == lines);
    std::istringstream in(lines);
    rt::TextReader reader(in, dtd().desc());
    rt::GenericRecord record;
    std::vector<std::string> names;
    while (reader.next(record)) names.push_back(dtd().desc().records[record.slot].name);
    CHECK(names == std::vector<std::string>{"queue", "unplug", "exit"});
}

TEST_CASE("head: blanks before the mnemonic are read in any number and written as the DTD says") {
    CHECK(normalized("4711 05:48:55.543726 Q 8 [a]\n4711 05:48:55.543726    UT 3\n") ==
          "4711 05:48:55.543726  Q 8 [a]\n4711 05:48:55.543726 UT 3\n");
}

TEST_CASE("head: an unknown or missing mnemonic is an error where it should stand") {
    CHECK(error("4711 05:48:55.543726 Z 3\n") == "line 1, column 22: unknown record 'Z'");
    CHECK(error("4711 05:48:55.543726\n") == "line 1, column 21: expected a record mnemonic after field 'time'");
    CHECK(error("4711 5 UT 3\n") == "line 1, column 7: expected ':' in field 'time' of record 'queue', a time as HH:MM:SS");
}

TEST_CASE("clock: a time of day is one value, in units of its scale, written with two-digit hours at least") {
    std::istringstream in("4711 05:48:55.543726 UT 3\n4711 100:00:00.1 UT 3\n");
    rt::TextReader reader(in, dtd().desc());
    rt::GenericRecord record;
    REQUIRE(reader.next(record));
    CHECK(record.values[1].integer == 20935543726u);  // (5 * 3600 + 48 * 60 + 55) s and 543726 us
    REQUIRE(reader.next(record));
    CHECK(record.values[1].integer == 360000100000u);
    CHECK(normalized("4711 5:48:55.5 UT 3\n") == "4711 05:48:55.500000 UT 3\n");
}

TEST_CASE("clock: minutes and seconds are two digits below 60, and a scaled clock needs its fraction") {
    CHECK(error("4711 05:60:55.5 UT 3\n") == "line 1, column 9: expected two digits from 00 to 59 in field 'time' of record 'queue', a time as HH:MM:SS");
    CHECK(error("4711 05:48:5.5 UT 3\n") == "line 1, column 12: expected two digits from 00 to 59 in field 'time' of record 'queue', a time as HH:MM:SS");
    CHECK(error("4711 05:48:55 UT 3\n") == "line 1, column 14: field 'time' of record 'queue' needs a fraction: '.' and up to 6 digits");
    CHECK(error("4711 99999999999999999999:00:00.0 UT 3\n") == "line 1, column 6: field 'time' of record 'queue' does not fit in 64 bits");
}

TEST_CASE("clock: the compiler takes it on unsigned integers only, and 'digits' with a scale") {
    CHECK(test::briefs("t.type = signed; t.width = 8; t.text = clock; text { separator = \" \"; } a : (tag, t) { tag.value = 4; tag.mnemonic = \"a\"; }") ==
          std::vector<std::string>{"1:40: error: 'clock' applies to unsigned integers; field 't' of record 'a' is 'signed'"});
    CHECK(test::briefs("t.width = 8; t.text = clock digits 3; text { separator = \" \"; } a : (tag, t) { tag.value = 4; tag.mnemonic = \"a\"; }") ==
          std::vector<std::string>{"1:23: error: 'digits' of a 'clock' is the fewest fraction digits written: it needs a scale"});
}

namespace {

// blkparse -t's "sector + blocks (elapsed) [command]": `(elapsed)` may be there or not.
const char* const optional_text = R"dtd(tag.width = 1;
sector.width = 8;
blocks.width = 4; blocks.before = " + ";
ec.width = 1; ec.text = omit;
elapsed.width = 8; elapsed.before = " ("; elapsed.after = ")";
cl.width = 1; cl.text = omit; command.type = bytes; command.width = cl.value; command.before = " ["; command.after = "]";
text { separator = " "; }
q : (tag, sector, blocks, ec, ec*(elapsed), cl, command) { tag.value = 4; tag.mnemonic = "Q"; }
)dtd";

const lower::LoweredDtd& optional_dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(optional_text));
    return lowered;
}

}  // namespace

TEST_CASE("optional part: a group inside the line is there as often as its marker starts it, and written back so") {
    const std::string lines = "Q 223490 + 8 [kjournald]\nQ 223490 + 8 (1234) [kjournald]\nQ 1 + 2 (3) (4) [x]\n";
    CHECK(test::normalized(optional_dtd().desc(), lines) == lines);
    std::istringstream in(lines);
    rt::TextReader reader(in, optional_dtd().desc());
    rt::GenericRecord record;
    std::vector<std::uint64_t> counts;
    while (reader.next(record)) counts.push_back(record.values[2].integer);
    CHECK(counts == std::vector<std::uint64_t>{0, 1, 2});
    CHECK(test::text_error(optional_dtd().desc(), "Q 1 + 2 (x) [y]\n") ==
          "line 1, column 10: expected a decimal number for field 'elapsed' of record 'q', not 'x'");
}
