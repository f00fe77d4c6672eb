// mtf dump: every record as a line of text, a JSON object, or a CSV row.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include <metatf/analysis/rules.hpp>

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

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d, unsigned fewest) override {
        item(k);
        out_ += format_integer(v, d.type == rt::Type::signed_int, d.scale, fewest);
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

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d, unsigned fewest) override {
        item(k);
        out_ += format_integer(v, d.type == rt::Type::signed_int, d.scale, fewest);
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

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d, unsigned fewest) override {
        if (depth_) return json_.integer(k, v, d, fewest);
        cells_.push_back(format_integer(v, d.type == rt::Type::signed_int, d.scale, fewest));
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

// The keys of the elements of the top-level group `key` (as "n*") of
// record type `r`: the fields and groups directly inside it. None when `r`
// has no such group.
std::optional<std::vector<std::string>> element_keys(const rt::RecordDesc& r, const std::string& key) {
    int depth = 0;
    std::optional<std::vector<std::string>> out;
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        const rt::LayoutStep& s = r.layout[i];
        if (s.op == rt::LayoutStep::end) {
            if (--depth == 0 && out) return out;
            continue;
        }
        if (depth == 1 && out) out->push_back(s.op == rt::LayoutStep::field ? std::string(r.fields[s.index].path) : group_key(r, i));
        if (s.op == rt::LayoutStep::repeat && depth++ == 0 && group_key(r, i) == key) out.emplace();
    }
    return out;
}

// The elements of one top-level group as rows, each as CsvSink gives a
// record's: scalars as cells, a group nested in an element as JSON.
class ElementRows : public Sink {
public:
    explicit ElementRows(const std::string& key) : key_(key) {}
    void start() { rows_.clear(); }
    const std::vector<std::vector<std::string>>& rows() const { return rows_; }

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d, unsigned fewest) override {
        if (inside()) csv_.integer(k, v, d, fewest);
    }
    void real(const char* k, double v) override {
        if (inside()) csv_.real(k, v);
    }
    void bytes(const char* k, std::span<const std::byte> v) override {
        if (inside()) csv_.bytes(k, v);
    }
    void name(const char* k, std::string_view v) override {
        if (inside()) csv_.name(k, v);
    }
    void number(std::uint64_t v, bool is_signed) override {
        if (inside()) csv_.number(v, is_signed);
    }
    void begin_list(const std::string& key) override {
        if (depth_ == 0) chosen_ = key == key_;
        if (inside()) csv_.begin_list(key);
        ++depth_;
    }
    void end_list() override {
        --depth_;
        if (inside()) csv_.end_list();
    }
    void begin_element() override {
        if (chosen_ && depth_ == 1) return csv_.start();
        if (inside()) csv_.begin_element();
    }
    void end_element() override {
        if (chosen_ && depth_ == 1) return rows_.push_back(csv_.cells());
        if (inside()) csv_.end_element();
    }

private:
    bool inside() const { return chosen_ && depth_ >= 1; }

    const std::string& key_;
    CsvSink csv_;
    std::vector<std::vector<std::string>> rows_;
    int depth_ = 0;
    bool chosen_ = false;
};

// Which records are shown: by type (--record, --no-meta), by index
// (--range FIRST:END) and at most `limit` of them (--limit).
struct Condition;
struct Selection {
    std::vector<bool> shown;  // per slot
    std::vector<Condition> where;  // --where, all of them
    std::uint64_t first = 0, end = ~std::uint64_t(0), limit = ~std::uint64_t(0);
    std::uint64_t taken = 0;

    // Whether to show `r`; `more` turns false once no later record can be shown.
    bool take(const rt::DtdDesc& dtd, const ReadRecord& r, bool& more) {
        more = r.index + 1 < end && taken < limit;
        if (!shown[r.record.slot] || r.index < first || r.index >= end || taken >= limit || !matches(dtd, r)) return false;
        more = r.index + 1 < end && ++taken < limit;
        return true;
    }
    bool matches(const rt::DtdDesc& dtd, const ReadRecord& r) const;
};

