// The reading and writing rules of text forms (docs/formats.md, the text-form
// spec): lenient input normalized to canonical output, lines that are not
// records rejected with their position, and values the writer refuses.
#include <sstream>
#include <string>

#include <laplace.hpp>
#include <ptf.hpp>
#include <spc.hpp>

#include "text_support.hpp"

namespace rt = metatf::rt;
using metatf::test::parse;
using metatf::test::read_error;
using metatf::test::write_error;
using metatf::test::write_text;

namespace {

template <typename TextReader, typename TextWriter>
std::string normalized(const std::string& text) {
    return write_text<TextWriter>(parse<TextReader>(text));
}

std::string spc_normalized(const std::string& text) { return normalized<spc::TextReader, spc::TextWriter>(text); }
std::string ptf_normalized(const std::string& text) { return normalized<ptf::TextReader, ptf::TextWriter>(text); }
std::string laplace_normalized(const std::string& text) {
    return normalized<laplace::TextReader, laplace::TextWriter>(text);
}

}  // namespace

// ---- normalization ------------------------------------------------------------------

TEST_CASE("SPC input is normalized: opcode case, blanks after commas, fraction digits, CRLF") {
    CHECK(spc_normalized("0,20941264,8192,w,0.551706\n") == "0,20941264,8192,W,0.551706\n");
    CHECK(spc_normalized("0,7695360,4096,r,2.346628\n") == "0,7695360,4096,R,2.346628\n");
    CHECK(spc_normalized("1, 3436288,\t15872,  W, 1.250720\n") == "1,3436288,15872,W,1.250720\n");
    CHECK(spc_normalized("1,3436288,15872,W,1.25072\n") == "1,3436288,15872,W,1.250720\n");
    CHECK(spc_normalized("1,3436288,15872,W,0.5\n") == "1,3436288,15872,W,0.500000\n");
    // Up to nanoseconds, a time keeps the fraction digits it has beyond the sixth; zeros after them go.
    CHECK(spc_normalized("1,3436288,15872,W,0.5517061\n") == "1,3436288,15872,W,0.5517061\n");
    CHECK(spc_normalized("1,3436288,15872,W,0.551706123\n") == "1,3436288,15872,W,0.551706123\n");
    CHECK(spc_normalized("1,3436288,15872,W,0.551706100\n") == "1,3436288,15872,W,0.5517061\n");
    CHECK(spc_normalized("0,20941264,8192,W,0.551706,Alpha/NT\r\n0,20939840,8192,W,0.554041\r\n") ==
          "0,20941264,8192,W,0.551706,Alpha/NT\n0,20939840,8192,W,0.554041\n");
    // Optional fields are kept byte for byte, blanks included.
    CHECK(spc_normalized("1,3436288,15872,W,1.250720,0x123, 5.99 ,\ttest\n") ==
          "1,3436288,15872,W,1.250720,0x123, 5.99 ,\ttest\n");
}

TEST_CASE("SPC: the largest 64-bit values read and write unchanged") {
    const std::string line = "18446744073709551615,18446744073709551615,0,R,18446744073.709551615\n";
    CHECK(spc_normalized(line) == line);
}

TEST_CASE("PTF input is normalized: tabs and runs of blanks between fields become one blank") {
    CHECK(ptf_normalized("Trace begin\nco\t41  42\new 41\t\t42 0   43 \t\nfo 41 0 2 1 0 11 11\tBinTreeNode\r\nTrace end\r\n") ==
          "Trace begin\nco 41 42\new 41 42 0 43\nfo 41 0 2 1 0 11 11 BinTreeNode\nTrace end\n");
    // A class name is exactly its length in bytes after one blank: blanks inside and at either end included.
    CHECK(ptf_normalized("Trace begin\nfo 50 41 0 0 0 9 Bin  Tree\nTrace end\n") ==
          "Trace begin\nfo 50 41 0 0 0 9 Bin  Tree\nTrace end\n");
    CHECK(ptf_normalized("Trace begin\nfo 50 41 0 0 0 6  Tree \nTrace end\n") ==
          "Trace begin\nfo 50 41 0 0 0 6  Tree \nTrace end\n");
    // An empty class name: the line ends with its length (a blank after it is read too).
    CHECK(ptf_normalized("Trace begin\nfo 80 0 0 0 0 0\nfo 81 0 0 0 0 0 \nTrace end\n") ==
          "Trace begin\nfo 80 0 0 0 0 0\nfo 81 0 0 0 0 0\nTrace end\n");
    CHECK(ptf_normalized("Trace begin\nadw 31 60 -1 0  4\nTrace end\n") == "Trace begin\nadw 31 60 -1 0 4\nTrace end\n");
}

