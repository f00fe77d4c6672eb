// Rules a DTD states about values (docs/dtd-language.md, section 17): what the
// resolver makes of them, and what rt::RuleChecker reports record by record.
#include <string>
#include <vector>

#include <metatf/analysis/rules.hpp>

#include "ir/json.hpp"
#include "lower/lower.hpp"
#include "support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

const char* const dtd_text = R"(tag.width = 1;
len.width = 1;
len.minimum = 1;
len.maximum = 0xf;
delta.width = 2;
delta.type = signed;
delta.minimum = -3;
delta.maximum = 3;
kind.width = 1;
kind.enum = { open = 1, close = 2, read = 9 };
mode.width = 1;
mode.flags = { read = 1, write = 2, sync = 0xc };
time.width = 4;
time.order = nondecreasing global;
seq.width = 2;
seq.order = increasing;
n.width = 1;
a : (tag, len, delta, kind, mode, time, n, n*seq) { tag.value = 4; }
b : (tag, time, seq) { tag.value = 5; }
)";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

constexpr std::uint32_t a_slot = 3, b_slot = 4;

rt::GenericValue integer(std::uint32_t field, std::uint64_t v) { return {field, v, 0, {}}; }

rt::GenericRecord a(std::uint64_t len, std::int64_t delta, std::uint64_t kind, std::uint64_t mode, std::uint64_t time,
                    std::vector<std::uint64_t> seqs = {}) {
    rt::GenericRecord r{a_slot, {integer(1, len), integer(2, static_cast<std::uint64_t>(delta)), integer(3, kind), integer(4, mode),
                                 integer(5, time), integer(6, seqs.size())}};
    for (std::uint64_t s : seqs) r.values.push_back(integer(7, s));
    return r;
}
rt::GenericRecord b(std::uint64_t time, std::uint64_t seq) { return {b_slot, {integer(1, time), integer(2, seq)}}; }

// Each violation as "FIELD MESSAGE".
std::vector<std::string> check(rt::RuleChecker& c, const rt::GenericRecord& r, std::uint64_t index) {
    std::vector<rt::RuleViolation> found;
    c.check(r, index, found);
    std::vector<std::string> out;
    for (const auto& v : found) out.push_back(std::string(dtd().desc().records[r.slot].fields[v.field].path) + " " + v.message);
    return out;
}

using Lines = std::vector<std::string>;

}  // namespace

TEST_CASE("rules: the IR lists each field's rules as the DTD states them") {
    const auto ir = ir::to_json(test::schema_of(dtd_text));
    const auto& fields = ir["records"][3]["fields"];
    CHECK(fields[1]["rules"].dump() == R"({"minimum":1,"maximum":15})");
    CHECK(fields[2]["rules"].dump() == R"({"minimum":-3,"maximum":3})");
    CHECK(fields[3]["rules"].dump() == R"({"enum":{"open":1,"close":2,"read":9}})");
    CHECK(fields[4]["rules"].dump() == R"({"flags":{"read":1,"write":2,"sync":12}})");
    CHECK(fields[5]["rules"].dump() == R"({"order":"nondecreasing","orderAcross":"time"})");
    CHECK(fields[0].count("rules") == 0);
}

TEST_CASE("rules: values within every rule pass") {
    rt::RuleChecker c(dtd().desc());
    CHECK(c.any());
    CHECK(check(c, a(1, -3, 1, 0, 10, {1, 2}), 0).empty());
    CHECK(check(c, a(15, 3, 9, 1 | 2 | 0xc, 10, {3}), 1).empty());
    CHECK(check(c, b(10, 0), 2).empty());  // b's seq is a sequence of its own
}

TEST_CASE("rules: ranges compare as the field's type") {
    rt::RuleChecker c(dtd().desc());
    CHECK(check(c, a(0, -4, 1, 0, 0), 0) == Lines{"len is 0, below the minimum 1", "delta is -4, below the minimum -3"});
    CHECK(check(c, a(16, 4, 1, 0, 0), 1) == Lines{"len is 16, above the maximum 15", "delta is 4, above the maximum 3"});
}