// Passes on the values whose top-level key `fields` holds (all when it is
// empty), a list whole or not at all.
class FieldFilter : public Sink {
public:
    FieldFilter(Sink& to, const std::set<std::string>& fields) : to_(to), fields_(fields) {}

    void integer(const char* k, std::uint64_t v, const rt::FieldDesc& d, unsigned fewest) override {
        if (keep(k)) to_.integer(k, v, d, fewest);
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
// integer or bytes field FIELD and its value compares so (signed fields as
// signed, bytes byte by byte with VALUE's own bytes).
struct Condition {
    std::string field, op, text;       // text: VALUE as given
    std::vector<std::int32_t> index;   // per slot: the field's index, or -1
    std::vector<std::uint64_t> value;  // per slot: VALUE in the field's stored units (integers)

    bool holds(const rt::DtdDesc& dtd, const ReadRecord& r) const {
        const std::int32_t f = index[r.record.slot];
        if (f < 0) return false;
        for (const rt::GenericValue& v : r.record.values) {
            if (v.field != static_cast<std::uint32_t>(f)) continue;
            const rt::Type type = dtd.records[r.record.slot].fields[f].type;
            const std::uint64_t want = value[r.record.slot];
            const int c = type == rt::Type::bytes ? compare(std::string_view(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()),
                                                            std::string_view(text))
                          : type == rt::Type::signed_int ? compare(static_cast<std::int64_t>(v.integer), static_cast<std::int64_t>(want))
                                                         : compare(v.integer, want);
            return op == "=" ? c == 0 : op == "!=" ? c != 0 : op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
        }
        return false;
    }
    template <typename T>
    static int compare(T a, T b) { return a < b ? -1 : a > b ? 1 : 0; }
};

// The stored integer VALUE stands for in field `f`: decimal (a fraction up
// to the field's scale), 0x hex, a character of a chars field, or a name
// the field's enumeration or flags give.
std::optional<std::uint64_t> stored_value(const std::string& text, const rt::FieldDesc& f, const rt::TextFieldDesc* t) {
    if (f.rules) {
        if (auto named = rt::named_value(*f.rules, text)) return named;
    }
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

bool Selection::matches(const rt::DtdDesc& dtd, const ReadRecord& r) const {
    return std::all_of(where.begin(), where.end(), [&](const Condition& c) { return c.holds(dtd, r); });
}

// With several traces, a name an option gives need only be in one of them:
// each trace's options are resolved leniently, noting the names found, and
// the names no trace has are refused once all are open.
struct Found {
    std::set<std::string> records, fields, where, groups;
};

std::vector<Condition> conditions(const Options& o, const rt::DtdDesc& dtd, const std::vector<bool>& shown, Found* found) {
    std::vector<Condition> out;
    for (const std::string& text : o.all("--where")) {
        const std::size_t at = text.find_first_of("<>!=");
        const std::size_t value_at = text.find_first_not_of("<>!=", at);
        Condition c{text.substr(0, std::min(at, text.size())), at == std::string::npos ? "" : text.substr(at, value_at - at), {}, {}, {}};
        if (c.field.empty() || (c.op != "=" && c.op != "!=" && c.op != "<" && c.op != "<=" && c.op != ">" && c.op != ">=") ||
            value_at == std::string::npos) {
            throw UsageError("--where takes FIELD OP VALUE (OP one of = != < <= > >=), not '" + text + "'");
        }
        const std::string value = c.text = text.substr(value_at);
        bool any = false;
        c.index.assign(dtd.record_count, -1);
        c.value.assign(dtd.record_count, 0);
        for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
            const rt::RecordDesc& r = dtd.records[i];
            if (!shown[i] || r.predefined != rt::Predefined::none) continue;
            for (std::uint32_t f = 1; f < r.field_count; ++f) {
                const rt::FieldDesc& d = r.fields[f];
                if (d.path != c.field || d.type == rt::Type::floating) continue;
                c.index[i] = static_cast<std::int32_t>(f);
                any = true;
                if (d.type == rt::Type::bytes) continue;  // compared as VALUE's bytes
                const rt::TextFieldDesc* t = dtd.text_form && dtd.text_form->records[i].mnemonic ? &dtd.text_form->records[i].fields[f] : nullptr;
                const auto v = stored_value(value, d, t);
                if (!v) throw UsageError("--where: '" + value + "' is not a value of field '" + c.field + "'");
                c.value[i] = *v;
            }
        }
        if (any && found) found->where.insert(c.field);
        if (!any && !found) throw UsageError("--where: no record type shown has an integer or bytes field '" + c.field + "'");
        out.push_back(std::move(c));
    }
    return out;
}

struct DumpOptions {
    std::string format, output;
    Selection select;
    rt::OutputOptions files;     // -f, and the trace the output may not be
    std::set<std::string> fields{};  // --fields: the keys shown, or all when empty
    std::string group{};             // --group: the key of the group whose elements are the rows, or ""

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
std::set<std::string> chosen_fields(const Options& o, const rt::DtdDesc& dtd, const std::vector<bool>& shown, Found* found) {
    std::set<std::string> fields;
    for (const std::string& name : comma_list(o, "--fields", "field names")) {
        bool here = false;
        for (std::uint32_t i = 0; i < dtd.record_count && !here; ++i) {
            const std::vector<std::string> keys = record_keys(dtd.records[i]);
            here = shown[i] && std::find(keys.begin(), keys.end(), name) != keys.end();
        }
        if (here && found) found->fields.insert(name);
        if (!here && !found) throw UsageError("--fields: no record type shown has a field '" + name + "'");
        fields.insert(name);
    }
    return fields;
}

// A record count or index for `option`.
std::uint64_t count_of(const std::string& option, const std::string& text) {
    return decimal_option(option, text, "a record index or count");
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

// The record types to show: those given with --record, or without it every
// type but the predefined ones (comment, section, metadata), which --meta adds.
std::vector<bool> shown_slots(const rt::DtdDesc& dtd, const Options& o, Found* found) {
    const std::vector<std::string>& names = o.all("--record");
    std::vector<bool> shown(dtd.record_count, false);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        shown[i] = names.empty() && (o.has("--meta") || dtd.records[i].predefined == rt::Predefined::none);
    }
    for (const std::string& name : names) {
        bool here = false;
        for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
            if (name != dtd.records[i].name) continue;
            shown[i] = here = true;  // every section's record of the name
        }
        if (here && found) found->records.insert(name);
        if (!here && !found) throw UsageError("the DTD '" + std::string(dtd.name) + "' has no record type '" + name + "'");
    }
    return shown;
}

// `label`: the trace's name, shown with each record when several traces are dumped; else "".
void dump_lines(Trace& trace, const DumpOptions& d, Output& out, const std::string& label) {
    std::string line;
    TextSink text(line);
    JsonSink json(line);
    FieldFilter to_text(text, d.fields), to_json(json, d.fields);
    const bool as_json = d.format == "jsonl";
    Selection select = d.select;
    for_each_record("dump", trace, [&](const ReadRecord& r) {
        bool more = true;
        if (!select.take(trace.dtd(), r, more)) return more;
        const char* name = trace.dtd().records[r.record.slot].name;
        line.clear();
        if (as_json) {
            line += "{";
            if (!label.empty()) line += "\"trace\":" + json_string(label) + ",";
            line += "\"record\":" + json_string(name) + ",\"index\":" + std::to_string(r.index) +
                    ",\"section\":" + std::to_string(r.section) + ",\"fields\":{";
            json.start();
            emit_record(trace.dtd(), r, to_json);
            line += "}}\n";
        } else {
            if (!label.empty()) line += label + ": ";
            line += name;
            text.start();
            emit_record(trace.dtd(), r, to_text);
            line += '\n';
        }
        out.write(line);
        return more;
    });
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
        if (!select.take(trace.dtd(), r, more)) return more;
        csv.start();
        emit_record(trace.dtd(), r, sink);
        files[r.record.slot]->write(csv.row());
        return more;
    });
    for (auto& f : files) {
        if (f) f->close();
    }
}

