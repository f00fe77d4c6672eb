// The example lines of the three ASCII formats' sources, read as
// docs/formats.md says: SPC's section 2.3, PTF's Figure 3 (as extracted,
// damage included) and the Laplace page's three lines.
#include <string>
#include <vector>

#include <laplace.hpp>
#include <ptf.hpp>
#include <spc.hpp>

#include "text_support.hpp"

using metatf::test::as_string;
using metatf::test::parse;
using metatf::test::read_error;
using metatf::test::write_text;

namespace {

std::string join_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
}

// ---- SPC ---------------------------------------------------------------------

// SPC 1.0.1, section 2.3, in order; the 9th line has a blank for its decimal point.
const std::vector<std::string> spc_example = {
    "0,20941264,8192,W,0.551706,Alpha/NT",
    "0,20939840,8192,W,0.554041",
    "0,20939808,8192,W,0.556202",
    "1,3436288,15872,W,1.250720,0x123,5.99,test",
    "1,3435888,512,W,1.609859",
    "1,3435889,512,W,1.634761",
    "0,7695360,4096,R,2.346628",
    "1,10274472,4096,R,2.436645",
    "2,30862016,4096,W,2 448003",
    "2,30845544,4096,W,2.449733",
    "1,10356592,4096,W,2.449733",
};
constexpr std::size_t spc_malformed = 8;

std::vector<std::string> spc_valid_lines() {
    std::vector<std::string> out = spc_example;
    out.erase(out.begin() + spc_malformed);
    return out;
}

struct SpcLine {
    std::uint64_t asu, lba, size, opcode, timestamp;
    std::vector<std::string> optional;
};

// ---- PTF ---------------------------------------------------------------------

// Figure 3 as extracted from the report: a stray bullet line, a tab inside
// the begin line, an annotation after every event, three damaged events and
// "Trace end" broken into two lines.
const std::vector<std::string> ptf_figure3 = {
    "\t\xE2\x80\xA2\t",
    "Trace\tbegin\t",
    "fo 41\t0 2 1 0 11 11 BinTreeNode\tFormat object for the BinTreeNode object",
    "ts\t\tDisallow garbage collection until after Te event",
    "co 41\t42\tCreate object with OId 42 whose format OId is 41",
    "dw 41\t42 1\tWrite data value to position 1 in object 42 of format 41",
    "sr 41\t42\tSet object 42 of format 41 to be the super root",
    "co 41\t43\tCreate object with OId 43 whose format OId is 41",
    "dw 41\t43 1\tWrite data value to position 1 in object 43 of format 41",
    "ew 41\t42 0 43\tWrite edge 0 from object 42 of format 41 to object 43",
    "co 41\t44\tCreate object with OId 44 whose format OId is 41",
    "dw 41\t44 1\tWrite data value to position 1 in object 44 of format 41",
    "ew 41\t42 1 44\tWrite edge 1 from object 42 of format 41 to object 44",
    "co 41\t45\tCreate object with OId 45 whose format OId is 41",
    "dw 41\t45 1\tWrite data value to position 1 in object 45 of format 41",
    "ew 41\t43 0 45\tWrite edge 0 from object 43 of format 41 to object 45",
    "co 41\t46\tCreate object with OId 46 whose format OId is 41",
    "dw 41\t46 1\tWrite data value to position 1 in object 46 of format 41",
    "ew 41\t43 1 46\tWrite edge 1 from object 43 of format 41 to object 14",
    "co 41\t47\tCreate object with OId 47 whose format OId is 41",
    "dw 41\t47 1\tWrite data value to position 1 in object 47 of format 41",
    "ew 41\t44 0 47\tWrite edge 0 from object 44 of format 41 to 47",
    "co 41\t48\tCreate object with OId 48 whose format OId is 41",
    "dw 41\t48 1\tWrite data value to position 1 in object 48 of format 41",
    "ew 41\t44 1 48\tWrite edge 1 from object 44 of format 41 to object 48",
    "te\t\tAllow garbage collection to occur",
    "dr 41\t42 1\tRead data value from position 1 in object 42 of format 41",
    "er 41\t42 0\tRead value of edge 0 from object 42 of format 41",
    "er 41\t42 1\tRead value of edge 1 from object 42 of format 41",
    "dr 41\t43 1\tRead data value from position 1 in object 43 of format 41",
    "er 41\t43 0\tRead value of edge 0 from object 43 of format 41",
    "er 41\t43 1\tRead value of edge 1 from object 43 of format 41",
    "dr 41\t44 1\tRead data value from position 1 in object 44 of format 41",
    "er 41\t44 0\tRead value of edge 0 from object 44 of format 41",
    "er 41\t44 1\tRead value of edge 1 from object 44 of format 41",
    "\t45 1\tRead data value from position 1 in object 45 of format 41",
    "dr 41\t46 1\tRead data value from position 1 in object 46 of format 41",
    "dr 41\t47 1\tRead data value from position 1 in object 47 of format 41",
    "dr 41\t\tRead data value from position 1 in object 48 of format 41",
    "Trace\t\t",
    ", -\t\t",
};
// Indices into ptf_figure3.
constexpr std::size_t ptf_first_event = 2, ptf_damaged_mnemonic = 35, ptf_damaged_dr = 38, ptf_broken_end = 39;

