// Native binary forms (docs/dtd-language.md, section 16) on a DTD that uses
// what PTF's does not: little-endian numbers, a 2-byte type code set with
// tag.code, signed and float fields, fixed and counted bytes, a group. The
// runtime's generic NativeReader and NativeWriter, byte for byte.
#include <bit>
#include <sstream>
#include <string>

#include <metatf/native.hpp>

#include "lower/lower.hpp"
#include "support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

const char* const dtd_text = R"(tag.width = 1;
native { order = little; code = 2; }
a.width = 2;
a.type = signed;
f.type = float;
f.width = 4;
d.type = float;
d.width = 8;
n.width = 1;
s.type = bytes;
s.width = 3;
len.width = 2;
t.type = bytes;
t.width = len.value;
u.width = 8;
r : (tag, a, f, d, n, n*(s, len, t), u) { tag.value = 4; tag.code = 4660; }
q : (tag) { tag.value = 5; tag.code = 0; }
)";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

constexpr std::uint32_t r_slot = 3, q_slot = 4;

rt::GenericValue integer(std::uint32_t field, std::uint64_t v) { return {field, v, 0, {}}; }
rt::GenericValue real(std::uint32_t field, double v) { return {field, 0, v, {}}; }
rt::GenericValue bytes(std::uint32_t field, const std::string& s) { return {field, 0, 0, rt::as_bytes(s)}; }

const std::string abc = "abc", xy = "xy", def = "def", empty;

rt::GenericRecord sample(double f) {
    return {r_slot,
            {integer(1, std::uint64_t(-2)), real(2, f), real(3, -0.25), integer(4, 2), bytes(5, abc), integer(6, 2), bytes(7, xy),
             bytes(5, def), integer(6, 0), bytes(7, empty), integer(8, 0x0102030405060708)}};
}

const std::string sample_bytes = std::string("\x34\x12", 2) + "\xfe\xff" + std::string("\x00\x00\xc0\x3f", 4) +
                                 std::string("\x00\x00\x00\x00\x00\x00\xd0\xbf", 8) + "\x02" + "abc" + std::string("\x02\x00", 2) + "xy" +
                                 "def" + std::string("\x00\x00", 2) + "\x08\x07\x06\x05\x04\x03\x02\x01" + std::string("\x00\x00", 2);

std::string written(const std::vector<rt::GenericRecord>& records) {
    std::ostringstream out;
    rt::NativeWriter writer(out, dtd().desc());
    for (const rt::GenericRecord& r : records) writer.write(r);
    writer.close();
    return out.str();
}

std::string refusal(const rt::GenericRecord& r) {
    try {
        written({r});
    } catch (const rt::TraceError& e) {
        return e.what();
    }
    return "written";
}

std::string read_error(const std::string& bytes) {
    std::istringstream in(bytes);
    rt::NativeReader reader(in, dtd().desc());
    rt::GenericRecord r;
    try {
        while (reader.next(r)) {
        }
    } catch (const rt::TraceError& e) {
        return e.what();
    }
    return "read";
}

}  // namespace

TEST_CASE("native form: little-endian numbers, a 2-byte code, floats, bytes and a group, byte for byte") {
    const rt::GenericRecord q{q_slot, {}};
    CHECK(written({sample(1.5), q}) == sample_bytes);
    std::istringstream in(sample_bytes);
    rt::NativeReader reader(in, dtd().desc());
    rt::GenericRecord got;
    REQUIRE(reader.next(got));
    CHECK(got.slot == r_slot);
    REQUIRE(got.values.size() == 11);
    CHECK(static_cast<std::int64_t>(got.values[0].integer) == -2);
    CHECK(got.values[1].real == 1.5);
    CHECK(got.values[2].real == -0.25);
    CHECK(got.values[6].bytes.size() == 2);
    CHECK(std::string(reinterpret_cast<const char*>(got.values[7].bytes.data()), 3) == "def");
    CHECK(got.values[10].integer == 0x0102030405060708u);
    REQUIRE(reader.next(got));
    CHECK(got.slot == q_slot);
    CHECK_FALSE(reader.next(got));
    CHECK(reader.offset() == sample_bytes.size());
}

