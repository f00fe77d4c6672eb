// mtf dump: every record as a line of text, a JSON object, or a CSV row.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include "common.hpp"

namespace mtf {

namespace {

// Text and JSON lines differ only in spelling: keys, separators and scalars.
class LineSink : public Sink {
public:
    explicit LineSink(std::string& out) : out_(out) {}

    void begin_list(const std::string& key) override {
        item(key.c_str());
        open('[', ',');
    }
    void end_list() override { close(']'); }
    void begin_element() override {
        item(nullptr);
        open('{', element_separator());
    }
    void end_element() override { close('}'); }

protected:
    virtual void key(const char* k) = 0;
    virtual char element_separator() const = 0;

    // Starts a value: the separator before it, then its key (none in a list).
    void item(const char* k) {
        if (!levels_.empty()) {
            if (!levels_.back().first) out_ += levels_.back().separator;
            levels_.back().first = false;
        }
        if (k) key(k);
    }
    void open(char bracket, char separator) {
        out_ += bracket;
        levels_.push_back({separator, true});
    }
    void close(char bracket) {
        levels_.pop_back();
        out_ += bracket;
    }

    struct Level {
        char separator;
        bool first;
    };
    std::string& out_;
    std::vector<Level> levels_;
};

// `name key=value ...`; groups as key=[{k=v k=v},{...}]; scaled integers in fixed point.
class TextSink : public LineSink {
public:
    using LineSink::LineSink;
    // A record's fields follow its name, each after a space.
    void start() { levels_.assign(1, {' ', false}); }

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d) override {
        item(k);
        out_ += format_integer(v, d.type == rt::Type::signed_int, d.scale);
    }
    void real(const char* k, double v) override {
        item(k);
        out_ += format_real(v);
    }
    void bytes(const char* k, std::span<const std::byte> v) override {
        item(k);
        out_ += escape_text(v);
    }
    void name(const char* k, std::string_view v) override {
        item(k);
        out_ += v;
    }
    void number(std::uint64_t v, bool is_signed) override {
        item(nullptr);
        out_ += format_integer(v, is_signed, 0);
    }

private:
    void key(const char* k) override {
        out_ += k;
        out_ += '=';
    }
    char element_separator() const override { return ' '; }
};

// JSON values: integers as numbers (fixed point when scaled), bytes as strings of U+0000-U+00FF.
class JsonSink : public LineSink {
public:
    using LineSink::LineSink;
    // Inside an object the caller has opened.
    void start() { levels_.assign(1, {',', true}); }
    // A list with no key, for a CSV cell.
    void start_bare_list() {
        levels_.clear();
        open('[', ',');
    }

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d) override {
        item(k);
        out_ += format_integer(v, d.type == rt::Type::signed_int, d.scale);
    }
    void real(const char* k, double v) override {
        item(k);
        out_ += format_json_real(v);
    }
    void bytes(const char* k, std::span<const std::byte> v) override {
        item(k);
        out_ += escape_json(v);
    }
    void name(const char* k, std::string_view v) override {
        item(k);
        out_ += json_string(v);
    }
    void number(std::uint64_t v, bool is_signed) override {
        item(nullptr);
        out_ += format_integer(v, is_signed, 0);
    }

private:
    void key(const char* k) override {
        out_ += json_string(k);
        out_ += ':';
    }
    char element_separator() const override { return ','; }
};

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// One row: scalars as in text, a list (a repeated group, metadata values) as JSON in one cell.
class CsvSink : public Sink {
public:
    void start() { cells_.clear(); }
    const std::vector<std::string>& cells() const { return cells_; }
    std::string row() const {
        std::string out;
        for (std::size_t i = 0; i < cells_.size(); ++i) out += (i ? "," : "") + csv_cell(cells_[i]);
        return out + "\n";
    }

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d) override {
        if (depth_) return json_.integer(k, v, d);
        cells_.push_back(format_integer(v, d.type == rt::Type::signed_int, d.scale));
    }
    void real(const char* k, double v) override {
        if (depth_) return json_.real(k, v);
        cells_.push_back(format_real(v));
    }
    void bytes(const char* k, std::span<const std::byte> v) override {
        if (depth_) return json_.bytes(k, v);
        cells_.push_back(escape_text_body(v));
    }
    void name(const char* k, std::string_view v) override {
        if (depth_) return json_.name(k, v);
        cells_.emplace_back(v);
    }
    void number(std::uint64_t v, bool is_signed) override { json_.number(v, is_signed); }
    void begin_list(const std::string& key) override {
        if (depth_++) return json_.begin_list(key);
        cell_.clear();
        json_.start_bare_list();
    }
    void end_list() override {
        json_.end_list();
        if (--depth_ == 0) cells_.push_back(cell_);
    }
    void begin_element() override { json_.begin_element(); }
    void end_element() override { json_.end_element(); }

