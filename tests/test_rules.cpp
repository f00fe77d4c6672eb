// Rules a DTD states about values (docs/dtd-language.md, section 17): what the
// resolver makes of them, and what rt::RuleChecker reports record by record.
#include <string>
#include <vector>

#include <metatf/rules.hpp>

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