TEST_CASE("native form: a signalling NaN in a 4-byte float comes back bit for bit") {
    std::string bytes = sample_bytes;
    bytes.replace(4, 4, std::string("\x01\x00\x80\x7f", 4));  // 0x7f800001
    std::istringstream in(bytes);
    rt::NativeReader reader(in, dtd().desc());
    rt::GenericRecord r;
    REQUIRE(reader.next(r));  // its bytes values view the reader's buffer until the next call
    CHECK(r.values[1].real != r.values[1].real);
    CHECK(written({r, {q_slot, {}}}) == bytes);
}

TEST_CASE("native form: the writer refuses what the file cannot hold, and writes nothing of it") {
    CHECK(refusal(sample(0.1)) == "field 'f' of record 'r' holds 0.100000, which its 4 bytes would round");
    rt::GenericRecord wide = sample(1.5);
    wide.values[0].integer = 40000;
    CHECK(refusal(wide) == "field 'a' of record 'r' holds 40000, more than its 2 bytes can");
    rt::GenericRecord fixed = sample(1.5);
    fixed.values[4] = bytes(5, xy);
    CHECK(refusal(fixed) == "field 's' of record 'r' has 2 bytes, but its width is 3");
    rt::GenericRecord counted = sample(1.5);
    counted.values[5].integer = 3;
    CHECK(refusal(counted) == "field 't' of record 'r' has 2 bytes, but its length says 3");
    rt::GenericRecord group = sample(1.5);
    group.values[3].integer = 3;
    CHECK(refusal(group) == "field 'n' of record 'r' counts 3 elements, but the record has 2");
    std::ostringstream out;
    rt::NativeWriter writer(out, dtd().desc());
    CHECK_THROWS_AS(writer.write(wide), rt::TraceError);
    writer.write({q_slot, {}});
    writer.close();
    CHECK(out.str() == std::string("\x00\x00", 2));
    CHECK_THROWS_WITH_AS(writer.write({0, {integer(1, 0), bytes(2, empty)}}),
                         "byte 2, record 1: a comment record, which the native form of 'test' cannot hold", rt::TraceError);
}

TEST_CASE("native form: a cut file and an unknown code are errors at their byte") {
    CHECK(read_error(sample_bytes.substr(0, 20)) == "byte 20, record 0: the file ends inside record 0");
    CHECK(read_error(std::string("\x00", 1)) == "byte 1, record 0: the file ends inside a record's type code");
    CHECK(read_error(std::string("\x00\x00\x99\x99", 4)) == "byte 2, record 1: no record has the type code 39321");
}

TEST_CASE("native form: groups of groups, and a huge count of elements that read nothing") {
    const lower::LoweredDtd nested = lower::lower(test::schema_of(R"(tag.width = 1;
native { order = little; code = 1; }
n.width = 8;
m.width = 1;
x.width = 1;
r : (tag, n, m, n*(m*x)) { tag.value = 4; }
)"));
    const auto round_trip = [&](const std::string& bytes) {
        std::istringstream in(bytes);
        rt::NativeReader reader(in, nested.desc());
        std::ostringstream out;
        rt::NativeWriter writer(out, nested.desc());
        rt::GenericRecord r;
        while (reader.next(r)) writer.write(r);
        writer.close();
        return out.str();
    };
    // Two elements of one x each, read and written back.
    const std::string two = std::string("\x04\x02\x00\x00\x00\x00\x00\x00\x00\x01\x07\x08", 12);
    CHECK(round_trip(two) == two);
    // 2^64 - 1 elements of m = 0 x's: every element is empty, read at once.
    const std::string empty = std::string("\x04\xff\xff\xff\xff\xff\xff\xff\xff\x00", 10);
    CHECK(round_trip(empty) == empty);
}
