// Text forms with text of their own around values (docs/dtd-language.md,
// section 15): `before` and `after` on fields and on the tag, `digits` and
// `upper`, read and written by the runtime's generic TextReader and TextWriter.
#include <sstream>
#include <string>

#include <metatf/forms/text.hpp>

#include "lower/lower.hpp"
#include "support.hpp"
#include "text_support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

// A call line: "<call>@00FF(007) -005"; a name line: "name foo=1A2B"; two
// tokens whose `after` texts end alike: "r ATS xRS", "q ab, "cd",".
const char* const dtd_text = R"dtd(tag.width = 1;
a.width = 8;
a.text = hex digits 4 upper;
n.width = 2;
n.text = decimal digits 3;
s.width = 2;
s.type = signed;
s.text = decimal digits 3;
len.width = 1;
len.text = omit;
name.type = bytes;
name.width = len.value;
text { separator = " "; }
call : (tag, a, n, s) {
    tag.value = 4; tag.mnemonic = "call"; tag.before = "<"; tag.after = ">";
    a.before = "@"; n.before = "("; n.after = ")";
}
named : (tag, len, name, a) { tag.value = 5; tag.mnemonic = "name"; a.before = "="; }
hexed : (tag, n, a) { tag.value = 6; tag.mnemonic = "h"; a.before = "0x"; }
version : (tag, v, n) { tag.value = 7; tag.mnemonic = "v"; v.width = 1; v.value = 2; v.text = hex digits 2; }
pair : (tag, k, k*(n)) { tag.value = 8; tag.mnemonic = "p"; k.width = 1; k.value = 2; k.text = omit; }
lx.width = 1; lx.text = omit; x.type = bytes; x.width = lx.value;
ly.width = 1; ly.text = omit; y.type = bytes; y.width = ly.value;
suffix : (tag, lx, x, ly, y) { tag.value = 9; tag.mnemonic = "r"; x.after = "S"; y.after = "RS"; }
quoted : (tag, lx, x, ly, y) { tag.value = 10; tag.mnemonic = "q"; x.after = ","; y.after = "\",";  }
)dtd";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

// Reads `text` and writes each record back: the canonical form of the text.
std::string normalized(const std::string& text) { return test::normalized(dtd().desc(), text); }

// The bytes values of the one record `line` holds.
std::vector<std::string> strings_of(const std::string& line) {
    std::istringstream in(line);
    rt::TextReader reader(in, dtd().desc());
    rt::GenericRecord record;
    REQUIRE(reader.next(record));
    std::vector<std::string> out;
    for (const rt::GenericValue& v : record.values) {
        if (!v.bytes.empty() || dtd().desc().records[record.slot].fields[v.field].type == rt::Type::bytes) {
            out.emplace_back(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
        }
    }
    return out;
}

std::string read_error(const std::string& text) { return test::text_error(dtd().desc(), text); }

rt::GenericRecord call(std::uint64_t a, std::uint64_t n, std::int64_t s) {
    rt::GenericRecord r;
    r.slot = 3;
    for (std::uint32_t i = 1; i <= 3; ++i) r.values.push_back({i, 0, 0, {}});
    r.values[0].integer = a;
    r.values[1].integer = n;
    r.values[2].integer = static_cast<std::uint64_t>(s);
    return r;
}

std::string written(const rt::GenericRecord& r) { return test::written(dtd().desc(), r); }

}  // namespace

TEST_CASE("text around values: written as the DTD sets it, with padded digits") {
    CHECK(written(call(0xff, 7, -5)) == "<call>@00FF(007) -005\n");
    CHECK(written(call(0x123456789a, 12345, 42)) == "<call>@123456789A(12345) 042\n");
    const std::string canonical = "<call>@00FF(007) -005\nname foo=1A2B\nname a(b)c@d=0000\n";
    CHECK(normalized(canonical) == canonical);
}

TEST_CASE("text around values: lower-case hex, fewer digits and blanks before a number are read") {
    CHECK(normalized("<call>@ff(7) -5\n") == "<call>@00FF(007) -005\n");
    CHECK(normalized("<call>@  00fF( 0007)    5\n") == "<call>@00FF(007) 005\n");
    CHECK(normalized("name x=0\n") == "name x=0000\n");
}

TEST_CASE("text around values: a number ends where a text around the values starts") {
    CHECK(normalized("h 0050x00ff\n") == "h 0050x00FF\n");  // n is 5, then "0x" and a
    CHECK(normalized("h 50x1\n") == "h 0050x0001\n");
}