// A trace to dump, with the options resolved against its DTD.
struct Input {
    std::string path;
    std::unique_ptr<Trace> trace;
    DumpOptions options;
};

// One table for every record type shown, in the order of the traces: the
// columns `trace` (with several traces), `index` and `record`, then the union
// of the types' keys in the order first met, a cell empty where a type has no
// such field. A key that is itself a column's name (metadata's `record`) is
// prefixed with its type's name. With --group, a row per element of that
// group instead: after `record`, the column `element` (from 0) and the keys of
// the elements.
class Table {
public:
    Table(const std::vector<Input>& inputs, const std::string& group, Output& out)
        : out_(out), group_(group), several_(inputs.size() > 1), rows_(group) {
        if (several_) columns_.push_back("trace");
        columns_.insert(columns_.end(), {"index", "record"});
        if (!group.empty()) columns_.push_back("element");
        fixed_ = columns_.size();
        for (const Input& in : inputs) add_columns(in);
        write(columns_);
    }

    void dump(const Input& in, std::size_t which) {
        const rt::DtdDesc& dtd = in.trace->dtd();
        CsvSink csv;
        FieldFilter sink(csv, in.options.fields);
        Selection select = in.options.select;
        std::vector<std::string> row(columns_.size());
        for_each_record("dump", *in.trace, [&](const ReadRecord& r) {
            bool more = true;
            if (!select.take(dtd, r, more)) return more;
            std::fill(row.begin(), row.end(), std::string());
            std::size_t at = 0;
            if (several_) row[at++] = in.path;
            row[at++] = std::to_string(r.index);
            row[at++] = dtd.records[r.record.slot].name;
            const std::vector<std::size_t>& column_of = column_of_[which][r.record.slot];
            if (group_.empty()) {
                csv.start();
                emit_record(dtd, r, sink);
                place(row, csv.cells(), column_of);
                write(row);
                return more;
            }
            rows_.start();
            emit_record(dtd, r, rows_);
            for (std::size_t e = 0; e < rows_.rows().size(); ++e) {
                row[at] = std::to_string(e);
                std::fill(row.begin() + static_cast<std::ptrdiff_t>(fixed_), row.end(), std::string());
                place(row, rows_.rows()[e], column_of);
                write(row);
            }
            return more;
        });
    }

private:
    void add_columns(const Input& in) {
        const rt::DtdDesc& dtd = in.trace->dtd();
        auto& column_of = column_of_.emplace_back(dtd.record_count);  // per slot, per key
        for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
            if (!in.options.select.shown[i]) continue;
            const auto keys = group_.empty() ? in.options.keys(dtd.records[i]) : element_keys(dtd.records[i], group_).value_or(std::vector<std::string>{});
            for (std::string key : keys) {
                if (std::find(columns_.begin(), columns_.begin() + static_cast<std::ptrdiff_t>(fixed_), key) != columns_.begin() + static_cast<std::ptrdiff_t>(fixed_)) {
                    key = std::string(dtd.records[i].name) + "." + key;
                }
                const auto at = std::find(columns_.begin(), columns_.end(), key);
                column_of[i].push_back(static_cast<std::size_t>(at - columns_.begin()));
                if (at == columns_.end()) columns_.push_back(key);
            }
        }
    }

    static void place(std::vector<std::string>& row, const std::vector<std::string>& cells, const std::vector<std::size_t>& column_of) {
        for (std::size_t k = 0; k < cells.size(); ++k) row[column_of.at(k)] = cells[k];
    }

    void write(const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t k = 0; k < row.size(); ++k) line += (k ? "," : "") + csv_cell(row[k]);
        out_.write(line + "\n");
    }

    Output& out_;
    const std::string& group_;
    bool several_;
    ElementRows rows_;
    std::vector<std::string> columns_;
    std::size_t fixed_ = 0;  // the columns before the fields
    std::vector<std::vector<std::vector<std::size_t>>> column_of_;  // per input, per slot, per key
};

