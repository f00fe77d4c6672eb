// mtf convert: a format's native text to a Meta-TF trace and back.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <metatf/analysis/auto_encoder.hpp>
#include <metatf/encoding/predefined.hpp>
#include <metatf/forms/native.hpp>
#include <metatf/forms/text.hpp>
#include <metatf/io/writer.hpp>

#include "common.hpp"

namespace mtf {

namespace {

// A Meta-TF trace starts with "\177MTF"; text never starts with DEL.
bool is_trace(const std::string& path) {
    if (path == "-") return std::cin.peek() == '\177';
    refuse_directory(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    char magic[4] = {};
    in.read(magic, sizeof magic);
    return in.gcount() == 4 && std::string_view(magic, 4) == std::string_view("\177MTF", 4);
}

// INPUT as the commands below open it: a pipe or device named by a path
// (bash's <(...), a FIFO) can be read only once, and is_trace() reads its
// start, so it becomes standard input ("-"), which is peeked at instead.
std::string readable_once(const std::string& input) {
    struct stat st {};
    if (input == "-" || ::stat(input.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return input;
    const int fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(input + ": cannot open: " + std::strerror(errno));
    const bool moved = ::dup2(fd, STDIN_FILENO) == STDIN_FILENO;
    ::close(fd);
    if (!moved) throw InputError(input + ": cannot read it as standard input: " + std::strerror(errno));
    std::cin.clear();
    return "-";
}

// `file`: the trace or DTD file the DTD comes from, for the message.
const rt::DtdDesc& require_text_form(const rt::DtdDesc& dtd, const std::string& file) {
    if (!dtd.text_form) throw InputError(file + ": the DTD '" + dtd.name + "' describes no text form");
    return dtd;
}

// The size of the input when it is a regular file (standard input too), else 0.
std::uint64_t regular_file_size(const std::string& input) {
    struct stat st {};
    const int status = input == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(input.c_str(), &st);
    return status == 0 && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// Records from a format's own file: its text form or its native binary form.
class Source {
public:
    virtual ~Source() = default;
    virtual bool next(rt::GenericRecord& record) = 0;
    // Where the record read last is, for a message: "line 5", "record 3".
    virtual std::string place() const = 0;
    // How far reading has come, in the unit progress_unit() names.
    virtual std::uint64_t progress(bool by_bytes) const = 0;
    virtual const char* progress_unit(bool by_bytes) const { return by_bytes ? "bytes" : "records"; }
    // Skipped lines (--skip-bad), and the report of them.
    virtual std::uint64_t skipped() const { return 0; }
    virtual std::string skip_report(std::uint64_t) const { return {}; }
    // Records whose input is not spelled as they would be written back, and the report of them.
    virtual std::uint64_t rewritten() const { return 0; }
    virtual std::string rewrite_report() const { return {}; }
};

// Up to 60 bytes of a line around byte `at`, as messages show it: in
// quotes, line breaks and bytes outside printable ASCII escaped, "..." where cut.
std::string shown_line(std::string_view line, std::size_t at) {
    const std::size_t start = at > 20 ? at - 20 : 0;
    const std::string_view part = line.substr(start, 60);
    const std::string text = escape_text(std::as_bytes(std::span(part.data(), part.size())));
    return (start ? "..." : "") + text + (start + part.size() < line.size() ? "..." : "");
}

// Reads text lines, and compares each with the line the text writer makes of
// its record (and the begin and end lines with the form's): a line spelled
// otherwise (case, blanks, leading zeros, line break) is written back in the
// canonical spelling, so it is counted, and with `exact` refused.
class TextSource : public Source {
public:
    TextSource(std::istream& in, const rt::DtdDesc& dtd, rt::TextReadOptions options, bool exact)
        : reader_(in, dtd, options), canonical_(written_, dtd), exact_(exact), dtd_(dtd), form_(*dtd.text_form) {
        if (*form_.begin) compare(reader_.begin_as_read(), std::string(form_.begin) + "\n");
    }
    bool next(rt::GenericRecord& record) override {
        if (!reader_.next(record)) {
            if (*form_.end) compare(reader_.end_as_read(), std::string(form_.end) + "\n");
            return false;
        }
        if (rt::TextWriter::blank_lines_in(dtd_, record) != 0) {
            if (!blanks_compared_) compare_blank_lines();
            blanks_compared_ = true;
            return true;
        }
        written_.str({});
        try {
            canonical_.write(record);
        } catch (const rt::TextError& e) {  // read, but not written back: a spelling of its own
            rewrite(line_as_read(), 1, "is not written back as text (" + e.message + ")");
            return true;
        }
        // Compared in place: most lines are spelled as they are written back.
        const std::string_view line = reader_.record_line(), end = reader_.line_break(), canonical = written_.view();
        if (canonical.size() != line.size() + end.size() || !canonical.starts_with(line) || !canonical.ends_with(end)) {
            compare(line_as_read(), canonical);
        }
        return true;
    }
    std::string place() const override { return "line " + std::to_string(reader_.line()); }
    std::uint64_t progress(bool by_bytes) const override { return by_bytes ? reader_.bytes_read() : reader_.line(); }
    const char* progress_unit(bool by_bytes) const override { return by_bytes ? "bytes" : "lines"; }
    std::uint64_t skipped() const override { return reader_.skipped(); }
    // "skipped N of M lines, kept K records; the first: ...", for --skip-bad.
    std::string skip_report(std::uint64_t kept) const override {
        return "skipped " + std::to_string(reader_.skipped()) + " of " + std::to_string(reader_.line()) + " lines, kept " +
               std::to_string(kept) + " records; the first: " + reader_.first_skipped();
    }
    std::uint64_t rewritten() const override { return rewritten_; }
    // "rewrote N of M lines in the canonical spelling ...; the first: line L, column C: ... is written ...".
    std::string rewrite_report() const override {
        return "rewrote " + std::to_string(rewritten_) + " of " + std::to_string(reader_.line()) +
               " lines in the format's canonical spelling (--exact refuses that); the first: " + first_rewrite_;
    }

private:
    std::string line_as_read() const { return std::string(reader_.record_line()) + std::string(reader_.line_break()); }

    // `line`: the number of the line `original` is, by default the last one read.
    void compare(const std::string& original, std::string_view canonical, std::uint64_t line = 0) {
        if (original == canonical) return;
        const auto differs = std::mismatch(original.begin(), original.end(), canonical.begin(), canonical.end());
        const std::size_t at = static_cast<std::size_t>(differs.first - original.begin());
        rewrite(original, at + 1, "is written " + shown_line(canonical, at), line ? line : reader_.line());
    }
    // The blank lines that end the text are written back as "\n" each.
    void compare_blank_lines() {
        const auto& respelled = reader_.respelled_blank_lines();
        if (respelled.count == 0) return;
        compare(respelled.first, "\n", respelled.first_line);
        rewritten_ += respelled.count - 1;
    }
    // Line `line`, `original`, is not written back as it was read: `what`, from `column` on.
    void rewrite(const std::string& original, std::uint64_t column, const std::string& what, std::uint64_t line = 0) {
        if (line == 0) line = reader_.line();
        const std::string message = shown_line(original, column - 1) + " " + what;
        if (exact_) throw rt::TextError(line, column, "the line is not spelled as it is written back: " + message + " (--exact)");
        if (rewritten_++ == 0) first_rewrite_ = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message;
    }

    rt::TextReader reader_;
    std::ostringstream written_;
    rt::TextWriter canonical_;  // writes into written_, one line at a time
    bool exact_;
    const rt::DtdDesc& dtd_;
    const rt::TextFormDesc& form_;
    bool blanks_compared_ = false;
    std::uint64_t rewritten_ = 0;
    std::string first_rewrite_;
};

class NativeSource : public Source {
public:
    // `form`: nullptr for the DTD's only form, or the one whose magic bytes start the file.
    NativeSource(std::istream& in, const rt::DtdDesc& dtd, const rt::NativeFormDesc* form)
        : reader_(form ? rt::NativeReader(in, dtd, *form) : rt::NativeReader(in, dtd)) {}
    bool next(rt::GenericRecord& record) override {
        const bool more = reader_.next(record);
        records_ += more;
        return more;
    }
    std::string place() const override { return "record " + std::to_string(records_ - 1); }
    const rt::NativeFormDesc& form() const { return reader_.form(); }
    std::uint64_t progress(bool) const override { return reader_.offset(); }
    const char* progress_unit(bool) const override { return "bytes"; }

private:
    rt::NativeReader reader_;
    std::uint64_t records_ = 0;
};

// The comment that starts a trace read from one of a DTD's several native
// forms, so that it is written back in that form with no --form.
constexpr std::string_view form_comment_start = "native form: ";

std::string form_comment(const rt::NativeFormDesc& form) { return std::string(form_comment_start) + form.name; }

bool is_form_comment(const rt::DtdDesc& dtd, const rt::GenericRecord& comment) {
    return dtd.native_form_count > 1 && rt::comment_text(comment).starts_with(form_comment_start);
}

// The form a form comment names, or nullptr when the DTD has no such form.
const rt::NativeFormDesc* remembered_form(const rt::DtdDesc& dtd, const rt::GenericRecord& comment) {
    const std::string_view name = rt::comment_text(comment).substr(form_comment_start.size());
    for (std::uint32_t k = 0; k < dtd.native_form_count; ++k) {
        if (name == dtd.native_forms[k].name) return &dtd.native_forms[k];
    }
    return nullptr;
}

// A format's own file (text, or with --native binary) to a trace. The writer
// widens fields (with metadata) rather than refuse a value, unless --strict:
// then the value's line or record is named.
int to_binary(const std::string& input, const std::string& output, const Options& o) {
    const bool native = o.has("--native");
    if (!o.has("--dtd")) throw UsageError(std::string("converting ") + (native ? "a native file" : "text") + " needs the format's DTD: --dtd FILE");
    const std::string name = input == "-" ? "stdin" : input;
    const std::string dtd_file = o.get("--dtd", "");
    const bool strict = o.has("--strict");
    if (strict && o.has("--encoding") && encoding_choice(o, false) == Encoding::automatic) {
        throw UsageError("--strict keeps the initial encodings: it cannot be used with --encoding auto");
    }
    if (native && o.has("--skip-bad")) throw UsageError("--skip-bad skips lines of text; a native file has none");
    if (native && o.has("--exact")) throw UsageError("--exact is about the spelling of text lines; a native file has none");
    const Encoding encoding = strict ? Encoding::initial : encoding_choice(o, false);
    const bool live = live_references(o, encoding);
    const auto dtd = load_dtd(dtd_file);
    const rt::DtdDesc& desc = native ? dtd->desc() : require_text_form(dtd->desc(), dtd_file);
    const rt::NativeFormDesc* form = native ? chosen_native_form(desc, o, dtd_file, false) : nullptr;
    std::ifstream file;
    if (input != "-") file.open(input, std::ios::binary);
    std::istream& in = input == "-" ? std::cin : file;
    rt::TextReadOptions options;
    options.skip_bad = o.has("--skip-bad");
    const std::uint64_t size = regular_file_size(input);
    try {
        // The reader's failures are the input's, the writer's the output's.
        const std::unique_ptr<Source> source = naming_file(name, [&]() -> std::unique_ptr<Source> {
            if (native) return std::make_unique<NativeSource>(in, desc, form);
            return std::make_unique<TextSource>(in, desc, options, o.has("--exact"));
        });
        std::uint64_t kept = 0;
        naming_file(output, [&] {
            rt::TraceWriter writer(output, desc, writer_options(o, input, desc));
            std::optional<rt::AutoEncoder> chosen;
            if (encoding == Encoding::automatic) chosen.emplace(writer, rt::AutoEncoder::default_window, live ? rt::References::predict : rt::References::none);
            std::uint8_t current = 0;
            rt::GenericRecord record;
            if (native && desc.native_form_count > 1) {
                const std::string text = form_comment(static_cast<const NativeSource&>(*source).form());
                chosen ? chosen->comment(text) : writer.comment(text);
            }
            {
                // By bytes when the input's size is known, else by lines; erased before any report.
                Progress progress("convert", size, source->progress_unit(size != 0));
                while (naming_file(name, [&] { return source->next(record); })) {
                    const std::uint8_t section = desc.records[record.slot].section;
                    if (section != 0 && current != section) {
                        chosen ? chosen->section(section) : writer.section(section);
                        current = section;
                    }
                    try {
                        chosen ? chosen->write(record) : void(rt::encode_generic(writer, record));
                    } catch (const rt::TraceError& e) {
                        if (e.kind != rt::ErrorKind::bad_value) throw;  // only --strict refuses values: no AutoEncoder
                        throw InputError(name + ": " + source->place() + ": " + e.message);
                    }
                    if (rt::TextWriter::blank_lines_in(desc, record) != 0) continue;  // kept, but no record of the text
                    if ((++kept & 0xff) == 0) progress.show(source->progress(size != 0));
                }
            }
            // A trace of no records from a text of only bad lines would hide the failure.
            if (source->skipped() != 0 && kept == 0) throw InputError(name + ": " + source->skip_report(kept));
            if (chosen) chosen->flush();
            writer.close();
        });
        if (source->skipped() != 0) std::cerr << "mtf: convert: " << name << ": " << source->skip_report(kept) << '\n';
        if (source->rewritten() != 0) std::cerr << "mtf: convert: " << name << ": " << source->rewrite_report() << '\n';
    } catch (const rt::TextError& e) {
        throw InputError(name + ": " + e.what());
    } catch (const rt::TraceError& e) {
        if (e.kind == rt::ErrorKind::output) throw InputError(e.message);  // names the output; no trace position
        throw;
    }
    return 0;
}

// Hands the text written so far to the output.
void move_lines(std::ostringstream& lines, Output& out) {
    out.write(lines.view());
    lines.str({});
}

// A trace to text lines. Metadata and section records only shape the binary
// form; comments, which no text form holds, are left out with a warning,
// but for those of blank lines that end the trace, which end the text.
int to_text(const std::string& input, const std::string& output, const Options& o) {
    return on_trace(input, [&] {
        Trace trace(input, o.find("--dtd"));
        const rt::DtdDesc& desc = require_text_form(trace.dtd(), trace.name());
        Output out(output, output_options(o, {input}));
        std::ostringstream lines;
        rt::TextWriter text(lines, desc);
        const std::string output_name = output == "-" ? "stdout" : output;
        std::uint64_t comments = 0;
        std::uint64_t blank_comments = 0, blank_lines = 0;  // since the last record written
        for_each_record("convert", trace, [&](const ReadRecord& r) {
            const rt::Predefined kind = desc.records[r.record.slot].predefined;
            if (kind == rt::Predefined::metadata || kind == rt::Predefined::section) return;
            if (const std::uint64_t n = rt::TextWriter::blank_lines_in(desc, r.record)) {
                ++blank_comments;
                blank_lines += n;
                return;
            }
            if (kind == rt::Predefined::comment) {
                ++comments;
                return;
            }
            comments += blank_comments;  // blank lines a record follows do not end the text
            blank_comments = blank_lines = 0;
            try {
                naming_file(output_name, [&] { text.write(r.record); });
            } catch (const rt::TextError& e) {
                throw InputError(trace.name() + ": record " + std::to_string(r.index) + ": " + e.message);
            }
            if (lines.tellp() >= 1 << 16) move_lines(lines, out);
        });
        text.blank_lines(blank_lines);
        naming_file(output_name, [&] { text.close(); });
        move_lines(lines, out);
        out.close();
        if (comments != 0) {
            std::cerr << "mtf: convert: " << trace.name() << ": warning: left out " << comments
                      << " comment record(s), which the text form cannot hold\n";
        }
        return 0;
    });
}

// A trace to its format's native binary file. Metadata and section records
// only shape the trace; a first comment "native form: NAME" (as a
// conversion from one of several forms starts) chooses that form when
// --form does not, and is not written; the next comment is the file's
// ASCII header; the blank lines that ended a text are left out, with a warning.
int to_native(const std::string& input, const std::string& output, const Options& o) {
    return on_trace(input, [&] {
        Trace trace(input, o.find("--dtd"));
        const rt::DtdDesc& desc = trace.dtd();
        const rt::NativeFormDesc* named = o.has("--form") ? chosen_native_form(desc, o, trace.name(), true) : nullptr;
        Output out(output, output_options(o, {input}));
        std::ostringstream bytes;
        std::optional<rt::NativeWriter> native;
        const auto writer = [&](const rt::NativeFormDesc* remembered) -> rt::NativeWriter& {
            if (!native) native.emplace(bytes, desc, named ? *named : remembered ? *remembered : *chosen_native_form(desc, o, trace.name(), true));
            return *native;
        };
        std::uint64_t blank_lines = 0;
        std::uint64_t first = 0;  // the index of the record that may be the header
        for_each_record("convert", trace, [&](const ReadRecord& r) {
            const rt::Predefined kind = desc.records[r.record.slot].predefined;
            if (kind == rt::Predefined::metadata || kind == rt::Predefined::section) return;
            if (!native && kind == rt::Predefined::comment && is_form_comment(desc, r.record)) {
                writer(remembered_form(desc, r.record));
                first = r.index + 1;
                return;
            }
            // A first comment is the header, even of line breaks alone.
            if (const std::uint64_t n = r.index == first ? 0 : rt::TextWriter::blank_lines_in(desc, r.record)) {
                blank_lines += n;
                return;
            }
            try {
                writer(nullptr).write(r.record);
            } catch (const rt::TraceError& e) {
                throw InputError(trace.name() + ": record " + std::to_string(r.index) + ": " + e.message);
            }
            if (bytes.tellp() >= 1 << 16) move_lines(bytes, out);
        });
        writer(nullptr).close();
        move_lines(bytes, out);
        out.close();
        if (blank_lines != 0) {
            std::cerr << "mtf: convert: " << trace.name() << ": warning: left out " << blank_lines
                      << " blank line(s) that ended the text, which the native form cannot hold\n";
        }
        return 0;
    });
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(
        args, "convert", with_trace_output({{"--native", false}, {"--form", true}, {"--skip-bad", false}, {"--exact", false}, {"--strict", false}, {"--encoding", true}, {"--no-live", false}, {"-f", false}, {"--force", false}}),
        {"INPUT", "OUTPUT"});
    const std::string input = readable_once(o.positional[0]);
    const std::string& output = o.positional[1];
    if (!o.has("--native") && o.has("--form")) throw UsageError("--form names a native form: it goes with --native");
    if (!is_trace(input)) return to_binary(input, output, o);
    if (o.has("--exact")) throw UsageError("--exact is about the spelling of text input; INPUT is a trace");
    return o.has("--native") ? to_native(input, output, o) : to_text(input, output, o);
}

}  // namespace

namespace commands {

extern const Command convert;  // external linkage, for main's table
const Command convert{"convert", "convert a format's own text or binary file to a Meta-TF trace, or back",
                      R"(Usage: mtf convert [OPTIONS] INPUT OUTPUT

Converts between a format's native text (SPC CSV, PTF ASCII, Laplace and
Lackey text: any DTD with a 'text { ... }' block), or with --native its
native binary file (PTF binary, CHARISMA files: a DTD with a 'native'
block), and the Meta-TF binary trace. The direction follows INPUT: a Meta-TF
trace becomes text (or the native file), anything else is read as text (or
as the native file) and becomes a trace.

  text to trace:    mtf convert --dtd dtds/spc.dtd trace.spc trace.mtf
  trace to text:    mtf convert trace.mtf trace.spc
  native to trace:  mtf convert --native --dtd dtds/ptf.dtd trace.ptfb trace.mtf
  trace to native:  mtf convert --native trace.mtf trace.ptfb
  another layout:   mtf convert --native --form lp64 charisma.mtf run.lp64

Text is read as the DTD's text form says, one record per line; the first
line that is not a record stops the conversion with its line and column.
A line may hold at most 1 MiB (1048576 bytes, without its line break); a
longer one is such an error, at the column past the limit.
Each field's encoding (width and interpretation) is chosen from the data,
16384 records at a time, as 'mtf recode' does (--encoding auto, the
default); with --encoding initial the DTD's initial encodings are kept.
Values are never truncated: when a value does not fit its field's current
encoding, the trace gets a metadata record that widens the field (or turns a
'default' or 'stride' field into 'none'); with --strict (which keeps the
initial encodings) such a value is an error naming its line instead. A trace becomes text in the text
form's canonical spelling; its metadata and section records are left out,
and so are its comment records (text forms cannot hold comments), with a
warning on stderr that counts them. Blank lines that end a text (after its
end line, if the form has one) are kept in the trace, as comments of line
breaks, and written back; a blank line before a record is an error. A native file's ASCII header (PTF's
lines up to "$") becomes the trace's first comment, and is written back from
it; records are read and written in the native form's byte order, widths
and padding, and a value too wide for its native field is an error naming
its record. A DTD with several native forms (one per machine layout) reads
a file in the form whose magic bytes start it, or the one --form names,
and starts the trace with a comment "native form: NAME"; writing takes the
form --form names, else the one that comment names.

On a terminal, text to trace shows progress on stderr by bytes read of INPUT
(by lines when INPUT's size is not known, as for a pipe).

INPUT and OUTPUT may be '-' for standard input and output, for text and
traces alike (a trace streams). An existing OUTPUT is replaced only with -f;
nothing is left at OUTPUT when the conversion fails; a FIFO or device is
written in place, and so is the descriptor /dev/stdout, /dev/stderr,
/dev/fd/N or /proc/self/fd/N names (at its offset: '>>' appends); OUTPUT may
not be INPUT (docs/mtf.md, "Output files").

Options:
  --dtd FILE          the DTD of the text (needed for text input); for trace
                      input, read with FILE instead of the embedded DTD
  --native            the file that is not a trace is the format's native
                      binary file (docs/dtd-language.md, section 16), not text
  --form NAME         with --native: the DTD's native form to read or write
                      (writing needs it when the DTD has several)
  --skip-bad          text input: skip lines that are not records (too long
                      ones included); when any were skipped, report
                      "skipped N of M lines, kept K records; the first: ..."
                      on stderr (M counts every line, a begin or end line
                      too), and fail (exit 1, no OUTPUT) if no record was kept
  --exact             text input: refuse a line that is not spelled as it
                      would be written back (exit 1, no OUTPUT). Without it
                      such lines are kept as records, and their count is
                      reported on stderr: "rewrote N of M lines in the
                      format's canonical spelling ...; the first: ..."
  --encoding auto|initial
                      text input: the trace's encodings are chosen from the
                      data (auto, the default) or the DTD's (initial)
  --no-live           text input, auto: no references to live values (as
                      'mtf recode --no-live')
  --strict            text input: keep the initial encodings, and make a
                      value that does not fit its field's current encoding
                      an error, not a metadata record
  --compress[=LEVEL]  trace output: compress each chunk with zstd at LEVEL
                      (1-22, default 19: a few MB a second to write; 1-9
                      are faster; 20-22 slower still); chunks it would not
                      shrink stay stored. Readers decompress on their own,
                      as fast at any level
  --chunk-size SIZE   trace output: bytes of records a chunk holds before
                      it is written (4K-64M, K or M for KiB or MiB; default
                      1M, 16M with --compress). Larger chunks compress
                      better and cost readers as much memory each
                      (docs/compactness.md)
  --split REC.FIELD[,REC.FIELD...]
                      trace output: each field named stores its values in
                      a section of its own (a split stream, compressed
                      apart; docs/trace-format.md, 5.2)
  --class 32|64       trace output: the header's word size (default 64)
  --byte-order little|big
                      trace output: the byte order (default little)
  --container-version 1|2|3|4|5|6
                      trace output: the layout (default 6: 4 with the
                      DTD text and state blocks compressed when
                      --compress is given, else 4, checksummed, whose
                      chunks each decode alone; 5, 3, 2 and 1 for older
                      readers, docs/trace-format.md, section 1)
  -f, --force         replace OUTPUT if it exists
  -h, --help          show this help

Exit status: 0 on success, 1 for bad input, 2 for a command-line mistake.
)",
                      run};

}  // namespace commands

}  // namespace mtf