TEST_CASE("rules: an enumeration takes its named values only; flags any union of whole flags") {
    rt::RuleChecker c(dtd().desc());
    CHECK(check(c, a(1, 0, 3, 0, 0), 0) == Lines{"kind is 3, which its enumeration does not name"});
    CHECK(check(c, a(1, 0, 1, 0x10, 0), 1) == Lines{"mode is 0x10, whose bits 0x10 are no flag it names"});
    CHECK(check(c, a(1, 0, 1, 0x5, 0), 2) == Lines{"mode is 0x5, whose bits 0x4 are no flag it names"});  // half of sync
}

TEST_CASE("rules: orders compare with the last value, in one record type or across those that say global") {
    rt::RuleChecker c(dtd().desc());
    CHECK(check(c, a(1, 0, 1, 0, 100, {5, 5}), 7) == Lines{"seq is 5, not above 5 of record 7 (order: increasing)"});
    CHECK(check(c, b(99, 1), 8) == Lines{"time is 99, below 100 of record 7 (order: nondecreasing across record types)"});
    CHECK(check(c, b(99, 1), 9) == Lines{"seq is 1, not above 1 of record 8 (order: increasing)"});
    CHECK(check(c, a(1, 0, 1, 0, 99, {4}), 10) == Lines{"seq is 4, not above 5 of record 7 (order: increasing)"});
}

TEST_CASE("rules: names as dump shows them") {
    const rt::RecordDesc& r = dtd().desc().records[a_slot];
    CHECK(rt::value_name(*r.fields[3].rules, 9) == "read");
    CHECK(rt::value_name(*r.fields[3].rules, 4).empty());
    CHECK(rt::value_name(*r.fields[4].rules, 0) == "0");
    CHECK(rt::value_name(*r.fields[4].rules, 0xf) == "read|write|sync");
    CHECK(rt::value_name(*r.fields[4].rules, 0x22) == "write|0x20");
    CHECK(rt::value_name(*r.fields[1].rules, 3).empty());  // a range names nothing
}

TEST_CASE("rules: names read back as dump writes them") {
    const rt::RecordDesc& r = dtd().desc().records[a_slot];
    CHECK(rt::named_value(*r.fields[3].rules, "close") == 2u);
    CHECK(!rt::named_value(*r.fields[3].rules, "2"));
    CHECK(rt::named_value(*r.fields[4].rules, "sync|read") == 0xdu);
    CHECK(rt::named_value(*r.fields[4].rules, "write|0x20") == 0x22u);
    CHECK(rt::named_value(*r.fields[4].rules, "0") == 0u);
    CHECK(!rt::named_value(*r.fields[4].rules, "write|0x2"));  // hex is for bits no flag holds
    CHECK(!rt::named_value(*r.fields[4].rules, "write|"));
    CHECK(!rt::named_value(*r.fields[1].rules, "1"));
}

// `bits`: a 16-bit value with parts of 3, 5 and 4 bits from bit 0, and 4 bits in none.
const lower::LoweredDtd& parts_dtd() {
    static const lower::LoweredDtd lowered =
        lower::lower(test::schema_of("tag.width = 1; m.width = 2; m.bits = { mode = 3, level = 5, zone = 4 }; r : (tag, m) { tag.value = 4; }"));
    return lowered;
}

TEST_CASE("rules: parts ('bits') are named in order, each from the bit after the one before") {
    const auto ir = ir::to_json(test::schema_of("tag.width = 1; m.width = 2; m.bits = { mode = 3, level = 5, zone = 4 }; r : (tag, m) { tag.value = 4; }"));
    CHECK(ir["records"][3]["fields"][1]["rules"].dump() == R"({"bits":{"mode":3,"level":5,"zone":4}})");
    const rt::FieldRules& m = *parts_dtd().desc().records[3].fields[1].rules;
    CHECK(m.naming == rt::Naming::parts);
    CHECK(m.names[1].value == 0xf8u);
    CHECK(rt::value_name(m, 0x398d) == "mode:5,level:17,zone:9,0x3000");
    CHECK(rt::value_name(m, 0) == "mode:0,level:0,zone:0");
    CHECK(rt::named_value(m, "mode:5,level:17,zone:9,0x3000") == 0x398du);
    CHECK(rt::named_value(m, "mode:5,level:17,zone:9") == 0x98du);
    CHECK(!rt::named_value(m, "mode:5,level:17"));         // every part, in order
    CHECK(!rt::named_value(m, "level:17,mode:5,zone:9"));
    CHECK(!rt::named_value(m, "mode:8,level:17,zone:9"));  // too wide for its 3 bits
    CHECK(!rt::named_value(m, "mode:5,level:17,zone:9,0x100"));  // zone's bit
    rt::RuleChecker c(parts_dtd().desc());
    std::vector<rt::RuleViolation> found;
    c.check({3, {integer(1, 0x98d)}}, 0, found);
    CHECK(found.empty());
    c.check({3, {integer(1, 0x398d)}}, 1, found);
    REQUIRE(found.size() == 1);
    CHECK(found[0].message == "is 0x398d, whose bits 0x3000 are in none of its parts");
}

