// Native binary forms (docs/dtd-language.md, section 16) on a DTD that uses
// what PTF's does not: little-endian numbers, a 2-byte type code set with
// tag.code, signed and float fields, fixed and counted bytes, a group. The
// runtime's generic NativeReader and NativeWriter, byte for byte.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>

#include <metatf/forms/native.hpp>

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
v : (tag, ver) { tag.value = 6; ver.width = 2; ver.value = 3; }
)";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

constexpr std::uint32_t r_slot = 3, q_slot = 4, v_slot = 5;

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
    CHECK(read_error(std::string("\x00\x00\x99\x99", 4)) == "byte 2, record 1: no record has the type code 39321 (bytes 99 99)");
}

TEST_CASE("native form: a value the DTD fixes is written and read, and another is refused by both") {
    const std::string version = std::string("\x06\x00\x03\x00", 4);
    CHECK(written({{v_slot, {integer(1, 3)}}}) == version);
    CHECK(read_error(version) == "read");
    CHECK(refusal({v_slot, {integer(1, 4)}}) == "field 'ver' of record 'v' is 4; the DTD fixes it at 3");
    CHECK(read_error(std::string("\x06\x00\x04\x00", 4)) == "byte 4, record 0: field 'ver' of record 'v' is 4; the DTD fixes it at 3");
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

// ---- records without a type code ------------------------------------------------------

namespace {

// A big-endian file of one record type, aligned, with a record the form leaves out.
const char* const uncoded_dtd_text = R"(tag.width = 1;
native { order = big; code = 0; align = natural; }
a.width = 4;
len.width = 2;
b.type = bytes;
b.width = len.value;
r : (tag, a, len, b) { tag.value = 4; }
other : (tag, a) { tag.value = 5; tag.code = none; }
)";

const lower::LoweredDtd& uncoded_dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(uncoded_dtd_text));
    return lowered;
}

}  // namespace

TEST_CASE("native form without type codes: every record is the form's one record, byte for byte") {
    const rt::DtdDesc& desc = uncoded_dtd().desc();
    const std::string ab = "ab";
    std::ostringstream out;
    rt::NativeWriter writer(out, desc);
    writer.write({3, {integer(1, 0x01020304), integer(2, 2), bytes(3, ab)}});
    writer.write({3, {integer(1, 7), integer(2, 0), bytes(3, empty)}});
    writer.close();
    // No code: a at 0, len at 4, b's bytes, padding to the record's alignment of 4.
    const std::string file = std::string("\x01\x02\x03\x04\x00\x02" "ab", 8) + std::string("\x00\x00\x00\x07\x00\x00\x00\x00", 8);
    CHECK(out.str() == file);
    std::istringstream in(file);
    rt::NativeReader reader(in, desc);
    rt::GenericRecord got;
    REQUIRE(reader.next(got));
    CHECK(got.slot == 3);
    CHECK(got.values[0].integer == 0x01020304);
    CHECK(got.values[2].bytes.size() == 2);
    REQUIRE(reader.next(got));
    CHECK(got.values[0].integer == 7);
    CHECK_FALSE(reader.next(got));
    std::istringstream cut(file.substr(0, 15));
    rt::NativeReader cut_reader(cut, desc);
    REQUIRE(cut_reader.next(got));
    CHECK_THROWS_WITH_AS(cut_reader.next(got), "byte 15, record 1: the file ends inside record 1", rt::TraceError);
    CHECK_THROWS_WITH_AS(rt::NativeWriter(out, desc).write({4, {integer(1, 1)}}),
                         "record 'other' has no type code in the native form of 'test' ('tag.code = none')", rt::TraceError);
}

// ---- a file header with variable fields, and the byte order from the magic --------

namespace {

// A capture file's shape: magic, a header record, then records without a code.
const char* const headed_dtd_text = R"(tag.width = 1;
native le { order = little; code = 0; magic = 0xa1b2c3d4; header = head; }
native be { order = big; code = 0; magic = 0xa1b2c3d4; header = head; }
version.width = 2;
snaplen.width = 4;
len.width = 2;
data.type = bytes;
data.width = len.value;
head : (tag, version, snaplen) { tag.value = 4; }
packet : (tag, len, data) { tag.value = 5; }
)";

const lower::LoweredDtd& headed_dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(headed_dtd_text));
    return lowered;
}

