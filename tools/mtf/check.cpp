// mtf check: reads a whole trace with every check the runtime makes, and
// checks the rules its DTD states about values.
#include <iostream>
#include <set>

#include <metatf/analysis/rules.hpp>
#include <metatf/core/format.hpp>

#include "common.hpp"

namespace mtf {

namespace {

std::string count(std::uint64_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

constexpr std::uint64_t default_max_violations = 20;

std::uint64_t max_violations(const Options& o) {
    if (!o.has("--max-violations")) return default_max_violations;
    return decimal_option("--max-violations", o.get("--max-violations", ""), "a count");
}

// Checks each record against the DTD's rules, printing the first `shown` violations.
class Rules {
public:
    Rules(const Trace& trace, std::uint64_t shown) : dtd_(trace.read_dtd()), checker_(dtd_), name_(trace.name()), shown_(shown) {}

    void check(const ReadRecord& r) {
        found_.clear();
        checker_.check(r.record, r.index, found_);
        if (found_.empty()) return;
        ++records_;
        const rt::RecordDesc& desc = dtd_.records[r.record.slot];
        for (const rt::RuleViolation& v : found_) list("record " + std::to_string(r.index) + " (" + desc.name + ")", desc, v);
        if (report_.size() >= 1 << 16) flush();
    }
    // The rules about the whole trace, once every record is read.
    void finish() {
        found_.clear();
        checker_.finish(found_);
        for (const rt::RuleViolation& v : found_) {
            const rt::RecordDesc& desc = dtd_.records[v.slot];
            const std::string where = "record type " + rt::quote(desc.name);
            if (v.unchecked) {
                std::cerr << "mtf: check: " << name_ << ": warning: " << where << ", field " << rt::quote(desc.fields[v.field].path) << " "
                          << v.message << '\n';
            } else {
                list(where, desc, v);
            }
        }
        flush();
    }
    void flush() {
        print(report_);
        report_.clear();
    }
    bool any() const { return checker_.any(); }
    std::uint64_t violations() const { return violations_; }
    std::uint64_t records() const { return records_; }

private:
    // "TRACE: WHERE, field 'F' MESSAGE", while fewer than `shown` are listed; counts every one.
    void list(const std::string& where, const rt::RecordDesc& desc, const rt::RuleViolation& v) {
        if (violations_++ < shown_) report_ += name_ + ": " + where + ", field " + rt::quote(desc.fields[v.field].path) + " " + v.message + "\n";
    }

    const rt::DtdDesc& dtd_;
    rt::RuleChecker checker_;
    std::string name_;
    std::uint64_t shown_;
    std::vector<rt::RuleViolation> found_;
    std::string report_;
    std::uint64_t violations_ = 0, records_ = 0;
};

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "check", {{"--native", false}, {"--form", true}, {"--max-violations", true}}, {"TRACE"});
    const std::string& path = o.positional[0];
    const std::uint64_t shown = max_violations(o);
    return on_trace(path, [&] {
        const auto opened = Trace::open(path, o);
        Trace& trace = *opened;
        warn_of_dtd_name("check", trace);
        Rules rules(trace, shown);
        std::uint64_t records = 0;
        try {
            if (!rules.any()) {
                records = check_records("check", trace);  // no values to keep: faster
            } else {
                for_each_record("check", trace, [&](const ReadRecord& r) {
                    ++records;
                    rules.check(r);
                });
            }
        } catch (...) {
            rules.flush();  // the violations before a malformed record are reported too
            throw;
        }
        rules.finish();
        if (rules.violations()) {
            const std::uint64_t hidden = rules.violations() > shown ? rules.violations() - shown : 0;
            print(trace.name() + ": " + count(rules.violations(), "rule violation") +
                  (rules.records() ? " in " + count(rules.records(), "record") : std::string()) +
                  (hidden ? " (" + std::to_string(hidden) + " not shown; --max-violations shows more)" : "") + "\n");
            return 1;
        }
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
record count, and in container version 4 every byte against its checksum.
Then checks the rules the DTD states about values (ranges,
enumerations, flag sets and orders; docs/dtd-language.md, section 17).

On success prints one line,
  TRACE: ok: N records, K sections with data, B bytes
and exits 0. Each value that breaks a rule is a line on standard output,
  TRACE: record R (NAME), field 'F' is 16, above the maximum 15
(a rule about the whole trace, such as 'dense', names no record:
  TRACE: record type 'NAME', field 'F' takes values from 0 to 7, but not 2 ...)
up to --max-violations of them, then a count of them all,
  TRACE: V rule violations in M records
and the exit status is 1. On the first problem in the trace's bytes prints
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
  --max-violations N
              list at most N rule violations (default 20; 0 lists none,
              and the count still comes)
  -h, --help  show this help

Exit status: 0 for a good trace, 1 for an unreadable or malformed one or one
that breaks its DTD's rules, 2 for a command-line mistake.
)",
                    run};

}  // namespace commands

}  // namespace mtf