// An event line without the annotation after its last tab.
std::string without_annotation(const std::string& line) { return line.substr(0, line.rfind('\t')); }

// Figure 3's events in canonical form: the damaged ones left out.
const std::string ptf_canonical =
    "Trace begin\n"
    "fo 41 0 2 1 0 11 11 BinTreeNode\n"
    "ts\n"
    "co 41 42\n" "dw 41 42 1\n" "sr 41 42\n"
    "co 41 43\n" "dw 41 43 1\n" "ew 41 42 0 43\n"
    "co 41 44\n" "dw 41 44 1\n" "ew 41 42 1 44\n"
    "co 41 45\n" "dw 41 45 1\n" "ew 41 43 0 45\n"
    "co 41 46\n" "dw 41 46 1\n" "ew 41 43 1 46\n"
    "co 41 47\n" "dw 41 47 1\n" "ew 41 44 0 47\n"
    "co 41 48\n" "dw 41 48 1\n" "ew 41 44 1 48\n"
    "te\n"
    "dr 41 42 1\n" "er 41 42 0\n" "er 41 42 1\n"
    "dr 41 43 1\n" "er 41 43 0\n" "er 41 43 1\n"
    "dr 41 44 1\n" "er 41 44 0\n" "er 41 44 1\n"
    "dr 41 46 1\n" "dr 41 47 1\n"
    "Trace end\n";

// A PTF text of the given event lines between a canonical begin and end line.
std::string ptf_trace(const std::vector<std::string>& events) {
    return "Trace begin\n" + join_lines(events) + "Trace end\n";
}

// ---- Laplace -----------------------------------------------------------------

const std::string laplace_example =
    "r 123456789abcdef0 4 9a8b7 8888ffff3e456a21\n"
    "F 123456789abcdef7 100 77\n"
    "M 123456789abcdefe 100 1a2b3c4d 9000 8efa5567 35 5 1029384756afbecd foobar.so\n";

}  // namespace

