#include "common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <metatf/analysis/rules.hpp>
#include <metatf/core/format.hpp>
#include <metatf/core/layout.hpp>
#include <metatf/encoding/field_state.hpp>
#include <metatf/forms/native.hpp>
#include <metatf/io/writer.hpp>

#include "compile.hpp"
#include "open/trace_dtd.hpp"

namespace mtf {

std::uint64_t decimal_option(const std::string& option, const std::string& text, const std::string& what) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
        throw UsageError(option + " takes " + what + " (decimal digits), not '" + text + "'");
    }
    return n;
}

// ---- options

std::optional<std::string> Options::find(const std::string& name) const {
    const std::vector<std::string>& given = all(name);
    return given.empty() ? std::nullopt : std::optional(given.front());
}

std::string Options::get(const std::string& name, const std::string& otherwise) const {
    return find(name).value_or(otherwise);
}

const std::vector<std::string>& Options::all(const std::string& name) const {
    static const std::vector<std::string> none;
    const auto it = values.find(name);
    return it == values.end() ? none : it->second;
}

namespace {

// "A", "A or B", "A, B or C".
std::string either(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    return out;
}

// Says which positional arguments are missing or the first that is extra.
// A last name ending in "..." (TRACE...) takes one or more arguments.
void check_positional(const std::vector<std::string>& got, const char* command, const std::vector<std::string>& wanted) {
    std::string usage = std::string("mtf ") + command;
    for (const std::string& w : wanted) usage += " " + w;
    const bool more = !wanted.empty() && wanted.back().ends_with("...");
    if (got.size() < wanted.size()) {
        throw UsageError("no " + either({wanted.begin() + static_cast<std::ptrdiff_t>(got.size()), wanted.end()}) +
                         " given (" + usage + ")");
    }
    if (got.size() > wanted.size() && !more) {
        const std::string after = wanted.empty() ? "" : " after " + wanted.back();
        throw UsageError("unexpected argument '" + got[wanted.size()] + "'" + after + " (" + usage + ")");
    }
}

// --dtd NAME names a file, or a DTD mtf ships (metatf::find_dtd). A path
// that names nothing is left for the compiler to report as it reports any
// unreadable file.
void resolve_dtd(Options& o) {
    const auto it = o.values.find("--dtd");
    if (it == o.values.end()) return;
    std::string& value = it->second.front();
    if (const auto found = metatf::find_dtd(value)) {
        value = *found;
    } else if (value.find('/') == std::string::npos) {
        throw InputError(metatf::dtd_not_found(value));
    }
}

}  // namespace

Options parse_options(const std::vector<std::string>& args, const char* command, std::vector<OptionSpec> specs,
                      const std::vector<std::string>& positional) {
    specs.push_back({"--dtd", true});
    Options out;
    bool options_ended = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (options_ended || a == "-" || a.empty() || a[0] != '-') {
            out.positional.push_back(a);
            continue;
        }
        if (a == "--") {
            options_ended = true;
            continue;
        }
        const std::size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        const auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return name == s.name; });
        if (spec == specs.end()) throw UsageError("unknown option '" + name + "'");
        if (out.has(name) && !spec->repeatable) throw UsageError(name + " given twice");
        std::vector<std::string>& values = out.values[name];
        if (!spec->takes_value) {
            if (eq != std::string::npos) throw UsageError("option '" + name + "' takes no value");
            values.emplace_back();
        } else if (spec->optional_value) {
            values.push_back(eq == std::string::npos ? std::string() : a.substr(eq + 1));
        } else if (eq != std::string::npos) {
            values.push_back(a.substr(eq + 1));
        } else if (i + 1 < args.size()) {
            values.push_back(args[++i]);
        } else {
            throw UsageError("option '" + name + "' needs a value");
        }
    }
    check_positional(out.positional, command, positional);
    resolve_dtd(out);
    return out;
}

// ---- traces

namespace {

std::string display_name(const std::string& path) { return path == "-" ? "stdin" : path; }

}  // namespace

Trace::Trace(const std::string& path, const std::optional<std::string>& dtd_file) : name_(display_name(path)) {
    reader_ = std::make_unique<rt::TraceReader>(path, [&](const rt::Header& h) -> const rt::DtdDesc& {
        return make_dtd(h, dtd_file);
    });
}

const rt::DtdDesc& Trace::make_dtd(const rt::Header& h, const std::optional<std::string>& dtd_file) {
    try {
        dtd_ = metatf::open::trace_dtd(h, dtd_file);
    } catch (const metatf::open::DtdError& e) {
        throw InputError(name_ + ": " + e.what());
    }
    return dtd_->desc();
}