// The options that depend on a trace's DTD, resolved against it (leniently
// when `found` is given: see Found).
DumpOptions for_trace(const DumpOptions& base, const Options& o, const Trace& trace, Found* found) {
    DumpOptions d = base;
    d.select.shown = shown_slots(trace.dtd(), o, found);
    d.fields = chosen_fields(o, trace.dtd(), d.select.shown, found);
    d.select.where = conditions(o, trace.dtd(), d.select.shown, found);
    if (!d.group.empty()) {
        bool any = false;
        for (std::uint32_t i = 0; i < trace.dtd().record_count; ++i) {
            if (!d.select.shown[i]) continue;
            if (element_keys(trace.dtd().records[i], d.group)) {
                any = true;
            } else {
                d.select.shown[i] = false;  // a type without the group has no rows
            }
        }
        if (any && found) found->groups.insert(d.group);
        if (!any && !found) throw UsageError("--group: no record type shown has a repeated group '" + d.group + "'");
    }
    return d;
}

// The names given to options that no trace has.
void refuse_unfound(const Options& o, const DumpOptions& d, const Found& found) {
    for (const std::string& name : o.all("--record")) {
        if (!found.records.count(name)) throw UsageError("no trace's DTD has a record type '" + name + "'");
    }
    for (const std::string& name : d.fields) {
        if (!found.fields.count(name)) throw UsageError("--fields: no record type shown has a field '" + name + "'");
    }
    for (const Condition& c : d.select.where) {
        if (!found.where.count(c.field)) throw UsageError("--where: no record type shown has an integer or bytes field '" + c.field + "'");
    }
    if (!d.group.empty() && !found.groups.count(d.group)) {
        throw UsageError("--group: no record type shown has a repeated group '" + d.group + "'");
    }
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(
        args, "dump",
        {{"--format", true}, {"-o", true}, {"--record", true, true}, {"--meta", false}, {"--no-meta", false}, {"--range", true}, {"--limit", true}, {"--fields", true}, {"--where", true, true},
         {"--group", true}, {"--native", false}, {"--form", true}, {"-f", false}, {"--force", false}},
        {"TRACE..."});
    const std::vector<std::string>& paths = o.positional;
    DumpOptions d{o.get("--format", "text"), o.get("-o", "-"), {}, output_options(o, paths)};
    select_indices(o, d.select);
    if (o.has("--meta") && o.has("--no-meta")) throw UsageError("--meta and --no-meta say the opposite");
    if (d.format != "text" && d.format != "jsonl" && d.format != "csv") {
        throw UsageError("unknown format '" + d.format + "' (text, jsonl or csv)");
    }
    d.group = o.get("--group", "");
    if (o.has("--group") && (d.format != "csv" || d.output != "-")) throw UsageError("--group takes --format csv, to standard output");
    if (o.has("--group") && o.has("--fields")) throw UsageError("--group shows a group's fields; it does not go with --fields");
    if (o.has("--group") && d.group.find('*') == std::string::npos) d.group += "*";
    if (std::count(paths.begin(), paths.end(), "-") > 1) throw UsageError("standard input ('-') can be read only once");
    const bool several = paths.size() > 1;
    const std::vector<std::string>& records = o.all("--record");
    // To standard output, one record type gets its own file's columns; any other selection, the one table.
    const bool table = d.format == "csv" && d.output == "-" &&
                       (several || !d.group.empty() || std::set(records.begin(), records.end()).size() != 1);
    if (d.format == "csv" && !table) {
        if (several) throw UsageError("several traces go to one CSV table on standard output, not to files in -o " + d.output);
        return on_trace(paths[0], [&] {
            const auto trace = Trace::open(paths[0], o);
            dump_csv(*trace, for_trace(d, o, *trace, nullptr));
            return 0;
        });
    }
    // Every trace is opened first: the CSV header names every trace's columns,
    // and a name an option gives must be in one of the traces.
    std::vector<Input> inputs;
    Found found;
    for (const std::string& path : paths) {
        on_trace(path, [&] {
            auto trace = Trace::open(path, o);
            DumpOptions options = for_trace(d, o, *trace, several ? &found : nullptr);
            inputs.push_back({path, std::move(trace), std::move(options)});
            return 0;
        });
    }
    if (several) refuse_unfound(o, inputs.front().options, found);
    Output out(d.output, d.files);
    if (table) {
        Table t(inputs, d.group, out);
        for (std::size_t i = 0; i < inputs.size(); ++i) on_trace(inputs[i].path, [&] { return t.dump(inputs[i], i), 0; });
    } else {
        for (const Input& in : inputs) on_trace(in.path, [&] { return dump_lines(*in.trace, in.options, out, several ? in.path : ""), 0; });
    }
    out.close();
    return 0;
}

}  // namespace