TEST_CASE("rules: a big-endian compiler's allocation from the most significant bit, and back") {
    const rt::FieldRules& m = *parts_dtd().desc().records[3].fields[1].rules;
    // GCC on x86-64 with scalar_storage_order("big-endian") lays out
    // {mode = 5, level = 17, zone = 9, 4 spare bits = 3} as the 16-bit 0xb193.
    CHECK(rt::parts_to_high(m, 0x398d, 2) == 0xb193u);
    CHECK(rt::parts_from_high(m, 0xb193, 2) == 0x398du);
    // In a 4-byte unit the parts start at bit 31, and the 20 bits above them sit below.
    CHECK(rt::parts_to_high(m, 0x398d, 4) == 0xb1900003u);
    for (std::uint64_t v = 0; v < 0x10000; v += 7) {
        CHECK(rt::parts_from_high(m, rt::parts_to_high(m, v, 2), 2) == v);
    }
    CHECK(rt::get_part(0x398d, 3, 5) == 17u);
    CHECK(rt::with_part(0x398d, 3, 5, 2, "level") == 0x3915u);
    CHECK_THROWS_WITH_AS(rt::with_part(0, 3, 5, 32, "level"), "part 'level' is 5 bits wide; 32 does not fit", rt::TraceError);
    CHECK(rt::with_part(0, 0, 64, ~std::uint64_t(0), "all") == ~std::uint64_t(0));
}

TEST_CASE("rules: a dense field's values run from its start to the largest with no gap, checked after the last record") {
    const lower::LoweredDtd lowered = lower::lower(test::schema_of("tag.width = 1; u.width = 1; u.dense = 1; r : (tag, u) { tag.value = 4; }"));
    const auto checked = [&](std::vector<std::uint64_t> values) {
        rt::RuleChecker c(lowered.desc());
        std::vector<rt::RuleViolation> found;
        for (std::size_t i = 0; i < values.size(); ++i) c.check({3, {integer(1, values[i])}}, i, found);
        c.finish(found);
        Lines out;
        for (const auto& v : found) out.push_back(std::to_string(v.slot) + " " + v.message);
        return out;
    };
    CHECK(checked({}).empty());
    CHECK(checked({3, 1, 2, 2, 1}).empty());
    CHECK(checked({1, 4}) == Lines{"3 takes values from 1 to 4, but not 2, 3 (dense from 1)"});
    CHECK(checked({0, 1}) == Lines{"0 is 0, below 1, where its dense range starts"});
    CHECK(checked({1, 100}) == Lines{"3 takes values from 1 to 100, but not 2, 3, 4, 5, 6 (98 missing) (dense from 1)"});
    CHECK(checked({1, 255, 255}) == Lines{"3 takes values from 1 to 255, but not 2, 3, 4, 5, 6 (253 missing) (dense from 1)"});
}

TEST_CASE("rules: a DTD without rules has none to check, and rules leave the fingerprint alone") {
    const std::string plain = "tag.width = 1; x.width = 1; r : (tag, x) { tag.value = 4; }";
    const lower::LoweredDtd without = lower::lower(test::schema_of(plain));
    const lower::LoweredDtd with = lower::lower(test::schema_of(plain + " x.maximum = 3; x.order = increasing;"));
    CHECK_FALSE(rt::RuleChecker(without.desc()).any());
    CHECK(rt::RuleChecker(with.desc()).any());
    CHECK(rt::fingerprint(without.desc()) == rt::fingerprint(with.desc()));
}