const rt::NativeFormDesc* chosen_native_form(const rt::DtdDesc& dtd, const Options& o, const std::string& file, bool writing) {
    if (dtd.native_form_count == 0) throw InputError(file + ": the DTD '" + dtd.name + "' describes no native binary form");
    if (!o.has("--form") && dtd.native_form_count > 1) {
        if (!writing) return nullptr;
        std::string names;
        for (std::uint32_t k = 0; k < dtd.native_form_count; ++k) names += (k ? ", " : "") + std::string(dtd.native_forms[k].name);
        throw UsageError("the DTD '" + std::string(dtd.name) + "' describes several native binary forms: name one with --form (" + names + ")");
    }
    try {
        return &rt::native_form(dtd, o.get("--form", ""));
    } catch (const rt::TraceError& e) {
        throw InputError(file + ": " + e.message);
    }
}

std::unique_ptr<Trace> Trace::from_native(const std::string& path, const std::string& dtd_file, const std::string& form_name) {
    const auto dtd = load_dtd(dtd_file);
    Options named;
    if (!form_name.empty()) named.values["--form"] = {form_name};
    const rt::NativeFormDesc* form = chosen_native_form(dtd->desc(), named, dtd_file, false);
    refuse_directory(path);
    std::ifstream file;
    if (path != "-") {
        file.open(path, std::ios::binary);
        if (!file) throw InputError(path + ": cannot open: " + std::strerror(errno));
    }
    std::istream& in = path == "-" ? std::cin : file;
    std::string dir = (std::filesystem::temp_directory_path() / "mtf-native-XXXXXX").string();
    if (!::mkdtemp(dir.data())) {
        throw InputError("cannot make a temporary directory in " + std::filesystem::temp_directory_path().string() + ": " + std::strerror(errno));
    }
    const std::string temporary = dir + "/trace.mtf";
    struct Cleanup {
        const std::string& dir;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } cleanup{dir};
    std::uint64_t size = 0;
    naming_file(display_name(path), [&] {
        std::optional<rt::NativeReader> detected, named_form;
        rt::NativeReader& reader = form ? named_form.emplace(in, dtd->desc(), *form) : detected.emplace(in, dtd->desc());
        rt::TraceWriter writer(temporary, dtd->desc());
        rt::GenericRecord record;
        while (reader.next(record)) rt::encode_generic(writer, record);
        writer.close();
        size = reader.offset();
    });
    auto trace = std::make_unique<Trace>(temporary, std::nullopt);  // the file goes; the open reader keeps it
    trace->name_ = display_name(path);
    trace->native_size_ = size;
    return trace;
}

std::unique_ptr<Trace> Trace::open(const std::string& path, const Options& o) {
    if (!o.has("--native")) {
        if (o.has("--form")) throw UsageError("--form names a native form: it goes with --native");
        return std::make_unique<Trace>(path, o.find("--dtd"));
    }
    if (!o.has("--dtd")) throw UsageError("reading a native file needs the format's DTD: --dtd FILE");
    return from_native(path, o.get("--dtd", ""), o.get("--form", ""));
}

std::unique_ptr<metatf::lower::LoweredDtd> load_dtd(const std::string& path) {
    try {
        return metatf::open::dtd_file(path);
    } catch (const metatf::open::DtdError& e) {
        throw InputError(e.what());
    }
}

