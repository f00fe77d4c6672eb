// Text forms that spell a number by the name its field's `enum` gives it
// (docs/dtd-language.md, section 15, `text = enum`): MSR Cambridge's
// Read/Write, blkparse's actions, read and written by the runtime's generic
// TextReader and TextWriter.
#include <sstream>
#include <string>

#include <metatf/forms/text.hpp>

#include "lower/lower.hpp"
#include "support.hpp"
#include "text_support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

// "128166372003061629,hm,1,Read,3649060864,4096,41395"; an action line "q  G,-1".
const char* const dtd_text = R"dtd(tag.width = 1;
timestamp.width = 8;
hl.width = 1; hl.text = omit; hostname.type = bytes; hostname.width = hl.value;
disk.width = 1;
type.width = 1; type.enum = { Read = 0, Write = 1 }; type.text = enum;
offset.width = 8;
size.width = 4;
responseTime.width = 4;
action.width = 1; action.enum = { Q = 0, G = 1, UT = 2, A = 9 }; action.text = enum column 3;
sign.width = 1; sign.type = signed; sign.enum = { minus = -1, zero = 0, plus = 1 }; sign.text = enum;
text { separator = ","; }
request : (tag, timestamp, hl, hostname, disk, type, offset, size, responseTime) { tag.value = 4; tag.mnemonic = "r"; }
queue : (tag, action, sign) { tag.value = 5; tag.mnemonic = "q"; }
)dtd";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

// Reads `text` and writes each record back: the canonical form of the text.
std::string normalized(const std::string& text) { return test::normalized(dtd().desc(), text); }

std::string error(const std::string& text) { return test::text_error(dtd().desc(), text); }

// The integers of the one record `line` holds.
std::vector<std::uint64_t> integers_of(const std::string& line) {
    std::istringstream in(line);
    rt::TextReader reader(in, dtd().desc());
    rt::GenericRecord record;
    REQUIRE(reader.next(record));
    std::vector<std::uint64_t> out;
    for (const rt::GenericValue& v : record.values) out.push_back(v.integer);
    return out;
}

}  // namespace

TEST_CASE("enum text: a word is read as the number its field's enum gives it, and written back as the word") {
    CHECK(integers_of("r,128166372003061629,hm,1,Read,3649060864,4096,41395\n") ==
          std::vector<std::uint64_t>{128166372003061629u, 2, 0, 1, 0, 3649060864u, 4096, 41395});
    CHECK(integers_of("r,1,hm,1,Write,1,1,1\n")[4] == 1);
    const std::string lines = "r,128166372003061629,hm,1,Read,3649060864,4096,41395\nr,1,hm,1,Write,1,1,1\n";
    CHECK(normalized(lines) == lines);
}

TEST_CASE("enum text: words of any length, in a column, and a signed field's negative values") {
    CHECK(integers_of("q,  G,minus\n") == std::vector<std::uint64_t>{1, std::uint64_t(-1)});
    CHECK(integers_of("q, UT,plus\n") == std::vector<std::uint64_t>{2, 1});
    const std::string lines = "q,  Q,zero\nq, UT,minus\nq,  A,plus\n";
    CHECK(normalized(lines) == lines);
    CHECK(normalized("q,G,zero\n") == "q,  G,zero\n");
}

TEST_CASE("enum text: a word the enum does not name is an error at its column") {
    CHECK(error("r,1,hm,1,Flush,1,1,1\n") == "line 1, column 10: expected one of the names (Read, Write) for field 'type' of record 'request', not 'Flush'");
    CHECK(error("r,1,hm,1,read,1,1,1\n") == "line 1, column 10: expected one of the names (Read, Write) for field 'type' of record 'request', not 'read'");
    CHECK(error("r,1,hm,1,,1,1,1\n") == "line 1, column 10: expected one of the names (Read, Write) for field 'type' of record 'request'");
    CHECK(error("r,1,hm,1,0,1,1,1\n") == "line 1, column 10: expected one of the names (Read, Write) for field 'type' of record 'request', not '0'");
    CHECK(error("q,  X,zero\n") == "line 1, column 5: expected one of the names (Q, G, UT, A) for field 'action' of record 'queue', not 'X'");
}

TEST_CASE("enum text: the writer refuses a value the enum does not name") {
    std::ostringstream out;
    rt::TextWriter writer(out, dtd().desc());
    REQUIRE(std::string(dtd().desc().records[4].name) == "queue");
    const rt::GenericRecord unnamed{4, {{1, 3, 0, {}}, {2, 0, 0, {}}}};
    CHECK_THROWS_WITH_AS(writer.write(unnamed), "line 1: field 'action' of record 'queue' has value 3, which its enum names none of", rt::TextError);
    const rt::GenericRecord negative{4, {{1, 1, 0, {}}, {2, std::uint64_t(-2), 0, {}}}};
    CHECK_THROWS_WITH_AS(writer.write(negative), "line 2: field 'sign' of record 'queue' has value -2, which its enum names none of", rt::TextError);
}