TEST_CASE("SPC section 2.3: each well-formed example line reads field by field as the specification says") {
    const std::vector<SpcLine> want = {
        {0, 20941264, 8192, 1, 551706000, {"Alpha/NT"}},
        {0, 20939840, 8192, 1, 554041000, {}},
        {0, 20939808, 8192, 1, 556202000, {}},
        {1, 3436288, 15872, 1, 1250720000, {"0x123", "5.99", "test"}},
        {1, 3435888, 512, 1, 1609859000, {}},
        {1, 3435889, 512, 1, 1634761000, {}},
        {0, 7695360, 4096, 0, 2346628000, {}},
        {1, 10274472, 4096, 0, 2436645000, {}},
        {2, 30845544, 4096, 1, 2449733000, {}},
        {1, 10356592, 4096, 1, 2449733000, {}},
    };
    const auto lines = spc_valid_lines();
    REQUIRE(lines.size() == want.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        CAPTURE(lines[i]);
        const auto parsed = parse<spc::TextReader>(lines[i] + "\n");
        REQUIRE(parsed.records.size() == 1);
        const auto& r = parsed.at<spc::Spc>(0);
        CHECK(r.asu == want[i].asu);
        CHECK(r.lba == want[i].lba);
        CHECK(r.size == want[i].size);
        CHECK(r.opcode == want[i].opcode);
        CHECK(r.timestamp == want[i].timestamp);
        REQUIRE(r.optionalCount == want[i].optional.size());
        REQUIRE(r.optionalCount_items.size() == want[i].optional.size());
        for (std::size_t k = 0; k < want[i].optional.size(); ++k) {
            CHECK(as_string(r.optionalCount_items[k].optional_optionalText) == want[i].optional[k]);
            CHECK(r.optionalCount_items[k].optional_optionalLength == want[i].optional[k].size());
        }
    }
}

TEST_CASE("SPC section 2.3: the line with a blank for its decimal point is rejected") {
    CHECK(read_error<spc::TextReader>(join_lines(spc_example)) ==
          "line 9, column 20: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 9 digits");

    const auto parsed = parse<spc::TextReader>(join_lines(spc_example), {.skip_bad = true});
    CHECK(parsed.records.size() == 10);
    CHECK(parsed.skipped == 1);
    CHECK(parsed.first_skipped ==
          "line 9, column 20: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 9 digits");
}

TEST_CASE("SPC section 2.3: the well-formed lines are canonical: text, records, text is byte-identical") {
    const std::string canonical = join_lines(spc_valid_lines());
    CHECK(write_text<spc::TextWriter>(parse<spc::TextReader>(canonical)) == canonical);
}

// The rules spc.dtd states, checked on generated structs as a reader that asks does.
std::vector<std::string> spc_rule_breaks(const std::string& text) {
    metatf::rt::RuleChecker checker(spc::dtd);
    std::vector<metatf::rt::RuleViolation> found;
    const auto parsed = parse<spc::TextReader>(text);
    for (std::size_t i = 0; i < parsed.records.size(); ++i) metatf::rt::check_rules(checker, parsed.at<spc::Spc>(i), i, found);
    std::vector<std::string> out;
    for (const auto& v : found) out.push_back(std::string(spc::dtd.records[static_cast<std::uint32_t>(spc::Spc::type)].fields[v.field].path) + " " + v.message);
    return out;
}

TEST_CASE("SPC section 2.2.5: timestamps never decrease; a generated reader checks it when asked") {
    CHECK(spc_rule_breaks(join_lines(spc_valid_lines())).empty());  // the example's equal timestamps are allowed
    CHECK(spc_rule_breaks("0,1,512,R,2.5\n0,2,512,R,2.5\n0,3,512,W,2.499999\n0,4,512,W,3.0\n") ==
          std::vector<std::string>{"timestamp is 2.499999, below 2.500000 of record 1 (order: nondecreasing)"});
}

TEST_CASE("PTF Figure 3 as extracted: the stray line before the begin line is rejected") {
    CHECK(read_error<ptf::TextReader>(join_lines(ptf_figure3)) == "line 1, column 1: expected the begin line 'Trace begin'");
}