TEST_CASE("Laplace input is normalized: upper-case hex, leading zeros; a file name is kept byte for byte") {
    CHECK(laplace_normalized("r 123456789ABCDEF0 04 09A8B7 8888FFFF3E456A21\n") ==
          "r 123456789abcdef0 4 9a8b7 8888ffff3e456a21\n");
    // The name is the rest of the line after one blank: blanks at either end are its own.
    CHECK(laplace_normalized("M 1 2 3 4 5 6 7 8   foo  bar.so\n") == "M 1 2 3 4 5 6 7 8   foo  bar.so\n");
    CHECK(laplace_normalized("M 1 2 3 4 5 6 7 8 lib.so  \n") == "M 1 2 3 4 5 6 7 8 lib.so  \n");
    CHECK(laplace_normalized("M 1 2 3 4 5 6 7 8\n") == "M 1 2 3 4 5 6 7 8\n");  // no name
}

// ---- lines that are not records ------------------------------------------------------

TEST_CASE("text errors name the line and column") {
    CHECK(read_error<spc::TextReader>("0,1,2,W,0.5\n\n0,1,2,W,0.5\n") == "line 2, column 1: empty line");
    // Blank lines that end the text are not records, and no error (the runtime hands them out as comments).
    CHECK(read_error<spc::TextReader>("0,1,2,W,0.5\n\n\r\n") == "");
    CHECK(read_error<ptf::TextReader>("Trace begin\nTrace end\n \n\n") == "");
    CHECK(read_error<ptf::TextReader>("Trace begin\nTrace end\n\nx\n") == "line 4, column 1: text after the end line 'Trace end'");
    CHECK(read_error<ptf::TextReader>("Trace begin\nxx 41 42\nTrace end\n") == "line 2, column 1: unknown record 'xx'");
    CHECK(read_error<laplace::TextReader>("x 1 2 3 4\n") == "line 1, column 1: unknown record 'x'");

    // A missing field.
    CHECK(read_error<spc::TextReader>("0,1,2,W\n") == "line 1, column 8: the line ends before field 'timestamp' of record 'spc'");
    CHECK(read_error<ptf::TextReader>("Trace begin\new 41 42 0\nTrace end\n") ==
          "line 2, column 11: the line ends before field 'toOid' of record 'ew'");
    CHECK(read_error<laplace::TextReader>("M 1 2 3 4 5 6 7\n") ==
          "line 1, column 16: the line ends before field 'arg7' of record 'kernelEventM'");
    CHECK(read_error<ptf::TextReader>("Trace begin\nfo 50 41 0 0 0 9 Bin\nTrace end\n") ==
          "line 2, column 18: field 'className' of record 'fo' should have 9 bytes, but the line has only 3 left");

    // Text after the last field.
    CHECK(read_error<laplace::TextReader>("r 1 2 3 4 5\n") ==
          "line 1, column 10: unexpected text after the last field of record 'userRead': ' 5'");
    CHECK(read_error<ptf::TextReader>("Trace begin\ngr 41\nTrace end\n") ==
          "line 2, column 3: unexpected text after the last field of record 'gr': ' 41'");

    // Numbers.
    CHECK(read_error<spc::TextReader>("0,18446744073709551616,2,W,0.5\n") ==
          "line 1, column 3: field 'lba' of record 'spc' does not fit in 64 bits");
    CHECK(read_error<laplace::TextReader>("r 10000000000000000 4 9a8b7 0\n") ==
          "line 1, column 3: field 'timestamp' of record 'userRead' does not fit in 64 bits");
    CHECK(read_error<spc::TextReader>("0,1,2,W,18446744073709.551616\n") ==
          "line 1, column 9: field 'timestamp' of record 'spc' does not fit in 64 bits");
    CHECK(read_error<spc::TextReader>("0,1,2,W,0.5517061234\n") ==
          "line 1, column 20: field 'timestamp' of record 'spc' has more than 9 fraction digits; they would be lost");
    CHECK(read_error<spc::TextReader>("0,1,2,W,1\n") ==
          "line 1, column 10: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 9 digits");
    CHECK(read_error<spc::TextReader>("0,-1,2,W,0.5\n") ==
          "line 1, column 3: field 'lba' of record 'spc' is unsigned and cannot be negative");
    CHECK(read_error<spc::TextReader>("0,1x,2,W,0.5\n") == "line 1, column 4: unexpected 'x' in field 'lba' of record 'spc'");
    CHECK(read_error<ptf::TextReader>("Trace begin\nadr 31 60 -32769x 0 4\nTrace end\n") ==
          "line 2, column 17: unexpected 'x' in field 'offset' of record 'adr'");
    CHECK(read_error<laplace::TextReader>("r 12g4 4 9a8b7 0\n") ==
          "line 1, column 5: unexpected 'g' in field 'timestamp' of record 'userRead'");

    // The opcode letter.
    CHECK(read_error<spc::TextReader>("0,1,2,X,0.5\n") ==
          "line 1, column 7: expected one of the characters \"RW\" (either case) for field 'opcode' of record 'spc'");
    CHECK(read_error<spc::TextReader>("0,1,2,WR,0.5\n") == "line 1, column 8: unexpected 'R' in field 'opcode' of record 'spc'");
}