private:
    std::vector<std::string> cells_;
    std::string cell_;
    JsonSink json_{cell_};
    int depth_ = 0;
};

// Which records are shown: by type (--record, --no-meta), by index
// (--range FIRST:END) and at most `limit` of them (--limit).
struct Condition;
struct Selection {
    std::vector<bool> shown;  // per slot
    std::vector<Condition> where;  // --where, all of them
    const rt::DtdDesc* dtd = nullptr;
    std::uint64_t first = 0, end = ~std::uint64_t(0), limit = ~std::uint64_t(0);
    std::uint64_t taken = 0;

    // Whether to show `r`; `more` turns false once no later record can be shown.
    bool take(const ReadRecord& r, bool& more) {
        more = r.index + 1 < end && taken < limit;
        if (!shown[r.record.slot] || r.index < first || r.index >= end || taken >= limit || !matches(r)) return false;
        more = r.index + 1 < end && ++taken < limit;
        return true;
    }
    bool matches(const ReadRecord& r) const;
};

// Passes on the values whose top-level key `fields` holds (all when it is
// empty), a list whole or not at all.
class FieldFilter : public Sink {
public:
    FieldFilter(Sink& to, const std::set<std::string>& fields) : to_(to), fields_(fields) {}

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d) override {
        if (keep(k)) to_.integer(k, v, d);
    }
    void real(const char* k, double v) override {
        if (keep(k)) to_.real(k, v);
    }
    void bytes(const char* k, std::span<const std::byte> v) override {
        if (keep(k)) to_.bytes(k, v);
    }
    void name(const char* k, std::string_view v) override {
        if (keep(k)) to_.name(k, v);
    }
    void number(std::uint64_t v, bool is_signed) override {
        if (!dropping_) to_.number(v, is_signed);
    }
    void begin_list(const std::string& key) override {
        if (depth_++ == 0) dropping_ = !fields_.empty() && !fields_.count(key);
        if (!dropping_) to_.begin_list(key);
    }
    void end_list() override {
        if (!dropping_) to_.end_list();
        if (--depth_ == 0) dropping_ = false;
    }
    void begin_element() override {
        if (!dropping_) to_.begin_element();
    }
    void end_element() override {
        if (!dropping_) to_.end_element();
    }

private:
    bool keep(const char* k) const { return depth_ > 0 ? !dropping_ : fields_.empty() || fields_.count(k) != 0; }

    Sink& to_;
    const std::set<std::string>& fields_;
    int depth_ = 0;
    bool dropping_ = false;
};

// --where FIELD OP VALUE: a record matches when it has the top-level
// integer field FIELD and its value compares so (signed fields as signed).
struct Condition {
    std::string field, op;
    std::vector<std::int32_t> index;   // per slot: the field's index, or -1
    std::vector<std::uint64_t> value;  // per slot: VALUE in the field's stored units

    bool holds(const rt::DtdDesc& dtd, const ReadRecord& r) const {
        const std::int32_t f = index[r.record.slot];
        if (f < 0) return false;
        for (const rt::GenericValue& v : r.record.values) {
            if (v.field != static_cast<std::uint32_t>(f)) continue;
            const bool is_signed = dtd.records[r.record.slot].fields[f].type == rt::Type::signed_int;
            const std::uint64_t want = value[r.record.slot];
            const int c = is_signed ? compare(static_cast<std::int64_t>(v.integer), static_cast<std::int64_t>(want)) : compare(v.integer, want);
            return op == "=" ? c == 0 : op == "!=" ? c != 0 : op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
        }
        return false;
    }
    template <typename T>
    static int compare(T a, T b) { return a < b ? -1 : a > b ? 1 : 0; }
};

// The stored integer VALUE stands for in field `f`: decimal (a fraction up
// to the field's scale), 0x hex, or a character of a chars field.
std::optional<std::uint64_t> stored_value(const std::string& text, const rt::FieldDesc& f, const rt::TextFieldDesc* t) {
    if (t && t->format == rt::TextFormat::chars && text.size() == 1) {
        const std::string_view chars = t->chars;
        if (const std::size_t at = chars.find(text[0]); at != std::string_view::npos) return at;
    }
    std::string digits = text;
    const bool negative = !digits.empty() && digits[0] == '-';
    if (negative) digits.erase(0, 1);
    int base = 10;
    if (digits.starts_with("0x")) {
        digits.erase(0, 2);
        base = 16;
    }
    std::size_t point = digits.find('.');
    if (point != std::string::npos && base == 10) {
        const std::size_t fraction = digits.size() - point - 1;
        if (fraction > f.scale) return std::nullopt;
        digits.erase(point, 1);
        digits.append(f.scale - fraction, '0');
        point = std::string::npos;
    } else if (base == 10) {
        digits.append(f.scale, '0');
    }
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || point != std::string::npos) return std::nullopt;
    return negative ? 0 - v : v;
}

