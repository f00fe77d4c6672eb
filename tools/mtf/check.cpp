// mtf check: reads a whole trace with every check the runtime makes.
#include <set>

#include "common.hpp"

namespace mtf {

namespace {

std::string count(std::uint64_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "check", {{"--native", false}, {"--form", true}}, {"TRACE"});
    const std::string& path = o.positional[0];
    return on_trace(path, [&] {
        const auto opened = Trace::open(path, o);
        Trace& trace = *opened;
        warn_of_dtd_name("check", trace);
        std::uint64_t records = 0;
        for_each_record("check", trace, [&](const ReadRecord&) { ++records; });
        std::set<std::uint8_t> sections;
        for (const rt::Chunk& c : trace.header().chunks) sections.insert(c.section);
        print(trace.name() + ": ok: " + count(records, "record") + ", " + count(sections.size(), "section") +
              " with data, " + count(trace.file_size(), "byte") + "\n");
        return 0;
    });
}

}  // namespace

namespace commands {

extern const Command check;  // external linkage, for main's table
const Command check{"check", "read a whole trace, checking everything",
                    R"(Usage: mtf check [OPTIONS] TRACE

Reads every record of TRACE ('-' for standard input) with all the checks of
the Meta-TF runtime: the header, section index and chunks, every tag, every
field against its chunk, every metadata change, every repeat count and the
record count. On success prints one line,
  TRACE: ok: N records, K sections with data, B bytes
and exits 0. On the first problem prints
  mtf: check: TRACE: byte OFFSET, section S, record R: WHAT
(just TRACE: WHAT when the problem has no place in the trace, such as a file
that cannot be read or is no trace at all) and exits 1.

Warns on stderr when the header names a DTD that mtf ships (dtds/) but the
trace has another layout.

Options:
  --dtd FILE  read the trace with FILE instead of its embedded DTD; the two
              must lay out records alike (the trace's fingerprint)
  --native    TRACE is the format's native binary file, read with the DTD
              --dtd gives (docs/dtd-language.md, section 16); it is made
              into a temporary trace first
  --form NAME with --native: the DTD's native form to read (by default the
              only one, or the one whose magic bytes start the file)
  -h, --help  show this help

Exit status: 0 for a good trace, 1 for an unreadable or malformed one, 2 for
a command-line mistake.
)",
                    run};

}  // namespace commands

}  // namespace mtf