TEST_CASE("PTF: the begin and end lines are required, and nothing may follow the end line") {
    CHECK(read_error<ptf::TextReader>("co 41 42\nTrace end\n") == "line 1, column 1: expected the begin line 'Trace begin'");
    CHECK(read_error<ptf::TextReader>("") == "line 1, column 1: expected the begin line 'Trace begin'");
    // A missing end line is reported where the text ends: past the last byte of the last line.
    CHECK(read_error<ptf::TextReader>("Trace begin\nco 41 42\n") ==
          "line 2, column 9: the text ends without the end line 'Trace end'");
    CHECK(read_error<ptf::TextReader>("Trace begin\r\nco 41 42\r\n") ==
          "line 2, column 9: the text ends without the end line 'Trace end'");
    CHECK(read_error<ptf::TextReader>("Trace begin\nco 41 42") ==
          "line 2, column 9: the text ends without the end line 'Trace end'");
    CHECK(read_error<ptf::TextReader>("Trace begin") == "line 1, column 12: the text ends without the end line 'Trace end'");
    CHECK(read_error<ptf::TextReader>("Trace begin\nTrace end\nco 41 42\n") ==
          "line 3, column 1: text after the end line 'Trace end'");
    CHECK(read_error<ptf::TextReader>("Trace begin\nTrace end\n") == "");
}

TEST_CASE("a carriage return ends a line, alone or before a line feed") {
    // PTF's report ends lines with a carriage return alone; they are written back with "\n".
    CHECK(ptf_normalized("Trace begin\rco 41 42\rfo 41 0 0 0 0 3 a b\r\nTrace end\r") ==
          "Trace begin\nco 41 42\nfo 41 0 0 0 0 3 a b\nTrace end\n");
    CHECK(spc_normalized("0,1,2,W,0.5,a\r1,1,2,W,0.5\n") == "0,1,2,W,0.500000,a\n1,1,2,W,0.500000\n");
    // So a value cannot hold one: the rest is the next line.
    CHECK(read_error<spc::TextReader>("0,1,2,W,0.5,a\r\r\n1,1,2,W,0.5\n") == "line 2, column 1: empty line");
    CHECK(read_error<ptf::TextReader>("Trace begin\nfo 41 0 0 0 0 3 a\rb\nTrace end\n") ==
          "line 2, column 17: field 'className' of record 'fo' should have 3 bytes, but the line has only 1 left");
}