bool Selection::matches(const ReadRecord& r) const {
    return std::all_of(where.begin(), where.end(), [&](const Condition& c) { return c.holds(*dtd, r); });
}

std::vector<Condition> conditions(const Options& o, const rt::DtdDesc& dtd, const std::vector<bool>& shown) {
    std::vector<Condition> out;
    for (const std::string& text : o.all("--where")) {
        const std::size_t at = text.find_first_of("<>!=");
        const std::size_t value_at = text.find_first_not_of("<>!=", at);
        Condition c{text.substr(0, std::min(at, text.size())), at == std::string::npos ? "" : text.substr(at, value_at - at), {}, {}};
        if (c.field.empty() || (c.op != "=" && c.op != "!=" && c.op != "<" && c.op != "<=" && c.op != ">" && c.op != ">=") ||
            value_at == std::string::npos) {
            throw UsageError("--where takes FIELD OP VALUE (OP one of = != < <= > >=), not '" + text + "'");
        }
        const std::string value = text.substr(value_at);
        bool any = false;
        c.index.assign(dtd.record_count, -1);
        c.value.assign(dtd.record_count, 0);
        for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
            const rt::RecordDesc& r = dtd.records[i];
            if (!shown[i] || r.predefined != rt::Predefined::none) continue;
            for (std::uint32_t f = 1; f < r.field_count; ++f) {
                const rt::FieldDesc& d = r.fields[f];
                if (d.path != c.field || (d.type != rt::Type::unsigned_int && d.type != rt::Type::signed_int)) continue;
                const rt::TextFieldDesc* t = dtd.text_form && dtd.text_form->records[i].mnemonic ? &dtd.text_form->records[i].fields[f] : nullptr;
                const auto v = stored_value(value, d, t);
                if (!v) throw UsageError("--where: '" + value + "' is not a value of field '" + c.field + "'");
                c.value[i] = *v;
                c.index[i] = static_cast<std::int32_t>(f);
                any = true;
            }
        }
        if (!any) throw UsageError("--where: no record type shown has an integer field '" + c.field + "'");
        out.push_back(std::move(c));
    }
    return out;
}

struct DumpOptions {
    std::string format, output;
    Selection select;
    rt::OutputOptions files;     // -f, and the trace the output may not be
    std::set<std::string> fields{};  // --fields: the keys shown, or all when empty

    // The keys of record type `r` that are shown.
    std::vector<std::string> keys(const rt::RecordDesc& r) const {
        std::vector<std::string> out;
        for (std::string& k : record_keys(r)) {
            if (fields.empty() || fields.count(k)) out.push_back(std::move(k));
        }
        return out;
    }
};

// --fields NAME[,NAME...]: each must be a key of some record type shown.
std::set<std::string> chosen_fields(const Options& o, const rt::DtdDesc& dtd, const std::vector<bool>& shown) {
    std::set<std::string> fields;
    if (!o.has("--fields")) return fields;
    const std::string list = o.get("--fields", "");
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string name = list.substr(start, comma - start);
        bool found = false;
        for (std::uint32_t i = 0; i < dtd.record_count && !found; ++i) {
            const std::vector<std::string> keys = record_keys(dtd.records[i]);
            found = shown[i] && std::find(keys.begin(), keys.end(), name) != keys.end();
        }
        if (!found) throw UsageError("--fields: no record type shown has a field '" + name + "'");
        fields.insert(name);
        start = comma + 1;
    }
    return fields;
}

// A record count or index for `option`: decimal digits.
std::uint64_t count_of(const std::string& option, const std::string& text) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
        throw UsageError(option + " takes a record index or count (decimal digits), not '" + text + "'");
    }
    return n;
}

// --range FIRST:END (record indices from 0, END excluded; either may be left
// out) and --limit N.
void select_indices(const Options& o, Selection& s) {
    if (o.has("--range")) {
        const std::string range = o.get("--range", "");
        const std::size_t colon = range.find(':');
        if (colon == std::string::npos) throw UsageError("--range takes FIRST:END (record indices, END excluded), not '" + range + "'");
        if (colon > 0) s.first = count_of("--range", range.substr(0, colon));
        if (colon + 1 < range.size()) s.end = count_of("--range", range.substr(colon + 1));
    }
    if (o.has("--limit")) s.limit = count_of("--limit", o.get("--limit", ""));
}