TEST_CASE("text around values: missing text is an error at its column") {
    CHECK(read_error("<call>@00FF007) -5\n") == "line 1, column 15: expected '(' before field 'n' of record 'call'");
    CHECK(read_error("<call>@00FG(007) -5\n") == "line 1, column 11: unexpected 'G' in field 'a' of record 'call'");
    CHECK(read_error("<call>@00FF(007 -5\n") == "line 1, column 16: expected ')' after field 'n' of record 'call'");
    CHECK(read_error("<call>00FF(007) -5\n") == "line 1, column 7: expected '@' before field 'a' of record 'call'");
    CHECK(read_error("<call>@00FF\n") == "line 1, column 12: the line ends before field 'n' of record 'call'");
    CHECK(read_error("call>@00FF(007) -5\n") == "line 1, column 1: unknown record 'call>@00FF(007)'");
    CHECK(read_error("<call@00FF(007) -5\n") == "line 1, column 1: unknown record '<call@00FF(007)'");
    CHECK(read_error("name foo\n") == "line 1, column 9: the line ends before field 'a' of record 'named'");
}

TEST_CASE("a value the DTD fixes is read and written, and another value is an error at its column") {
    CHECK(normalized("v 2 5\n") == "v 02 005\n");
    CHECK(read_error("v 3 5\n") == "line 1, column 3: field 'v' of record 'version' is 3; the DTD fixes it at 2");
    // A count the line implies, not written.
    CHECK(normalized("p 1 2\n") == "p 001 002\n");
    CHECK(read_error("p 1 2 3\n") == "line 1, column 2: field 'k' of record 'pair' is 3; the DTD fixes it at 2");
    // The text writer refuses the record rather than write a line its reader refuses.
    std::ostringstream out;
    rt::TextWriter writer(out, dtd().desc());
    const rt::GenericRecord wrong{6, {{1, 3, 0, {}}, {2, 5, 0, {}}}};
    REQUIRE(std::string(dtd().desc().records[6].name) == "version");
    CHECK_THROWS_WITH_AS(writer.write(wrong), "line 1: field 'v' of record 'version' is 3; the DTD fixes it at 2", rt::TextError);
}

TEST_CASE("text around values: a token holding a record's text is refused by the writer") {
    rt::GenericRecord r;
    r.slot = 4;
    const std::string name = "x=y";
    r.values = {{1, 3, 0, {}}, {2, 0, 0, rt::as_bytes(name)}, {3, 1, 0, {}}};
    try {
        written(r);
        FAIL("written");
    } catch (const rt::TextError& e) {
        CHECK(std::string(e.what()) == "line 1: record 'named' would not read back the same from its line 'name x=y=0001': a value runs into the text around the "
              "values");
    }
}

TEST_CASE("text around values: a token ends at its own after text, though another field's text ends it") {
    CHECK(strings_of("r ATS xRS\n") == std::vector<std::string>{"AT", "x"});
    CHECK(strings_of("r xRS yRS\n") == std::vector<std::string>{"xR", "y"});
    CHECK(strings_of("q ab, \"cd\",\n") == std::vector<std::string>{"ab", "\"cd"});
    for (const std::string line : {"r ATS xRS\n", "r xRS yRS\n", "r S RS\n", "q ab, \"cd\",\n", "q , \",\n"}) {
        CHECK(normalized(line) == line);  // an empty token is marked by its after text
    }
    CHECK(read_error("r ATS xR\n") == "line 1, column 9: expected 'RS' after field 'y' of record 'suffix'");
    CHECK(read_error("q a,b, c\",\n") == "line 1, column 5: expected a blank before field 'y' of record 'quoted'");
}

TEST_CASE("text around values: a token holding its own after text is refused by the writer") {
    rt::GenericRecord r;
    r.slot = 8;
    const std::string x = "AT", y = "xRS";
    r.values = {{1, 2, 0, {}}, {2, 0, 0, rt::as_bytes(x)}, {3, 3, 0, {}}, {4, 0, 0, rt::as_bytes(y)}};
    REQUIRE(std::string(dtd().desc().records[8].name) == "suffix");
    CHECK_THROWS_WITH_AS(written(r), "line 1: record 'suffix' would not read back the same from its line 'r ATS xRSRS': a value runs into the text "
                                     "around the values",
                         rt::TextError);
}
