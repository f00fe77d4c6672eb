// What the commands of mtf share: the command table's entry type, option
// parsing, opening a trace with the DTD it carries, output, progress, and
// the formatting of decoded values.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <metatf/container/output.hpp>
#include <metatf/io/generic.hpp>
#include <metatf/io/reader.hpp>
#include <metatf/io/writer.hpp>

#include "ir/schema.hpp"
#include "lower/lower.hpp"

namespace mtf {

namespace rt = metatf::rt;

// A command line mistake: exit status 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Bad input or a failed check: exit status 1.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The value of `option` given as decimal digits, or a UsageError that says
// it takes `what` ("a count", "a record index or count").
std::uint64_t decimal_option(const std::string& option, const std::string& text, const std::string& what);

struct Command {
    const char* name;
    const char* summary;  // one line, for `mtf --help`
    const char* help;     // the whole `mtf NAME --help` text
    int (*run)(const std::vector<std::string>& args);
};

// ---- options

struct OptionSpec {
    const char* name;  // "--format", "-o"
    bool takes_value;
    bool repeatable = false;  // may be given more than once, each value kept
    bool optional_value = false;  // with takes_value: the value, if any, comes as NAME=VALUE ("" without)
};

struct Options {
    std::map<std::string, std::vector<std::string>> values;  // options given, by name ("" for a flag)
    std::vector<std::string> positional;

    bool has(const std::string& name) const { return values.count(name) != 0; }
    std::string get(const std::string& name, const std::string& otherwise) const;
    // The option's value, if it was given.
    std::optional<std::string> find(const std::string& name) const;
    // Every value of a repeatable option, in the order given.
    const std::vector<std::string>& all(const std::string& name) const;
};

// Parses `args` against `specs` (--dtd FILE is accepted everywhere). "--name=value"
// and "--name value" both work; "-" is positional; "--" ends the options. An
// option not `repeatable` given twice is a UsageError. `positional` names the
// arguments wanted, in order ("INPUT", "OUTPUT"); a missing or extra one is a
// UsageError in those terms, with the usage "mtf COMMAND ARGUMENTS".
Options parse_options(const std::vector<std::string>& args, const char* command, std::vector<OptionSpec> specs,
                      const std::vector<std::string>& positional);

// The names `option` gives as NAME[,NAME...] (none when it is not given); an
// empty name is a UsageError that says the option takes `what`.
std::vector<std::string> comma_list(const Options& o, const std::string& option, const std::string& what);

// ---- traces

// A trace open for reading, with the DTD it is read with: the one embedded in
// it, or the one given with --dtd (which must have the trace's fingerprint).
class Trace {
public:
    // `path` "-" is standard input, read as a stream.
    Trace(const std::string& path, const std::optional<std::string>& dtd_file);
    // The format's native binary file at `path` (docs/dtd-language.md, section
    // 16), read with the DTD in `dtd_file`: converted to a temporary trace
    // (the DTD's initial encodings, widened where values need it), which is
    // removed once it is open. Errors name `path` and the byte in it.
    // `form` names the native form; "" for the only one, or the one whose
    // magic bytes start the file.
    static std::unique_ptr<Trace> from_native(const std::string& path, const std::string& dtd_file, const std::string& form);
    // The trace at `path`, or with --native (and --dtd, maybe --form) its native file.
    static std::unique_ptr<Trace> open(const std::string& path, const Options& o);
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    rt::TraceReader& reader() { return *reader_; }
    const rt::Header& header() const { return reader_->header(); }
    // The DTD, as a writer of traces of it takes it.
    const rt::DtdDesc& dtd() const { return dtd_->desc(); }
    // The DTD as this trace is read: with the sections its writer added for split streams.
    const rt::DtdDesc& read_dtd() const { return reader_->dtd(); }
    // The trace's bytes (a native file's, for one); from a pipe, those read so far.
    std::uint64_t file_size() const { return native_size_ ? *native_size_ : reader_->input_bytes(); }
    const std::string& name() const { return name_; }  // for messages: the path, or "stdin"

private:
    const rt::DtdDesc& make_dtd(const rt::Header& header, const std::optional<std::string>& dtd_file);