// The record types to show: those given with --record (all without it), less the predefined ones with --no-meta.
std::vector<bool> shown_slots(const rt::DtdDesc& dtd, const Options& o) {
    const std::vector<std::string>& names = o.all("--record");
    std::vector<bool> shown(dtd.record_count, names.empty());
    for (const std::string& name : names) {
        bool found = false;
        for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
            if (name != dtd.records[i].name) continue;
            shown[i] = found = true;  // every section's record of the name
        }
        if (!found) throw UsageError("the DTD '" + std::string(dtd.name) + "' has no record type '" + name + "'");
    }
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        if (o.has("--no-meta") && dtd.records[i].predefined != rt::Predefined::none) shown[i] = false;
    }
    return shown;
}

void dump_lines(Trace& trace, const DumpOptions& d) {
    Output out(d.output, d.files);
    std::string line;
    TextSink text(line);
    JsonSink json(line);
    FieldFilter to_text(text, d.fields), to_json(json, d.fields);
    const bool as_json = d.format == "jsonl";
    Selection select = d.select;
    for_each_record("dump", trace, [&](const ReadRecord& r) {
        bool more = true;
        if (!select.take(r, more)) return more;
        const char* name = trace.dtd().records[r.record.slot].name;
        line.clear();
        if (as_json) {
            line += "{\"record\":" + json_string(name) + ",\"index\":" + std::to_string(r.index) +
                    ",\"section\":" + std::to_string(r.section) + ",\"fields\":{";
            json.start();
            emit_record(trace.dtd(), r, to_json);
            line += "}}\n";
        } else {
            line += name;
            text.start();
            emit_record(trace.dtd(), r, to_text);
            line += '\n';
        }
        out.write(line);
        return more;
    });
    out.close();
}

// Standard output takes one record type; a directory gets DIR/<record>.csv for each.
std::vector<std::unique_ptr<Output>> open_csv(const rt::DtdDesc& dtd, const DumpOptions& d) {
    std::vector<std::unique_ptr<Output>> files(dtd.record_count);
    if (d.output != "-") {
        std::error_code ec;
        std::filesystem::create_directories(d.output, ec);
        if (ec) throw InputError("cannot create the directory '" + d.output + "': " + ec.message());
    }
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        if (!d.select.shown[i]) continue;
        const std::string path = d.output == "-" ? "-" : (std::filesystem::path(d.output) / dtd.records[i].name).string() + ".csv";
        files[i] = std::make_unique<Output>(path, d.files);
        std::string header;
        for (const std::string& key : d.keys(dtd.records[i])) header += (header.empty() ? "" : ",") + csv_cell(key);
        files[i]->write(header + "\n");
    }
    return files;
}

void dump_csv(Trace& trace, const DumpOptions& d) {
    auto files = open_csv(trace.dtd(), d);
    CsvSink csv;
    FieldFilter sink(csv, d.fields);
    Selection select = d.select;
    for_each_record("dump", trace, [&](const ReadRecord& r) {
        bool more = true;
        if (!select.take(r, more)) return more;
        csv.start();
        emit_record(trace.dtd(), r, sink);
        files[r.record.slot]->write(csv.row());
        return more;
    });
    for (auto& f : files) {
        if (f) f->close();
    }
}