void refuse_directory(const std::string& path) {
    std::error_code ec;
    if (path != "-" && std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a file");
}

int on_trace(const std::string& path, const std::function<int()>& body) {
    refuse_directory(path);
    return naming_file(display_name(path), body);
}

// ---- output

Output::Output(const std::string& path, const rt::OutputOptions& options) {
    try {
        file_ = std::make_unique<rt::OutputFile>(path, options);
    } catch (const rt::OutputError& e) {
        throw InputError(e.what());
    }
}

Output::~Output() = default;

void Output::flush() {
    try {
        file_->write(buffer_.data(), buffer_.size());
    } catch (const rt::OutputError& e) {
        throw InputError(e.what());
    }
    buffer_.clear();
}

void Output::close() {
    flush();
    try {
        file_->commit();
    } catch (const rt::OutputError& e) {
        throw InputError(e.what());
    }
}

rt::OutputOptions output_options(const Options& o, std::vector<std::string> inputs) {
    return rt::OutputOptions{o.has("-f") || o.has("--force"), std::move(inputs)};
}

namespace {

// Whether `text` is a decimal number of 1 to `max` digits (no sign, no blank).
bool all_digits(const std::string& text, std::size_t max) {
    return !text.empty() && text.size() <= max && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// --compress with no level: zstd's strongest before its "ultra" levels,
// slow to write (a few MB a second), as fast to read as any level.
constexpr int default_compress_level = 19;
// The chunk size when compressing: zstd finds repeats across a whole chunk,
// and heap traces repeat over megabytes (docs/compactness.md).
constexpr std::size_t compressed_chunk_size = std::size_t(16) << 20;

// --compress[=LEVEL]: the zstd level, 0 without the option.
int compress_level(const Options& o) {
    if (!o.has("--compress")) return 0;
    const std::string level = o.get("--compress", "");
    if (level.empty()) return default_compress_level;
    const int n = all_digits(level, 2) ? std::stoi(level) : 0;
    if (n < 1 || n > rt::max_compress_level) {
        throw UsageError("--compress takes a level from 1 to " + std::to_string(rt::max_compress_level) + ", not '" + level + "'");
    }
    return n;
}

// --chunk-size=SIZE: bytes, or KiB/MiB with a K/M suffix. Bounded so that a
// chunk and the record that overflows it stay far below the readers' limit.
constexpr std::size_t min_chunk_size = std::size_t(4) << 10, max_chunk_size = std::size_t(64) << 20;

std::size_t chunk_size(const Options& o, std::size_t fallback) {
    if (!o.has("--chunk-size")) return fallback;
    const std::string text = o.get("--chunk-size", "");
    std::string digits = text;
    std::size_t unit = 1;
    if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'M')) {
        unit = digits.back() == 'K' ? std::size_t(1) << 10 : std::size_t(1) << 20;
        digits.pop_back();
    }
    const std::size_t n = all_digits(digits, 9) ? std::stoull(digits) * unit : 0;
    if (n < min_chunk_size || n > max_chunk_size) {
        throw UsageError("--chunk-size takes a size from 4K to 64M (bytes, or K or M for KiB or MiB), not '" + text + "'");
    }
    return n;
}

// --split REC.FIELD[,REC.FIELD...]: the fields given streams of their own.
}  // namespace

std::vector<std::string> comma_list(const Options& o, const std::string& option, const std::string& what) {
    std::vector<std::string> names;
    if (!o.has(option)) return names;
    const std::string list = o.get(option, "");
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        names.push_back(list.substr(start, comma - start));
        if (names.back().empty()) throw UsageError(option + " takes " + what + " separated by commas, not '" + list + "'");
        start = comma + 1;
    }
    return names;
}

std::uint32_t metadata_target(const rt::DtdDesc& dtd, const ReadRecord& r) {
    const std::uint64_t tag = r.record.values.at(0).integer;
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const rt::RecordDesc& d = dtd.records[i];
        if (d.tag == tag && (d.section == 0 || d.section == r.section)) return i;
    }
    throw InputError("a metadata record names tag " + std::to_string(tag) + ", which no record has");  // the reader refuses it first
}

std::vector<OptionSpec> with_trace_output(std::vector<OptionSpec> specs) {
    specs.insert(specs.end(), {{"--compress", true, false, true}, {"--chunk-size", true}, {"--split", true}, {"--class", true}, {"--byte-order", true}, {"--container-version", true}});
    return specs;
}

rt::WriterOptions writer_options(const Options& o, const std::string& input, const rt::DtdDesc& dtd) {
    rt::WriterOptions w;
    w.output = output_options(o, {input});
    const std::string cls = o.get("--class", "64"), order = o.get("--byte-order", "little");
    if (cls != "32" && cls != "64") throw UsageError("--class takes 32 or 64, not '" + cls + "'");
    if (order != "little" && order != "big") throw UsageError("--byte-order takes little or big, not '" + order + "'");
    const std::string version = o.get("--container-version", std::to_string(rt::container_version));
    if (version.size() != 1 || version[0] < '1' || version[0] > '0' + rt::container_version) {
        throw UsageError("--container-version takes 1 to " + std::to_string(rt::container_version) + ", not '" + version + "'");
    }
    w.version = static_cast<std::uint8_t>(version[0] - '0');
    if (w.version == 1 && o.has("--compress")) throw UsageError("--compress needs container version 2 or later");
    w.cls = cls == "32" ? rt::Class::bits32 : rt::Class::bits64;
    w.order = order == "big" ? rt::ByteOrder::big : rt::ByteOrder::little;
    w.strict = o.has("--strict");
    w.compress = compress_level(o);
    // Compression, the slow part of writing at high levels, runs beside the encoding.
    w.background = w.compress != 0 && w.version >= 2;
    w.chunk_bytes = chunk_size(o, w.compress != 0 ? compressed_chunk_size : w.chunk_bytes);
    // `--split none`: no split streams, and none tried (mtf recode).
    if (o.get("--split", "") != "none") w.split = comma_list(o, "--split", "record.field names");
    try {
        rt::split_fields(dtd, w.split);  // a name it does not know is a mistake on the command line
    } catch (const rt::TraceError& e) {
        throw UsageError(e.message);
    }
    return w;
}