    std::string name_;
    std::unique_ptr<metatf::lower::LoweredDtd> dtd_;
    std::unique_ptr<rt::TraceReader> reader_;
    std::optional<std::uint64_t> native_size_;  // the native file's bytes, when the trace was made from one
};

// The native form of `dtd` that --form names. Without --form: the DTD's only
// form, or nullptr when it has several (a reader then goes by the magic
// bytes; a writer, `writing`, needs --form). `file` is where the DTD is from.
const rt::NativeFormDesc* chosen_native_form(const rt::DtdDesc& dtd, const Options& o, const std::string& file, bool writing);

// A warning when the header names a DTD that mtf ships (dtds/) but the trace
// has another layout (a relabelled trace), or "".
std::string dtd_name_warning(const rt::Header& header);
// Prints that warning, if any, as "mtf: COMMAND: TRACE: warning: ...".
void warn_of_dtd_name(const char* command, const Trace& trace);

// Compiles a DTD file; its errors become one InputError line.
std::unique_ptr<metatf::lower::LoweredDtd> load_dtd(const std::string& path);

// A record as read: its values, and where it was.
struct ReadRecord {
    rt::GenericRecord record;
    std::uint64_t index = 0;  // counts every record from 0, predefined ones included
    int section = 0;          // the section the record was read from
};

// Refuses a directory given where a file is read, naming it.
void refuse_directory(const std::string& path);

// Runs `f`, turning a TraceError into the InputError "FILE: what" (which has
// the position in the trace only when the error has one).
template <typename F>
auto naming_file(const std::string& file, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const rt::TraceError& e) {
        // An output's failure already names its file.
        throw InputError(e.kind == rt::ErrorKind::output ? e.message : file + ": " + e.what());
    }
}

// Runs `body` on the trace at `path`, turning trace errors into one line:
// "PATH: byte N, section S, record R: what", or "PATH: what" for an error
// with no position in the trace (TraceError::has_position).
int on_trace(const std::string& path, const std::function<int()>& body);

// ---- output

// Standard output ("-") or a file, buffered, written by the rules of
// rt::OutputFile (a file appears whole on close(), or not at all); write
// errors are InputError.
class Output {
public:
    explicit Output(const std::string& path, const rt::OutputOptions& options = {});
    ~Output();
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;

    void write(std::string_view s) {
        buffer_ += s;
        if (buffer_.size() >= 1 << 16) flush();
    }
    void flush();
    // Flushes and puts the file in place; call once at the end.
    void close();

private:
    std::unique_ptr<rt::OutputFile> file_;
    std::string buffer_;
};

// -f/--force, and the files the output must not be.
rt::OutputOptions output_options(const Options& o, std::vector<std::string> inputs);

// A command's options, and those of writing a trace: --compress[=LEVEL], --chunk-size, --split, --class, --byte-order.
std::vector<OptionSpec> with_trace_output(std::vector<OptionSpec> specs);
// What they ask for (and --strict, -f), for a trace of `dtd` written from `input`.
rt::WriterOptions writer_options(const Options& o, const std::string& input, const rt::DtdDesc& dtd);

// --encoding: how the encodings of a trace being written are chosen.
enum class Encoding { automatic, initial, keep };
// The value of --encoding (default auto); `keep` is allowed only where the input is a trace.
Encoding encoding_choice(const Options& o, bool keep_allowed);
// Whether --encoding auto may choose live references (not with --no-live, which only auto takes).
bool live_references(const Options& o, Encoding e);

// Writes a whole report to standard output; throws InputError if it cannot.
void print(std::string_view text);

// A `\r`-updated line on stderr for long runs, only when stderr is a terminal:
// "N of M UNIT (P%)", or "N UNIT" when the total is not known (0).
class Progress {
public:
    // `total` 0: not known (a stream).
    Progress(const char* command, std::uint64_t total, const char* unit = "records");
    ~Progress();
    // For a count that goes up by one: looks at the clock every 4096.
    void tick(std::uint64_t done) {
        if ((done & 0xfff) == 0) show(done);
    }
    // Shows `done` if the last update is old enough.
    void show(std::uint64_t done);

private:
    const char* command_;
    const char* unit_;
    std::uint64_t total_;
    bool enabled_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point start_, last_;
};