namespace commands {

extern const Command dump;  // external linkage, for main's table
const Command dump{"dump", "print the records as text, JSON lines or CSV (the predefined ones with --meta)",
                          R"(Usage: mtf dump [OPTIONS] TRACE...

Prints the records of each TRACE ('-' for standard input), decoded with the
DTD the trace carries: the records of the trace's own types, and with
--meta the predefined comment, section and metadata records that shape the
file (indices count every record, shown or not). With several traces, each record says which trace it
is from: text lines start with "TRACE: ", JSON objects have "trace":TRACE
first, and the CSV table (the one form CSV takes then) has a first column
trace. Indices, --range and --limit count within each trace.

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
                  (the predefined comment, section and metadata too)
  --meta          show the predefined comment, section and metadata
                  records as well, which are left out by default
  --no-meta       leave them out (the default; kept for old scripts)
  --range FIRST:END
                  only records whose index (from 0, as jsonl's "index") is
                  at least FIRST and below END; either may be left out
                  (--range 1000: or --range :50)
  --limit N       at most N records: N of those shown (the options above
                  select them); reading stops once no more can be shown
  --where FIELD OP VALUE
                  only records with an integer or bytes field FIELD (at
                  the top level) whose value compares so: OP is = != <
                  <= > >=; a bytes field (a string) compares byte by
                  byte with VALUE ('hostname=prxy'); for an integer,
                  VALUE is decimal (fixed point for a scaled field), 0x
                  hex, the character of a chars field ('opcode=W'), a
                  name the field's enum gives ('systemType=cm5'), or
                  flags as dump shows them ('operationType=write|asynchronous'),
                  or parts ('fileDescBits=fileDesc:5,memStrideIndex:1'),
                  which compare as the value they make;
                  repeat it for records that meet every condition
  --fields NAME[,NAME...]
                  only these fields (top-level names, as in the CSV header:
                  a repeated group is COUNT*), in each record's own order
  --dtd FILE      read the trace with FILE instead of its embedded DTD; the
                  two must lay out records alike (the trace's fingerprint)
  --native        TRACE is the format's native binary file, read with the
                  DTD --dtd gives (docs/dtd-language.md, section 16)
  --form NAME     with --native: the DTD's native form to read (by default
                  the only one, or the one whose magic bytes start the file)
  -h, --help      show this help

--record may be repeated; any other option given twice is a mistake.

A repeated group is a list under its count field's name and a star (n*);
in CSV it is one cell holding the group as JSON. Values are written as the
DTD's text form writes them, in every format: scaled integers in fixed
point (numbers in JSON), hex fields as hex digits and chars fields as their
character (strings in JSON). A value the field's enum names is shown as
its name, one of a flag set as its flags' names joined by '|', and one
with parts ('bits') as each part's name:value joined by ','; such fields
are strings in JSON, an enum value with no name too ("9").
docs/mtf.md describes every format in full.

Exit status: 0 on success, 1 for an unreadable or malformed trace or an
unwritable output, 2 for a command-line mistake.
)",
                          run};

}  // namespace commands

}  // namespace mtf