TEST_CASE("PTF Figure 3: an event that still carries its annotation is rejected at the annotation") {
    CHECK(read_error<ptf::TextReader>(ptf_trace({ptf_figure3[ptf_first_event]})) ==
          "line 2, column 32: unexpected text after the last field of record 'fo': '\tFormat object for t...'");
    CHECK(read_error<ptf::TextReader>(ptf_trace({ptf_figure3[ptf_first_event + 1]})) ==
          "line 2, column 3: unexpected text after the last field of record 'ts': '\t\tDisallow garbage c...'");
    CHECK(read_error<ptf::TextReader>(ptf_trace({"ew 41\t42 0 43\tWrite edge 0 from object 42 of format 41 to object 43"})) ==
          "line 2, column 14: unexpected text after the last field of record 'ew': '\tWrite edge 0 from o...'");

    for (std::size_t i = ptf_first_event; i < ptf_damaged_mnemonic; ++i) {
        const std::string& line = ptf_figure3[i];
        CAPTURE(line);
        const std::string column = std::to_string(without_annotation(line).find_last_not_of('\t') + 2);
        const std::string mnemonic = line.substr(0, line.find_first_of(" \t"));
        CHECK(read_error<ptf::TextReader>(ptf_trace({line})).starts_with(
            "line 2, column " + column + ": unexpected text after the last field of record '" + mnemonic + "': '\t"));
    }
}

TEST_CASE("PTF Figure 3: the events without their annotations read as the report says") {
    std::vector<std::string> events;
    for (std::size_t i = ptf_first_event; i < ptf_broken_end; ++i) {
        if (i != ptf_damaged_mnemonic && i != ptf_damaged_dr) events.push_back(without_annotation(ptf_figure3[i]));
    }
    const auto parsed = parse<ptf::TextReader>(ptf_trace(events));
    REQUIRE(parsed.records.size() == 35);

    const auto& fo = parsed.at<ptf::Fo>(0);
    CHECK(fo.formatId == 41);
    CHECK(fo.superFormatId == 0);
    CHECK(fo.numberOfPointers == 2);
    CHECK(fo.numberOfDataMembers == 1);
    REQUIRE(fo.numberOfDataMembers_items.size() == 1);
    CHECK(fo.numberOfDataMembers_items[0].dataMemberFormatId == 11);
    CHECK(fo.numberOfArrayMembers == 0);
    CHECK(fo.numberOfArrayMembers_items.empty());
    CHECK(fo.lengthOfClassName == 11);
    CHECK(as_string(fo.className) == "BinTreeNode");

    CHECK(std::holds_alternative<ptf::Ts>(parsed.records[1]));
    const auto& co = parsed.at<ptf::Co>(2);
    CHECK(co.formatId == 41);
    CHECK(co.oid == 42);
    const auto& dw = parsed.at<ptf::Dw>(3);
    CHECK(dw.formatId == 41);
    CHECK(dw.oid == 42);
    CHECK(dw.offset == 1);
    const auto& sr = parsed.at<ptf::Sr>(4);
    CHECK(sr.formatId == 41);
    CHECK(sr.oid == 42);
    const auto& ew = parsed.at<ptf::Ew>(7);  // ew 41 42 0 43: edge 0 of object 42 now points to 43
    CHECK(ew.formatId == 41);
    CHECK(ew.fromOid == 42);
    CHECK(ew.edge == 0);
    CHECK(ew.toOid == 43);
    CHECK(std::holds_alternative<ptf::Te>(parsed.records[23]));
    const auto& dr = parsed.at<ptf::Dr>(24);
    CHECK(dr.formatId == 41);
    CHECK(dr.oid == 42);
    CHECK(dr.offset == 1);
    const auto& er = parsed.at<ptf::Er>(26);  // er 41 42 1
    CHECK(er.formatId == 41);
    CHECK(er.fromOid == 42);
    CHECK(er.edge == 1);

    // Every event, and the tabs of the figure's layout normalized to one blank.
    CHECK(write_text<ptf::TextWriter>(parsed) == ptf_canonical);
}