TEST_CASE("a line may not start with a blank: the mnemonic, or SPC's first field, starts the line") {
    CHECK(read_error<spc::TextReader>(" 0,1,2,W,0.5\n") ==
          "line 1, column 1: expected a decimal number for field 'asu' of record 'spc', not ' 0'");
    CHECK(read_error<spc::TextReader>("\t0,1,2,W,0.5\n") ==
          "line 1, column 1: expected a decimal number for field 'asu' of record 'spc', not '\t0'");
    CHECK(read_error<ptf::TextReader>("Trace begin\n co 41 42\nTrace end\n") ==
          "line 2, column 1: expected a record mnemonic at the start of the line");
    CHECK(read_error<laplace::TextReader>("\tr 1 2 3 4\n") == "line 1, column 1: expected a record mnemonic at the start of the line");
    // The begin and end lines are matched whole; with a blank separator, blanks at the end of any line are dropped.
    CHECK(read_error<ptf::TextReader>(" Trace begin\nTrace end\n") == "line 1, column 1: expected the begin line 'Trace begin'");
    CHECK(read_error<ptf::TextReader>("Trace begin\n Trace end\n") ==
          "line 2, column 1: expected a record mnemonic at the start of the line");
    CHECK(read_error<ptf::TextReader>("Trace begin \t\nco 41 42 \nTrace end\t\n") == "");
}

// ---- the line length limit --------------------------------------------------------------