Encoding encoding_choice(const Options& o, bool keep_allowed) {
    const std::string e = o.get("--encoding", "auto");
    if (e == "auto") return Encoding::automatic;
    if (e == "initial") return Encoding::initial;
    if (e == "keep" && keep_allowed) return Encoding::keep;
    throw UsageError(std::string("--encoding takes ") + (keep_allowed ? "auto, initial or keep" : "auto or initial") + ", not '" + e + "'");
}

bool live_references(const Options& o, Encoding e) {
    if (!o.has("--no-live")) return true;
    if (e != Encoding::automatic) throw UsageError("--no-live applies to --encoding auto");
    return false;
}

void print(std::string_view text) {
    Output out("-");
    out.write(text);
    out.close();
}

// ---- progress

Progress::Progress(const char* command, std::uint64_t total, const char* unit)
    : command_(command), unit_(unit), total_(total), enabled_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
    if (shown_) std::fputs("\r\033[K", stderr);
}

// After a second of work, at most four updates a second.
void Progress::show(std::uint64_t done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    shown_ = true;
    if (total_ == 0) {  // a stream: the total is not known
        std::fprintf(stderr, "\rmtf: %s: %llu %s", command_, static_cast<unsigned long long>(done), unit_);
    } else {
        std::fprintf(stderr, "\rmtf: %s: %llu of %llu %s (%u%%)", command_, static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(total_), unit_, static_cast<unsigned>(done * 100 / total_));
    }
    std::fflush(stderr);
}

std::uint64_t check_records(const char* command, Trace& trace) {
    rt::TraceReader& reader = trace.reader();
    Progress progress(command, trace.header().record_count);
    rt::GenericRecord scratch;
    std::uint64_t records = 0;
    while (reader.begin_record()) {
        rt::skip_generic(reader, scratch);
        progress.tick(++records);
    }
    return records;
}

// ---- values

std::string format_real(double v) {
    if (std::isnan(v)) return "nan";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string format_json_real(double v) {
    if (std::isnan(v)) return "\"NaN\"";
    if (std::isinf(v)) return v < 0 ? "\"-Infinity\"" : "\"Infinity\"";
    // A point keeps a whole-number float a float for JSON readers that distinguish them.
    std::string s = format_real(v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

std::string format_integer(std::uint64_t v, bool is_signed, unsigned scale, unsigned fewest) {
    std::string out;
    rt::append_fixed(out, v, is_signed, scale, fewest);
    return out;
}

std::string escape_text_body(std::span<const std::byte> bytes) {
    std::string out;
    for (std::byte b : bytes) {
        const auto c = std::to_integer<unsigned char>(b);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c >= 0x20 && c < 0x7f) {
                    out += static_cast<char>(c);
                } else {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\x%02x", c);
                    out += buf;
                }
        }
    }
    return out;
}

std::string escape_text(std::span<const std::byte> bytes) { return "\"" + escape_text_body(bytes) + "\""; }

// Each byte is the code point of the same number (U+0000 to U+00FF), so any bytes round-trip.
std::string escape_json(std::span<const std::byte> bytes) {
    std::string out = "\"";
    for (std::byte b : bytes) {
        const auto c = std::to_integer<unsigned char>(b);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        }
    }
    return out + "\"";
}

std::string json_string(std::string_view s) { return escape_json(rt::as_bytes(s)); }

std::string group_key(const rt::RecordDesc& r, std::uint32_t step) {
    const std::uint32_t count = r.layout[step].index;
    unsigned k = 1;  // this group is the k-th over its count
    for (std::uint32_t i = 0; i < step; ++i) k += r.layout[i].op == rt::LayoutStep::repeat && r.layout[i].index == count;
    const std::string key = std::string(r.fields[count].path) + "*";
    return k == 1 ? key : key + std::to_string(k);
}

std::string section_name(const rt::DtdDesc& dtd, std::uint8_t number) {
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) {
        if (dtd.sections[i].number == number) return dtd.sections[i].name;
    }
    return number == 0 ? "global" : "?";
}