TEST_CASE("PTF Figure 3: each damaged line is rejected with its message") {
    // `\t45 1` lost its mnemonic and format.
    CHECK(read_error<ptf::TextReader>(ptf_trace({without_annotation(ptf_figure3[ptf_damaged_mnemonic])})) ==
          "line 2, column 1: expected a record mnemonic at the start of the line");
    // `dr 41` lacks its OId and offset; as extracted, the annotation stands where the OId belongs.
    CHECK(read_error<ptf::TextReader>(ptf_trace({without_annotation(ptf_figure3[ptf_damaged_dr])})) ==
          "line 2, column 6: the line ends before field 'oid' of record 'dr'");
    CHECK(read_error<ptf::TextReader>(ptf_trace({ptf_figure3[ptf_damaged_dr]})) ==
          "line 2, column 8: expected a decimal number for field 'oid' of record 'dr', not 'Read'");
    // `Trace end`, broken in two: neither piece is a record, and the end line is missing.
    CHECK(read_error<ptf::TextReader>(ptf_trace({ptf_figure3[ptf_broken_end]})) == "line 2, column 1: unknown record 'Trace'");
    CHECK(read_error<ptf::TextReader>(ptf_trace({ptf_figure3[ptf_broken_end + 1]})) == "line 2, column 1: unknown record ','");
}

TEST_CASE("PTF Figure 3: skip_bad skips and counts the damaged lines, but not the missing end line") {
    std::vector<std::string> figure{"Trace begin"};
    for (std::size_t i = ptf_first_event; i < ptf_figure3.size(); ++i) figure.push_back(without_annotation(ptf_figure3[i]));

    CHECK_THROWS_WITH_AS(parse<ptf::TextReader>(join_lines(figure), {.skip_bad = true}),
                         "line 40, column 5: the text ends without the end line 'Trace end'", metatf::rt::TextError);

    figure.push_back("Trace end");
    const auto parsed = parse<ptf::TextReader>(join_lines(figure), {.skip_bad = true});
    CHECK(parsed.records.size() == 35);
    CHECK(parsed.skipped == 4);
    CHECK(parsed.first_skipped == "line 35, column 1: expected a record mnemonic at the start of the line");
}

TEST_CASE("PTF: the canonical form of Figure 3: text, records, text is byte-identical") {
    CHECK(write_text<ptf::TextWriter>(parse<ptf::TextReader>(ptf_canonical)) == ptf_canonical);
}

TEST_CASE("Laplace: the page's three example lines read as docs/formats.md says") {
    const auto parsed = parse<laplace::TextReader>(laplace_example);
    REQUIRE(parsed.records.size() == 3);

    const auto& r = parsed.at<laplace::UserRead>(0);
    CHECK(r.timestamp == 0x123456789abcdef0u);
    CHECK(r.length == 4);
    CHECK(r.virtualPage == 0x9a8b7);
    CHECK(r.canonicalPage == 0x8888ffff3e456a21u);

    const auto& f = parsed.at<laplace::KernelEventF>(1);
    CHECK(f.timestamp == 0x123456789abcdef7u);
    CHECK(f.arg1 == 0x100);
    CHECK(f.arg2 == 0x77);

    const auto& m = parsed.at<laplace::KernelEventM>(2);
    CHECK(m.timestamp == 0x123456789abcdefeu);
    CHECK(m.arg1 == 0x100);
    CHECK(m.arg2 == 0x1a2b3c4d);
    CHECK(m.arg3 == 0x9000);
    CHECK(m.arg4 == 0x8efa5567);
    CHECK(m.arg5 == 0x35);
    CHECK(m.arg6 == 0x5);
    CHECK(m.arg7 == 0x1029384756afbecdu);
    CHECK(m.fileNameLength == 9);
    CHECK(as_string(m.fileName) == "foobar.so");
}

TEST_CASE("Laplace: the example lines are canonical: text, records, text is byte-identical") {
    CHECK(write_text<laplace::TextWriter>(parse<laplace::TextReader>(laplace_example)) == laplace_example);
}