constexpr std::uint32_t head_slot = 3, packet_slot = 4;

const std::string big_file = std::string("\xa1\xb2\xc3\xd4\x00\x02\x00\x00\xff\xff\x00\x03" "abc\x00\x00", 17);

std::string headed_written(const char* form, const std::vector<rt::GenericRecord>& records) {
    std::ostringstream out;
    rt::NativeWriter writer(out, headed_dtd().desc(), rt::native_form(headed_dtd().desc(), form));
    for (const rt::GenericRecord& r : records) writer.write(r);
    writer.close();
    return out.str();
}

}  // namespace

TEST_CASE("native form with a header record: the magic picks the byte order, the header's fields are free, byte for byte") {
    const std::string abc = "abc";
    const std::vector<rt::GenericRecord> records = {{head_slot, {integer(1, 2), integer(2, 65535)}},
                                                    {packet_slot, {integer(1, 3), bytes(2, abc)}},
                                                    {packet_slot, {integer(1, 0), bytes(2, empty)}}};
    CHECK(headed_written("be", records) == big_file);
    const std::string little = std::string("\xd4\xc3\xb2\xa1\x02\x00\xff\xff\x00\x00\x03\x00" "abc\x00\x00", 17);
    CHECK(headed_written("le", records) == little);
    for (const std::string& file : {big_file, little}) {
        std::istringstream in(file);
        rt::NativeReader reader(in, headed_dtd().desc());
        CHECK(std::string(reader.form().name) == (file == little ? "le" : "be"));
        rt::GenericRecord got;
        REQUIRE(reader.next(got));
        CHECK(got.slot == head_slot);
        CHECK(got.values[0].integer == 2);
        CHECK(got.values[1].integer == 65535);
        REQUIRE(reader.next(got));
        CHECK(got.slot == packet_slot);
        CHECK(std::string(reinterpret_cast<const char*>(got.values[1].bytes.data()), got.values[1].bytes.size()) == "abc");
        REQUIRE(reader.next(got));
        CHECK(got.values[0].integer == 0);
        CHECK_FALSE(reader.next(got));
    }
}

TEST_CASE("native form with a header record: errors say what was expected, at their byte") {
    const auto read_error = [](const std::string& bytes) -> std::string {
        try {
            std::istringstream in(bytes);
            rt::NativeReader reader(in, headed_dtd().desc());
            rt::GenericRecord r;
            while (reader.next(r)) {
            }
        } catch (const rt::TraceError& e) {
            return e.what();
        }
        return "read";
    };
    CHECK(read_error(std::string("\x0a\x0d\x0d\x0a\x00\x00", 6)) ==
          "the file starts with the magic bytes of none of the native forms of 'test' (le d4 c3 b2 a1, be a1 b2 c3 d4); it starts 0a 0d 0d 0a");
    CHECK(read_error("\xa1\xb2") == "the file starts with the magic bytes of none of the native forms of 'test' (le d4 c3 b2 a1, be a1 b2 c3 d4); it starts a1 b2");
    CHECK(read_error(big_file.substr(0, 4)) == "byte 4, record 0: the file ends inside record 0");
    CHECK(read_error(big_file.substr(0, 8)) == "byte 8, record 0: the file ends inside record 0");
    CHECK(read_error(big_file.substr(0, 10)) == "read");
    CHECK(read_error(big_file.substr(0, 13)) == "byte 13, record 1: the file ends inside record 1");
    CHECK(read_error(big_file) == "read");
    const rt::GenericRecord head{head_slot, {integer(1, 2), integer(2, 0)}};
    const rt::GenericRecord packet{packet_slot, {integer(1, 0), bytes(2, empty)}};
    const auto refusal = [](const std::vector<rt::GenericRecord>& records) -> std::string {
        try {
            headed_written("be", records);
        } catch (const rt::TraceError& e) {
            return e.what();
        }
        return "written";
    };
    CHECK(refusal({packet}) == "byte 4, record 0: the native form 'be' of 'test' starts with a 'head' record, its header, and this record is a 'packet'");
    CHECK(refusal({head, packet, head}) == "byte 12, record 2: a second 'head' record, which the native form 'be' of 'test' holds once, as the file's header");
    CHECK(refusal({}) == "byte 4, record 0: no 'head' record to write as the header of the native form 'be' of 'test'");
    CHECK(refusal({head}) == "written");
}