// ---- values

std::string format_real(double v);                                   // shortest round trip; inf, -inf, nan
// Fixed point when scaled, with at least `fewest` fraction digits when not 0 (a text form's `decimal digits N`).
std::string format_integer(std::uint64_t v, bool is_signed, unsigned scale, unsigned fewest = 0);
std::string escape_text_body(std::span<const std::byte> bytes);      // C escapes: \" \\ \n \t \r \xHH
std::string escape_text(std::span<const std::byte> bytes);           // the same, in double quotes
std::string escape_json(std::span<const std::byte> bytes);           // "..." with \u00XX escapes
std::string format_json_real(double v);                              // a number, or "NaN", "Infinity", "-Infinity"
std::string json_string(std::string_view s);
// Section 0 is the global part; others have the DTD's names.
std::string section_name(const rt::DtdDesc& dtd, std::uint8_t number);

// Aligns rows in columns two spaces apart; align[i] is 'l' or 'r' for column i.
std::string format_table(const std::vector<std::vector<std::string>>& rows, std::string_view align);

// Receives a record's values in layout order; repeated groups and metadata
// value lists arrive as lists.
class Sink {
public:
    virtual ~Sink() = default;
    // `fewest`: the fraction digits a scaled value shows at least (see format_integer).
    virtual void integer(const char* key, std::uint64_t v, const rt::FieldDesc& d, unsigned fewest) = 0;
    virtual void real(const char* key, double v) = 0;
    virtual void bytes(const char* key, std::span<const std::byte> v) = 0;
    virtual void name(const char* key, std::string_view v) = 0;  // metadata: a record, field or property
    virtual void number(std::uint64_t v, bool is_signed) = 0;     // metadata: an element of its value list
    virtual void begin_list(const std::string& key) = 0;
    virtual void end_list() = 0;
    virtual void begin_element() = 0;
    virtual void end_element() = 0;
};

// The key of the repeated group at layout step `step`: its count field's path
// with a star, as the DTD writes `n*(...)`; the second group over the same
// count is `n*2`, the third `n*3`.
std::string group_key(const rt::RecordDesc& r, std::uint32_t step);

// Sends a record's values to `sink`. A metadata record gives names for its
// record, field and property, and a list of its values. An integer its DTD's
// text form writes as hex digits or as a character goes as a name() in that
// spelling.
void emit_record(const rt::DtdDesc& dtd, const ReadRecord& r, Sink& sink);

// The slot of the record type that metadata record `r` (as decode_generic()
// gives it, read in section r.section) changes.
std::uint32_t metadata_target(const rt::DtdDesc& dtd, const ReadRecord& r);

// The top-level keys emit_record() gives for a record type, in order.
std::vector<std::string> record_keys(const rt::RecordDesc& r);

// Reads every record with every check, for that alone (rt::skip_generic);
// shows progress on a terminal. Returns how many there were.
std::uint64_t check_records(const char* command, Trace& trace);

// Reads every record, calling `each(const ReadRecord&)`, or until `each`
// returns false if it returns bool; shows progress on a terminal.
template <typename Each>
void for_each_record(const char* command, Trace& trace, Each&& each) {
    rt::TraceReader& reader = trace.reader();
    Progress progress(command, trace.header().record_count);
    ReadRecord r;
    while (reader.begin_record()) {
        r.index = reader.record_index();
        r.section = reader.current_section();
        rt::decode_generic(reader, r.record);
        if constexpr (std::is_same_v<decltype(each(static_cast<const ReadRecord&>(r))), bool>) {
            if (!each(static_cast<const ReadRecord&>(r))) return;  // the caller has what it wants
        } else {
            each(static_cast<const ReadRecord&>(r));
        }
        progress.tick(r.index + 1);
    }
}

}  // namespace mtf