// One table for every record type shown, in the order of the trace: the
// columns `index` and `record`, then the union of the types' keys in slot
// order, a cell empty where a type has no such field. A key that is itself
// `index` or `record` (metadata's) is prefixed with its type's name.
void dump_table(Trace& trace, const DumpOptions& d) {
    const rt::DtdDesc& dtd = trace.dtd();
    std::vector<std::string> columns{"index", "record"};
    std::vector<std::vector<std::size_t>> column_of(dtd.record_count);  // per slot, per key
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        if (!d.select.shown[i]) continue;
        for (std::string key : d.keys(dtd.records[i])) {
            if (key == "index" || key == "record") key = std::string(dtd.records[i].name) + "." + key;
            const auto at = std::find(columns.begin(), columns.end(), key);
            column_of[i].push_back(static_cast<std::size_t>(at - columns.begin()));
            if (at == columns.end()) columns.push_back(key);
        }
    }
    Output out(d.output, d.files);
    std::string header;
    for (const std::string& c : columns) header += (header.empty() ? "" : ",") + csv_cell(c);
    out.write(header + "\n");
    CsvSink csv;
    FieldFilter sink(csv, d.fields);
    Selection select = d.select;
    std::vector<std::string> row(columns.size());
    for_each_record("dump", trace, [&](const ReadRecord& r) {
        bool more = true;
        if (!select.take(r, more)) return more;
        csv.start();
        emit_record(dtd, r, sink);
        std::fill(row.begin(), row.end(), std::string());
        row[0] = std::to_string(r.index);
        row[1] = dtd.records[r.record.slot].name;
        const std::vector<std::string>& cells = csv.cells();
        for (std::size_t k = 0; k < cells.size(); ++k) row[column_of[r.record.slot].at(k)] = cells[k];
        std::string line;
        for (std::size_t k = 0; k < row.size(); ++k) line += (k ? "," : "") + csv_cell(row[k]);
        out.write(line + "\n");
        return more;
    });
    out.close();
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(
        args, "dump",
        {{"--format", true}, {"-o", true}, {"--record", true, true}, {"--no-meta", false}, {"--range", true}, {"--limit", true}, {"--fields", true}, {"--where", true, true},
         {"-f", false}, {"--force", false}},
        {"TRACE"});
    const std::string& path = o.positional[0];
    DumpOptions d{o.get("--format", "text"), o.get("-o", "-"), {}, output_options(o, {path})};
    select_indices(o, d.select);
    if (d.format != "text" && d.format != "jsonl" && d.format != "csv") {
        throw UsageError("unknown format '" + d.format + "' (text, jsonl or csv)");
    }
    const std::vector<std::string>& records = o.all("--record");
    // To standard output, one record type gets its own file's columns; any other selection, the one table.
    const bool table = d.format == "csv" && d.output == "-" && std::set(records.begin(), records.end()).size() != 1;
    return on_trace(path, [&] {
        Trace trace(path, o.find("--dtd"));
        d.select.shown = shown_slots(trace.dtd(), o);
        d.fields = chosen_fields(o, trace.dtd(), d.select.shown);
        d.select.where = conditions(o, trace.dtd(), d.select.shown);
        d.select.dtd = &trace.dtd();
        if (table) {
            dump_table(trace, d);
        } else if (d.format == "csv") {
            dump_csv(trace, d);
        } else {
            dump_lines(trace, d);
        }
        return 0;
    });
}

}  // namespace

namespace commands {

extern const Command dump;  // external linkage, for main's table
const Command dump{"dump", "print every record as text, JSON lines or CSV",
                          R"(Usage: mtf dump [OPTIONS] TRACE

Prints the records of TRACE ('-' for standard input), decoded with the DTD
the trace carries.

Options:
  --format text   one line per record: NAME FIELD=VALUE ... (the default)
  --format jsonl  one JSON object per line:
                  {"record":NAME,"index":N,"section":S,"fields":{...}}
  --format csv    to standard output (-o -, the default), one table of
                  every record shown, in trace order: columns index and
                  record, then every field name of the types shown (empty
                  where a type has none); with one --record NAME, that
                  type's fields alone. -o DIR writes one file per record
                  type instead, DIR/RECORD.csv (DIR is created)
  -o OUT          write to OUT instead of standard output ('-')
  -f, --force     replace existing output files
  --record NAME   only records of type NAME; repeat it for several types
  --no-meta       leave out the predefined comment, section and metadata
                  records
  --range FIRST:END
                  only records whose index (from 0, as jsonl's "index") is
                  at least FIRST and below END; either may be left out
                  (--range 1000: or --range :50)
  --limit N       at most N records (of those the options above select);
                  reading stops once no more can be shown
  --where FIELD OP VALUE
                  only records with an integer field FIELD (at the top
                  level) whose value compares so: OP is = != < <= > >=;
                  VALUE is decimal (fixed point for a scaled field), 0x
                  hex, or the character of a chars field ('opcode=W');
                  repeat it for records that meet every condition
  --fields NAME[,NAME...]
                  only these fields (top-level names, as in the CSV header:
                  a repeated group is COUNT*), in each record's own order
  --dtd FILE      read the trace with FILE instead of its embedded DTD; the
                  two must lay out records alike (the trace's fingerprint)
  -h, --help      show this help

--record may be repeated; any other option given twice is a mistake.

A repeated group is a list under its count field's name and a star (n*);
in CSV it is one cell holding the group as JSON. Values are written as the
DTD's text form writes them, in every format: scaled integers in fixed
point (numbers in JSON), hex fields as hex digits and chars fields as their
character (strings in JSON). docs/mtf.md describes every format in full.

Exit status: 0 on success, 1 for an unreadable or malformed trace or an
unwritable output, 2 for a command-line mistake.
)",
                          run};

}  // namespace commands

}  // namespace mtf