// ---- C structs: the layout gcc gives the same structs, byte for byte ----------------

namespace {

const char* const c_dtd_text = R"(tag.width = 1;
native c { order = little; code = 2; align = natural; sizeof(name8) = 8; }
native c4 { order = little; code = 2; align = 4; sizeof(name8) = 8; }
odd.width = 3;
small : (tag, y) { tag.value = 6; tag.code = 3; }
unheld : (tag, odd) { tag.value = 7; tag.code = none; }
b.width = 1;
big.width = 8;
n.width = 1;
x.width = 4;
y.width = 1;
z.width = 2;
len.width = 1;
s.type = bytes;
s.width = len.value;
s.ctype = "name8";
mid : (tag, b, big, n, n*(x, y), z) { tag.value = 4; tag.code = 1; }
tail : (tag, b, big, len, s, n, n*(x)) { tag.value = 5; tag.code = 2; }
)";

const lower::LoweredDtd& c_dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(c_dtd_text));
    return lowered;
}

constexpr std::uint32_t mid_slot = 3, tail_slot = 4, small_slot = 5, unheld_slot = 6;

struct Element {
    std::uint32_t x;
    std::uint8_t y;
};
// `mid` with two elements, as gcc lays it out (naturally, and with 8-byte types capped at 4).
struct Mid {
    std::uint16_t code;
    std::uint8_t b;
    std::uint64_t big;
    std::uint8_t n;
    Element e[2];
    std::uint16_t z;
};
#pragma pack(push, 4)
struct Mid4 {
    std::uint16_t code;
    std::uint8_t b;
    std::uint64_t big;
    std::uint8_t n;
    Element e[2];
    std::uint16_t z;
};
#pragma pack(pop)
// `tail`, whose list is C's `x[1]` ("actually [n]").
struct Tail {
    std::uint16_t code;
    std::uint8_t b;
    std::uint64_t big;
    char s[8];
    std::uint8_t n;
    std::uint32_t x[1];
};

// The bytes of a zeroed struct filled in as `fill` says.
template <typename Struct, typename Fill>
std::string struct_bytes(std::size_t size, Fill fill) {
    std::string bytes(std::max(size, sizeof(Struct)), '\0');
    Struct s;
    std::memset(&s, 0, sizeof s);
    fill(s, bytes);
    std::memcpy(bytes.data(), &s, sizeof s);
    bytes.resize(size);
    return bytes;
}

std::string c_written(const rt::NativeFormDesc& form, const rt::GenericRecord& r) {
    std::ostringstream out;
    rt::NativeWriter writer(out, c_dtd().desc(), form);
    writer.write(r);
    writer.close();
    return out.str();
}

rt::GenericRecord mid_record() {
    return {mid_slot,
            {integer(1, 7), integer(2, 0x1122334455667788), integer(3, 2), integer(4, 0xa0a0a0a0), integer(5, 1), integer(4, 0xb0b0b0b0),
             integer(5, 2), integer(6, 0x3344)}};
}

template <typename Struct>
std::string mid_struct() {
    return struct_bytes<Struct>(sizeof(Struct), [](Struct& m, std::string&) {
        m.code = 1;
        m.b = 7;
        m.big = 0x1122334455667788;
        m.n = 2;
        // Member by member: assigning a whole Element would copy a temporary's padding too.
        m.e[0].x = 0xa0a0a0a0;
        m.e[0].y = 1;
        m.e[1].x = 0xb0b0b0b0;
        m.e[1].y = 2;
        m.z = 0x3344;
    });
}

const std::string word = "word";

rt::GenericRecord tail_record(std::uint64_t n) {
    rt::GenericRecord r{tail_slot, {integer(1, 9), integer(2, 5), integer(3, word.size()), bytes(4, word), integer(5, n)}};
    for (std::uint64_t k = 0; k < n; ++k) r.values.push_back(integer(6, 100 + k));
    return r;
}

std::string tail_struct(std::uint32_t n) {
    const std::size_t size = sizeof(Tail) + n * sizeof(std::uint32_t) - sizeof(std::uint32_t);
    return struct_bytes<Tail>(size, [n](Tail& t, std::string& bytes) {
        t.code = 2;
        t.b = 9;
        t.big = 5;
        std::memcpy(t.s, "word", 4);
        t.n = static_cast<std::uint8_t>(n);
        for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t v = 100 + k;
            std::memcpy(bytes.data() + offsetof(Tail, x) + 4 * k, &v, 4);
        }
        if (n > 0) t.x[0] = 100;
    });
}

