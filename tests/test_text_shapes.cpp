// Text forms of lines whose shape tells their record (docs/dtd-language.md,
// section 15, decisions 49-51): records tried in order when they share a
// mnemonic or have none, `text = nested` (strace's arguments: up to a text
// outside brackets and C strings) and `tab N` (strace's result column).
#include <string>

#include <metatf/forms/text.hpp>

#include "lower/lower.hpp"
#include "support.hpp"
#include "text_support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

// "12 05:48:55.543726 open("a)", 0) = 3", "12 ... brk(0)   = 0x1f", "12 ... exit(0) = ?",
// "12 ... +++ exited with 0 +++", and any other line after the head.
const char* const dtd_text = R"dtd(tag.width = 1;
text { separator = " "; mnemonicAfter = "time"; }
pid.width = 4; pid.text = decimal column 5 left;
time.width = 8; time.scale = 6; time.text = clock;
nl.width = 1; nl.text = omit; name.type = bytes; name.width = nl.value;
al.width = 2; al.text = omit; args.type = bytes; args.width = al.value; args.text = nested; args.before = "("; args.after = ")";
ret.type = signed; ret.width = 8; ret.before = " = "; ret.text = decimal tab 39;
address.width = 8; address.before = " = 0x"; address.text = hex tab 39;
status.width = 1; status.before = " exited with "; status.after = " +++";
rl.width = 2; rl.text = omit; rest.type = bytes; rest.width = rl.value; rest.text = line;
call : (tag, pid, time, nl, name, al, args, ret) { tag.value = 4; tag.mnemonic = ""; }
callAddress : (tag, pid, time, nl, name, al, args, address) { tag.value = 5; tag.mnemonic = ""; }
noReturn : (tag, pid, time, nl, name, al, args, rl, rest) { tag.value = 6; tag.mnemonic = ""; rest.before = " = ?"; rest.text = line tab 39; }
exited : (tag, pid, time, status) { tag.value = 7; tag.mnemonic = "+++"; }
other : (tag, pid, time, rl, rest) { tag.value = 8; tag.mnemonic = ""; }
)dtd";

const lower::LoweredDtd& dtd() {
    static const lower::LoweredDtd lowered = lower::lower(test::schema_of(dtd_text));
    return lowered;
}

std::string normalized(const std::string& text) { return test::normalized(dtd().desc(), text); }

// The records `text` reads as, by name.
std::vector<std::string> records(const std::string& text) {
    std::istringstream in(text);
    rt::TextReader reader(in, dtd().desc());
    rt::GenericRecord record;
    std::vector<std::string> names;
    while (reader.next(record)) names.push_back(dtd().desc().records[record.slot].name);
    return names;
}

// The bytes of value `i` of the first record `text` reads as.
std::string bytes_of(const std::string& text, std::size_t i) {
    std::istringstream in(text);
    rt::TextReader reader(in, dtd().desc());
    rt::GenericRecord record;
    REQUIRE(reader.next(record));
    const auto& b = record.values.at(i).bytes;
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// `call` padded with blanks to column 39, then `result` (" = 0"), as strace writes a line.
std::string at39(const std::string& call, const std::string& result) {
    return call + std::string(call.size() < 39 ? 39 - call.size() : 0, ' ') + result + "\n";
}

}  // namespace

TEST_CASE("shapes: the first record whose fields read the whole line, longest mnemonic first, then in the DTD's order") {
    const std::string lines = at39("12    05:48:55.543726 close(3)", " = 0") + at39("12    05:48:55.543726 brk(NULL)", " = 0x55d0c3b0e000") +
                              at39("12    05:48:55.543726 exit_group(0)", " = ?") +
        "12    05:48:55.543726 +++ exited with 0 +++\n"
        "12    05:48:55.543726 +++ killed by SIGKILL +++\n"
        "12    05:48:55.543726 close(3)  = 0\n";
    CHECK(records(lines) == std::vector<std::string>{"call", "callAddress", "noReturn", "exited", "other", "other"});
    CHECK(normalized(lines) == lines);
}