std::string format_table(const std::vector<std::vector<std::string>>& rows, std::string_view align) {
    std::vector<std::size_t> width;
    for (const auto& row : rows) {
        if (width.size() < row.size()) width.resize(row.size());
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const std::string pad(width[i] - row[i].size(), ' ');
            if (i) line += "  ";
            line += i < align.size() && align[i] == 'r' ? pad + row[i] : row[i] + pad;
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    return out;
}

namespace {

// Sends a record's values, which decode_generic gives in layout order, as the layout groups them.
// An integer as the DTD's text form spells it where that is a word rather
// than a number: hex digits (padded and in the case the DTD gives), or the
// character a chars field names.
std::optional<std::string> text_spelling(std::uint64_t v, const rt::TextFieldDesc& t) {
    if (t.format == rt::TextFormat::hex) {
        std::string out;
        rt::append_digits(out, v, 16, t.digits, t.upper);
        return out;
    }
    const std::string_view chars = t.chars;
    if (t.format == rt::TextFormat::chars && v < chars.size()) return std::string(1, chars[v]);
    return std::nullopt;  // decimal (fixed point when scaled), or a value no character stands for
}

struct Emitter {
    const rt::RecordDesc& record;
    const std::vector<rt::GenericValue>& values;
    Sink& sink;
    const rt::TextFieldDesc* text;  // the record's text form, per field, or nullptr
    std::vector<std::uint64_t> last = std::vector<std::uint64_t>(record.field_count);  // counts of repeats
    std::size_t next = 0;

    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        sink.begin_list(group_key(record, step));
        for (std::uint64_t k = 0; k < last[record.layout[step].index]; ++k) {
            sink.begin_element();
            element();
            sink.end_element();
        }
        sink.end_list();
    }

    void field(std::uint32_t) {
        const rt::GenericValue& v = values.at(next++);
        const rt::FieldDesc& d = record.fields[v.field];
        last[v.field] = v.integer;
        switch (d.type) {
            case rt::Type::unsigned_int:
            case rt::Type::signed_int:
                if (d.rules && d.rules->name_count) {
                    // A field with names is a word in every format, named or not.
                    const std::string named = rt::value_name(*d.rules, v.integer);
                    sink.name(d.path, named.empty() ? format_integer(v.integer, d.type == rt::Type::signed_int, d.scale, text ? text[v.field].digits : 0) : named);
                } else if (auto word = text ? text_spelling(v.integer, text[v.field]) : std::nullopt) {
                    sink.name(d.path, *word);
                } else {
                    sink.integer(d.path, v.integer, d, text ? text[v.field].digits : 0);
                }
                break;
            case rt::Type::floating: sink.real(d.path, v.real); break;
            case rt::Type::bytes: sink.bytes(d.path, v.bytes); break;
        }
    }
};

// The top-level keys: the fields and groups of the layout, not what the groups hold.
struct Keys {
    const rt::RecordDesc& record;
    std::vector<std::string> keys;

    template <typename Element>
    void group(std::uint32_t step, Element&&) {
        keys.push_back(group_key(record, step));
    }
    void field(std::uint32_t index) { keys.emplace_back(record.fields[index].path); }
};

// decode_generic gives a metadata record as [record tag, field, property, values...].
void emit_metadata(const rt::DtdDesc& dtd, const ReadRecord& r, Sink& sink) {
    const auto& v = r.record.values;
    const rt::RecordDesc* target = &dtd.records[metadata_target(dtd, r)];
    const rt::FieldDesc& field = target->fields[v[1].integer];
    const auto op = static_cast<rt::MetaOp>(v[2].integer);
    sink.name("record", target->name);
    sink.name("field", field.path);
    sink.name("property", rt::name(op));
    sink.begin_list("value");
    for (std::size_t i = 3; i < v.size(); ++i) sink.number(v[i].integer, rt::metadata_value_signed(field, op, unsigned(i - 3)));
    sink.end_list();
}

}  // namespace

void emit_record(const rt::DtdDesc& dtd, const ReadRecord& r, Sink& sink) {
    const rt::RecordDesc& d = dtd.records[r.record.slot];
    if (d.predefined == rt::Predefined::metadata) return emit_metadata(dtd, r, sink);
    const rt::TextFieldDesc* text = dtd.text_form ? dtd.text_form->records[r.record.slot].fields : nullptr;
    Emitter e{d, r.record.values, sink, dtd.text_form && dtd.text_form->records[r.record.slot].mnemonic ? text : nullptr};
    rt::walk_layout(d, e);
}

std::vector<std::string> record_keys(const rt::RecordDesc& r) {
    if (r.predefined == rt::Predefined::metadata) return {"record", "field", "property", "value"};
    Keys k{r, {}};
    rt::walk_layout(r, k);
    return k.keys;
}

}  // namespace mtf