// Reads one record of `form` from `bytes`, which it must take whole.
rt::GenericRecord c_read(const rt::NativeFormDesc& form, const std::string& bytes) {
    std::istringstream in(bytes);
    rt::NativeReader reader(in, c_dtd().desc(), form);
    rt::GenericRecord r;
    REQUIRE(reader.next(r));
    for (rt::GenericValue& v : r.values) v.bytes = {};  // they view the reader's buffer
    CHECK(reader.offset() == bytes.size());
    rt::GenericRecord after;
    CHECK_FALSE(reader.next(after));
    return r;
}

}  // namespace

TEST_CASE("native form, C structs: a group in the middle is laid out as gcc lays out the struct, naturally and packed at 4") {
    static_assert(std::endian::native == std::endian::little, "the structs are compared as this machine stores them");
    const rt::NativeFormDesc& c = rt::native_form(c_dtd().desc(), "c");
    const rt::NativeFormDesc& c4 = rt::native_form(c_dtd().desc(), "c4");
    CHECK(c_written(c, mid_record()) == mid_struct<Mid>());
    CHECK(c_written(c4, mid_record()) == mid_struct<Mid4>());
    CHECK(sizeof(Mid) == 40);
    CHECK(sizeof(Mid4) == 36);
    const rt::GenericRecord back = c_read(c, mid_struct<Mid>());
    REQUIRE(back.values.size() == 8);
    CHECK(back.values[1].integer == 0x1122334455667788u);
    CHECK(back.values[5].integer == 0xb0b0b0b0u);
    CHECK(back.values[7].integer == 0x3344u);
}

TEST_CASE("native form, C structs: a trailing x[1] list takes sizeof(struct) plus one element per further item, and a char array finds its length") {
    const rt::NativeFormDesc& c = rt::native_form(c_dtd().desc(), "c");
    for (std::uint32_t n : {0u, 1u, 2u, 3u}) {
        CAPTURE(n);
        CHECK(c_written(c, tail_record(n)) == tail_struct(n));
        const rt::GenericRecord back = c_read(c, tail_struct(n));
        REQUIRE(back.values.size() == 5 + n);
        CHECK(back.values[2].integer == 4);  // the length of "word", found from its NUL
        if (n) CHECK(back.values.back().integer == 100 + n - 1);
    }
    CHECK(tail_struct(0).size() == 28);  // sizeof(Tail) is 32: one element shorter
    // Padding is skipped whatever it holds: the record reads the same, and writes back zeroed.
    std::string dirty = tail_struct(1);
    dirty[2 + 1] = '\x55';  // between b and big
    dirty[16 + 6] = 'Q';    // after the NUL of "word"
    CHECK(c_read(c, dirty).values.size() == 6);
    CHECK(c_written(c, tail_record(1)) == tail_struct(1));
}

TEST_CASE("native form, C structs: the type code counts in a record's alignment; a record no form holds is refused") {
    struct Small {
        std::uint16_t code;
        std::uint8_t y;
    };
    const rt::NativeFormDesc& c = rt::native_form(c_dtd().desc(), "c");
    const rt::GenericRecord small{small_slot, {integer(1, 9)}};
    const std::string bytes = struct_bytes<Small>(sizeof(Small), [](Small& s, std::string&) {
        s.code = 3;
        s.y = 9;
    });
    CHECK(bytes.size() == 4);
    CHECK(c_written(c, small) == bytes);
    CHECK(c_read(c, bytes).values[0].integer == 9);
    CHECK_THROWS_WITH_AS(c_written(c, {unheld_slot, {integer(1, 1)}}),
                         "record 'unheld' has no type code in the native form 'c' of 'test' ('tag.code = none')", rt::TraceError);
}

TEST_CASE("native form, C structs: a reader without a form finds none when no form has magic bytes") {
    std::istringstream in(mid_struct<Mid>());
    CHECK_THROWS_WITH_AS(rt::NativeReader(in, c_dtd().desc()),
                         "the file starts with the magic bytes of none of the native forms of 'test' (c, c4)", rt::TraceError);
    CHECK_THROWS_WITH_AS(rt::native_form(c_dtd().desc()), "the DTD 'test' describes several native binary forms; name one of c, c4", rt::TraceError);
}