TEST_CASE("shapes: when no record reads a line, the error is the one that read furthest") {
    const lower::LoweredDtd lowered = lower::lower(test::schema_of(R"dtd(tag.width = 1;
text { separator = " "; }
a.width = 1; b.width = 1; b.before = " = ";
one : (tag, a) { tag.value = 4; tag.mnemonic = "x"; }
two : (tag, a, b) { tag.value = 5; tag.mnemonic = "x"; }
)dtd"));
    CHECK(test::normalized(lowered.desc(), "x 1\nx 1 = 2\n") == "x 1\nx 1 = 2\n");
    CHECK(test::text_error(lowered.desc(), "x 1 = z\n") == "line 1, column 7: expected a decimal number for field 'b' of record 'two', not 'z'");
}

TEST_CASE("nested: the text after the value counts outside brackets and C strings, escapes included") {
    CHECK(bytes_of("12 05:48:55.543726 open(\"a)\\\"b)\", [1, (2)], {x=f(3)}) = 3\n", 5) == "\"a)\\\"b)\", [1, (2)], {x=f(3)}");
    CHECK(bytes_of(at39("12 05:48:55.543726 getpid()", " = 3"), 5) == "");
    CHECK(bytes_of(at39("12 05:48:55.543726 read(3, \"ab\"..., 9)", " = 9"), 5) == "3, \"ab\"..., 9");
    // A closing bracket with none open is a byte of the value.
    CHECK(bytes_of(at39("12 05:48:55.543726 f(a])", " = 1"), 5) == "a]");
}

TEST_CASE("nested: a value that never reaches its text, or a quote not closed, falls to the next shape") {
    CHECK(records("12 05:48:55.543726 wait4(-1,  <unfinished ...>\n") == std::vector<std::string>{"other"});
    CHECK(records("12 05:48:55.543726 write(1, \"a) = 1\n") == std::vector<std::string>{"other"});
    const lower::LoweredDtd lowered = lower::lower(test::schema_of(R"dtd(tag.width = 1;
text { separator = " "; }
al.width = 2; al.text = omit; args.type = bytes; args.width = al.value; args.text = nested; args.before = "("; args.after = ")";
call : (tag, al, args) { tag.value = 4; tag.mnemonic = "c"; }
)dtd"));
    CHECK(test::text_error(lowered.desc(), "c(\"a) x\n") == "line 1, column 3: the quote in field 'args' of record 'call' is not closed");
    CHECK(test::text_error(lowered.desc(), "c(f(a)\n") ==
          "line 1, column 3: expected ')' after field 'args' of record 'call', outside brackets and quotes");
}

TEST_CASE("tab: blanks pad the line to the column before the value's text, and a longer line goes on at once") {
    rt::GenericRecord r;
    while (std::string_view(dtd().desc().records[r.slot].name) != "call") ++r.slot;
    const std::string name = "close", args = "3";
    r.values = {{1, 12, 0, {}}, {2, 20935543726u, 0, {}}, {3, name.size(), 0, {}}, {4, 0, 0, rt::as_bytes(name)},
                {5, args.size(), 0, {}}, {6, 0, 0, rt::as_bytes(args)}, {7, 0, 0, {}}};
    const std::string line = test::written(dtd().desc(), r);
    CHECK(line == "12    05:48:55.543726 close(3)          = 0\n");
    CHECK(line.find('=') == 40);
    CHECK(normalized("12    05:48:55.543726 a_call_with_a_long_name(0) = 0\n") == "12    05:48:55.543726 a_call_with_a_long_name(0) = 0\n");
}

TEST_CASE("tab: a line padded otherwise is not read as that shape") {
    CHECK(records("12    05:48:55.543726 close(3) = 0\n") == std::vector<std::string>{"other"});
    CHECK(records("12    05:48:55.543726 close(3)" + std::string(12, ' ') + " = 0\n") == std::vector<std::string>{"other"});
}

TEST_CASE("line: after its own text a line keeps the blanks it starts with") {
    const std::string line = "12    05:48:55.543726 rt_sigsuspend([], 8) = ? ERESTARTNOHAND (To be restarted if no handler)\n";
    CHECK(records(line) == std::vector<std::string>{"noReturn"});
    CHECK(normalized(line) == line);
}

TEST_CASE("shapes: words an enum lists are numbers, and a second record of the same shape keeps the others (decision 43)") {
    const lower::LoweredDtd lowered = lower::lower(test::schema_of(R"dtd(tag.width = 1;
text { separator = ","; }
op.width = 1; op.enum = { Read = 0, Write = 1 }; op.text = enum;
wl.width = 1; wl.text = omit; word.type = bytes; word.width = wl.value;
n.width = 4;
known : (tag, op, n) { tag.value = 4; tag.mnemonic = ""; }
other : (tag, wl, word, n) { tag.value = 5; tag.mnemonic = ""; }
)dtd"));
    const std::string lines = "Read,5\nFlush,6\nWrite,7\n";
    CHECK(test::normalized(lowered.desc(), lines) == lines);
    std::istringstream in(lines);
    rt::TextReader reader(in, lowered.desc());
    rt::GenericRecord record;
    std::vector<std::string> names;
    while (reader.next(record)) names.push_back(lowered.desc().records[record.slot].name);
    CHECK(names == std::vector<std::string>{"known", "other", "known"});
}

TEST_CASE("shapes: a token the writer could not write back (an empty call name) is not read as that shape") {
    const std::string line = at39("12    05:48:55.543726 (-1, 0)", " = 0");
    CHECK(records(line) == std::vector<std::string>{"other"});
    CHECK(normalized(line) == line);
    const lower::LoweredDtd lowered = lower::lower(test::schema_of(R"dtd(tag.width = 1;
text { separator = " "; }
nl.width = 1; nl.text = omit; name.type = bytes; name.width = nl.value;
al.width = 2; al.text = omit; args.type = bytes; args.width = al.value; args.text = nested; args.before = "("; args.after = ")";
call : (tag, nl, name, al, args) { tag.value = 4; tag.mnemonic = "c"; }
)dtd"));
    CHECK(test::normalized(lowered.desc(), "c f(1)\n") == "c f(1)\n");
    CHECK(test::text_error(lowered.desc(), "c (1)\n") ==
          "line 1, column 3: field 'name' of record 'call' is empty or starts or ends with a blank, which a blank separator would lose");
}