namespace {

rt::TextReadOptions limit(std::size_t bytes, bool skip_bad = false) {
    rt::TextReadOptions o;
    o.max_line_length = bytes;
    o.skip_bad = skip_bad;
    return o;
}

std::string read_error(const std::string& text, rt::TextReadOptions options) {
    try {
        parse<spc::TextReader>(text, options);
    } catch (const rt::TextError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a line longer than the limit is an error at the column past the limit") {
    // 16 bytes: accepted, also with "\r\n", and at the end of the text.
    CHECK(read_error("0,1,2,W,0.5,abcd\n", limit(16)) == "");
    CHECK(read_error("0,1,2,W,0.5,abcd\r\n", limit(16)) == "");
    CHECK(read_error("0,1,2,W,0.5,abcd", limit(16)) == "");
    CHECK(read_error("0,1,2,W,0.5,abcd\r", limit(16)) == "");
    // 17 bytes; a '\r' ends a line, so it never counts.
    CHECK(read_error("0,1,2,W,0.5,abcd\n0,1,2,W,0.5,abcde\n", limit(16)) ==
          "line 2, column 17: the line is longer than 16 bytes, the limit for one line");
    CHECK(read_error("0,1,2,W,0.5,abcd\r0,1,2,W,0.5,abcd\n", limit(16)) == "");
    try {
        parse<ptf::TextReader>("Trace begin\nTrace end\n", limit(8));
        FAIL("no error");
    } catch (const rt::TextError& e) {
        CHECK(std::string(e.what()) == "line 1, column 9: the line is longer than 8 bytes, the limit for one line");
    }
}

TEST_CASE("the line limit is enforced while reading: nothing past it is read") {
    const std::size_t limit = rt::TextReadOptions{}.max_line_length;
    CHECK(limit == 1048576);
    std::istringstream in("0,1,2,W,0.5" + std::string(2 * limit, ','));
    rt::TextReader reader(in, spc::dtd);
    rt::GenericRecord record;
    CHECK_THROWS_WITH_AS(reader.next(record), "line 1, column 1048577: the line is longer than 1048576 bytes, the limit for one line",
                         rt::TextError);
    CHECK(reader.bytes_read() == limit + 1);
    CHECK(in.tellg() == std::streampos(limit + 1));
}

TEST_CASE("skip_bad skips a line longer than the limit and reads on after it") {
    const auto parsed = parse<spc::TextReader>("0,1,2,W,0.5\n0,1,2,W,0.5," + std::string(100, 'x') + "\n1,2,3,R,1.0\n", limit(32, true));
    CHECK(parsed.records.size() == 2);
    CHECK(parsed.skipped == 1);
    CHECK(parsed.first_skipped == "line 2, column 33: the line is longer than 32 bytes, the limit for one line");
    CHECK(parsed.at<spc::Spc>(1).timestamp == 1000000000);
}

TEST_CASE("PTF: a class name shorter or longer than its length is rejected") {
    CHECK(read_error<ptf::TextReader>("Trace begin\nfo 41 0 2 1 0 12 11 BinTreeNode\nTrace end\n") ==
          "line 2, column 21: field 'className' of record 'fo' should have 12 bytes, but the line has only 11 left");
    CHECK(read_error<ptf::TextReader>("Trace begin\nfo 41 0 2 1 0 10 11 BinTreeNode\nTrace end\n") ==
          "line 2, column 31: unexpected text after the last field of record 'fo': 'e'");
}

TEST_CASE("skip_bad skips and counts the lines that are not records and keeps the first message") {
    const auto parsed = parse<spc::TextReader>("0,1,2,W,0.5\n0,1,2,X,0.5\n\n1,2,3,R,1.0\n0,1\n", {.skip_bad = true});
    CHECK(parsed.records.size() == 2);
    CHECK(parsed.skipped == 3);
    CHECK(parsed.first_skipped ==
          "line 2, column 7: expected one of the characters \"RW\" (either case) for field 'opcode' of record 'spc'");
    CHECK(parsed.at<spc::Spc>(1).timestamp == 1000000000);
}

// ---- values the writer refuses --------------------------------------------------------

TEST_CASE("the writer refuses values that would not read back") {
    const std::string comma = "a,b";
    spc::Spc with_comma{};
    with_comma.optionalCount = 1;
    with_comma.optionalCount_items = {{comma.size(), rt::as_bytes(comma)}};
    CHECK(write_error<spc::TextWriter>(with_comma) ==
          "line 1: field 'optional.optionalText' of record 'spc' holds the separator ',': 'a,b'");

    spc::Spc bad_opcode{};
    bad_opcode.opcode = 2;
    CHECK(write_error<spc::TextWriter>(bad_opcode) ==
          "line 1: field 'opcode' of record 'spc' has value 2, which names none of the characters \"RW\"");

    const std::string broken = "foo\nbar.so";
    laplace::KernelEventM with_break{};
    with_break.fileNameLength = broken.size();
    with_break.fileName = rt::as_bytes(broken);
    CHECK(write_error<laplace::TextWriter>(with_break) == "line 1: field 'fileName' of record 'kernelEventM' holds a line break");

    const std::string blank = " Node";
    ptf::Fo leading_blank{};
    leading_blank.lengthOfClassName = blank.size();
    leading_blank.className = rt::as_bytes(blank);
    CHECK(write_error<ptf::TextWriter>(leading_blank).empty());  // its length says where it starts
}

TEST_CASE("the writer refuses a record type out of range or without a text form") {
    std::ostringstream out;
    rt::TextWriter writer(out, ptf::dtd);
    rt::GenericRecord record;
    record.slot = ptf::dtd.record_count;
    CHECK_THROWS_WITH_AS(writer.write(record), "line 2: record '?' has no text form in the DTD 'ptf'", rt::TextError);
    record.slot = static_cast<std::uint32_t>(ptf::RecordType::Comment);
    CHECK_THROWS_WITH_AS(writer.write(record), "line 3: record 'comment' has no text form in the DTD 'ptf'", rt::TextError);
    record.slot = static_cast<std::uint32_t>(ptf::RecordType::Co);
    rt::GenericValue format_only;  // co without its oid
    format_only.field = ptf::Co::formatId_field;
    format_only.integer = 41;
    record.values = {format_only};
    CHECK_THROWS_WITH_AS(writer.write(record), "line 4: a record's values do not follow its layout", rt::TextError);
    CHECK(out.str() == "Trace begin\n");
}

TEST_CASE("the writer refuses counts and lengths that disagree with what they count") {
    const std::string name = "BinTreeNode";
    ptf::Fo fo{};
    fo.numberOfDataMembers = 1;
    fo.numberOfDataMembers_items = {{11}};
    fo.lengthOfClassName = 12;
    fo.className = rt::as_bytes(name);
    CHECK(write_error<ptf::TextWriter>(fo) ==
          "line 2: field 'className' of record 'fo' has 11 bytes, but its length 'lengthOfClassName' says 12");

    fo.lengthOfClassName = name.size();
    fo.numberOfDataMembers = 2;
    CHECK(write_error<ptf::TextWriter>(fo) ==
          "line 2: field 'numberOfDataMembers' of record 'fo' counts 2 elements, but the record has 1");

    spc::Spc spc{};
    spc.optionalCount = 2;
    spc.optionalCount_items = {{name.size(), rt::as_bytes(name)}};
    CHECK(write_error<spc::TextWriter>(spc) ==
          "line 1: field 'optionalCount' of record 'spc' counts 2 elements, but the record has 1");
    spc.optionalCount = 1;
    spc.optionalCount_items = {{3, rt::as_bytes(name)}};
    CHECK(write_error<spc::TextWriter>(spc) ==
          "line 1: field 'optional.optionalText' of record 'spc' has 11 bytes, but its length 'optional.optionalLength' says 3");
}
