// mtf stats: records per type, per field value ranges and distinct counts,
// and where the bytes of the file go.
#include <bit>
#include <cmath>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "common.hpp"

namespace mtf {

namespace {

// Distinct values are counted exactly up to this many per field, then ">cap".
constexpr std::size_t distinct_cap = 1000000;

struct FieldStats {
    std::uint64_t values = 0, bytes = 0;
    std::uint64_t min = 0, max = 0;  // integers (two's complement if signed); bytes fields: lengths
    double min_real = 0, max_real = 0;
    std::unordered_set<std::uint64_t> distinct;            // integers, and floats by bit pattern
    std::unordered_set<std::string> distinct_bytes;
    bool capped = false;

    std::size_t distinct_count() const { return distinct.size() + distinct_bytes.size(); }

    template <typename Set, typename Value>
    void count_distinct(Set& set, const Value& v) {
        if (set.size() < distinct_cap) {
            set.insert(v);
        } else if (!set.count(v)) {
            capped = true;
        }
    }

    void add(const rt::GenericValue& v, const rt::FieldState* states) {
        const rt::FieldDesc& d = *states[v.field].desc;
        const bool first = values++ == 0;
        bytes += stored_bytes(v, states);
        switch (d.type) {
            case rt::Type::unsigned_int:
            case rt::Type::signed_int: {
                const bool is_signed = d.type == rt::Type::signed_int;
                const auto less = [&](std::uint64_t a, std::uint64_t b) {
                    return is_signed ? static_cast<std::int64_t>(a) < static_cast<std::int64_t>(b) : a < b;
                };
                if (first || less(v.integer, min)) min = v.integer;
                if (first || less(max, v.integer)) max = v.integer;
                count_distinct(distinct, v.integer);
                break;
            }
            case rt::Type::floating:
                if (first || v.real < min_real) min_real = v.real;
                if (first || v.real > max_real) max_real = v.real;
                count_distinct(distinct, std::bit_cast<std::uint64_t>(v.real));
                break;
            case rt::Type::bytes:
                if (first || v.bytes.size() < min) min = v.bytes.size();
                if (first || v.bytes.size() > max) max = v.bytes.size();
                count_distinct(distinct_bytes, std::string(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()));
                break;
        }
    }

    // The field's bytes in the file under its encoding when it was read: in
    // the record, or for sectionStride in the section it strides through.
    // An intern length stores its code, or the escape and the length before
    // a new string: the code it read last says which.
    static std::uint64_t stored_bytes(const rt::GenericValue& v, const rt::FieldState* states) {
        const rt::FieldState& s = states[v.field];
        const auto fresh = [](const rt::FieldState& length) { return length.previous == rt::live_escape(length.width); };
        if (s.kind == rt::Interp::section_stride) return s.restore;
        if (!rt::stores_bytes(s.kind)) return 0;
        if (s.kind == rt::Interp::intern) return fresh(s) ? 2 * s.width : s.width;
        if (s.desc->type != rt::Type::bytes) return s.width;
        const std::int32_t from = s.desc->width_from;
        const bool named = from != rt::no_field && states[from].kind == rt::Interp::intern && !fresh(states[from]);
        return named ? 0 : v.bytes.size();
    }
};

struct RecordStats {
    std::uint64_t count = 0, bytes = 0;  // bytes: in the records themselves
    std::vector<FieldStats> fields;      // by field index
};

struct Stats {
    std::vector<RecordStats> records;            // per slot
    std::vector<std::uint64_t> section_records;  // per section number
};

Stats collect(Trace& trace) {
    const rt::DtdDesc& dtd = trace.dtd();
    Stats st{std::vector<RecordStats>(dtd.record_count), std::vector<std::uint64_t>(256)};
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) st.records[i].fields.resize(dtd.records[i].field_count);
    for_each_record("stats", trace, [&](const ReadRecord& r) {
        RecordStats& rs = st.records[r.record.slot];
        ++rs.count;
        ++st.section_records[static_cast<std::size_t>(r.section)];
        if (dtd.records[r.record.slot].predefined != rt::Predefined::none) {
            rs.bytes += rt::predefined_size(dtd, trace.header().word(), r.record);
            return;
        }
        // Metadata changes only between records, so the states are those the record was read with.
        const rt::FieldState* states = trace.reader().states(r.record.slot);
        rs.bytes += dtd.tag_width;
        for (const rt::GenericValue& v : r.record.values) {
            rs.fields[v.field].add(v, states);
            if (states[v.field].kind != rt::Interp::section_stride) rs.bytes += FieldStats::stored_bytes(v, states);
        }
    });
    return st;
}

std::string per_record(double bytes, std::uint64_t records) {
    if (records == 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", bytes / static_cast<double>(records));
    return buf;
}

// `fewest`: the fraction digits the DTD's text form shows at least (format_integer).
std::string show(const FieldStats& f, const rt::FieldDesc& d, unsigned fewest, bool max) {
    if (f.values == 0) return "-";
    if (d.type == rt::Type::floating) return format_real(max ? f.max_real : f.min_real);
    if (d.type == rt::Type::bytes) return std::to_string(max ? f.max : f.min);
    return format_integer(max ? f.max : f.min, d.type == rt::Type::signed_int, d.scale, fewest);
}

std::string distinct_text(const FieldStats& f) {
    return f.capped ? ">" + std::to_string(distinct_cap) : std::to_string(f.distinct_count());
}

// Per section number: its chunks' bytes in the file, and once decompressed.
struct SectionBytes {
    std::vector<std::uint64_t> stored = std::vector<std::uint64_t>(256), uncompressed = std::vector<std::uint64_t>(256);
    bool compressed = false;  // some chunk is compressed: the two differ

    explicit SectionBytes(const rt::Header& h) {
        for (const rt::Chunk& c : h.chunks) {
            stored[c.section] += c.size;
            uncompressed[c.section] += c.decoded;
            compressed = compressed || c.codec != 0;
        }
    }
    // The share of section `n`'s stored bytes that `bytes` of its uncompressed
    // ones take: themselves, when nothing is compressed.
    double stored_share(std::uint8_t n, std::uint64_t bytes) const {
        if (!compressed || uncompressed[n] == 0) return static_cast<double>(bytes);
        return static_cast<double>(bytes) * static_cast<double>(stored[n]) / static_cast<double>(uncompressed[n]);
    }
};

std::vector<std::uint8_t> section_numbers(const rt::DtdDesc& dtd) {
    std::vector<std::uint8_t> numbers{0};
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) numbers.push_back(dtd.sections[i].number);
    return numbers;
}

// Byte columns count the records' bytes before compression, which are the
// file's own unless chunks are compressed: then each column says which it
// counts, and records get their share of their section's stored bytes.
std::string text_report(const Trace& trace, const Stats& st) {
    const rt::DtdDesc& dtd = trace.dtd();
    const SectionBytes bytes(trace.header());
    const bool packed = bytes.compressed;
    std::vector<std::vector<std::string>> records{{"record", "count", packed ? "uncompressed" : "bytes", packed ? "uncompressed/record" : "bytes/record"}};
    if (packed) records[0].push_back("stored/record");
    std::vector<std::vector<std::string>> fields{{"record", "field", "type", "values", "min", "max", "distinct", packed ? "uncompressed" : "bytes"}};
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const rt::RecordDesc& r = dtd.records[i];
        const RecordStats& rs = st.records[i];
        records.push_back({r.name, std::to_string(rs.count), std::to_string(rs.bytes), per_record(static_cast<double>(rs.bytes), rs.count)});
        if (packed) records.back().push_back(per_record(bytes.stored_share(r.section, rs.bytes), rs.count));
        if (r.predefined != rt::Predefined::none || rs.count == 0) continue;
        for (std::uint32_t f = 1; f < r.field_count; ++f) {
            const FieldStats& fs = rs.fields[f];
            const rt::FieldDesc& d = r.fields[f];
            const unsigned fewest = dtd.text_form && dtd.text_form->records[i].mnemonic ? dtd.text_form->records[i].fields[f].digits : 0;
            fields.push_back({r.name, d.path, std::string(rt::name(d.type)), std::to_string(fs.values), show(fs, d, fewest, false),
                              show(fs, d, fewest, true), distinct_text(fs), std::to_string(fs.bytes)});
        }
    }
    std::vector<std::vector<std::string>> sections{{"section", "name", "records", packed ? "stored" : "bytes"}};
    if (packed) sections[0].push_back("uncompressed");
    sections[0].push_back(packed ? "stored/record" : "bytes/record");
    for (std::uint8_t n : section_numbers(dtd)) {
        sections.push_back({std::to_string(n), section_name(dtd, n), std::to_string(st.section_records[n]), std::to_string(bytes.stored[n])});
        if (packed) sections.back().push_back(std::to_string(bytes.uncompressed[n]));
        sections.back().push_back(per_record(static_cast<double>(bytes.stored[n]), st.section_records[n]));
    }
    return format_table(records, packed ? "lrrrr" : "lrrr") + "\n" + format_table(fields, "lllrrrrr") + "\n" +
           format_table(sections, packed ? "rlrrrr" : "rlrrr");
}

nlohmann::json json_value(const FieldStats& f, const rt::FieldDesc& d, bool max) {
    if (f.values == 0) return nullptr;
    if (d.type == rt::Type::floating) return max ? f.max_real : f.min_real;
    const std::uint64_t v = max ? f.max : f.min;
    if (d.type == rt::Type::signed_int) return static_cast<std::int64_t>(v);
    return v;
}

nlohmann::json json_report(const Trace& trace, const Stats& st) {
    const rt::DtdDesc& dtd = trace.dtd();
    nlohmann::json out{{"records", nlohmann::json::array()}, {"fields", nlohmann::json::array()},
                       {"sections", nlohmann::json::array()}};
    const SectionBytes bytes(trace.header());
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const rt::RecordDesc& r = dtd.records[i];
        const RecordStats& rs = st.records[i];
        out["records"].push_back({{"record", r.name}, {"count", rs.count}, {"bytes", rs.bytes},
                                  {"storedBytes", std::llround(bytes.stored_share(r.section, rs.bytes))}});
        if (r.predefined != rt::Predefined::none || rs.count == 0) continue;
        for (std::uint32_t f = 1; f < r.field_count; ++f) {
            const FieldStats& fs = rs.fields[f];
            const rt::FieldDesc& d = r.fields[f];
            out["fields"].push_back({{"record", r.name}, {"field", d.path}, {"type", std::string(rt::name(d.type))},
                                     {"values", fs.values}, {"min", json_value(fs, d, false)},
                                     {"max", json_value(fs, d, true)}, {"distinct", fs.distinct_count()},
                                     {"distinctExact", !fs.capped}, {"bytes", fs.bytes}});
        }
    }
    for (std::uint8_t n : section_numbers(dtd)) {
        out["sections"].push_back({{"section", n}, {"name", section_name(dtd, n)}, {"records", st.section_records[n]},
                                   {"bytes", bytes.stored[n]}, {"uncompressedBytes", bytes.uncompressed[n]}});
    }
    return out;
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "stats", {{"--json", false}, {"--native", false}, {"--form", true}}, {"TRACE"});
    const std::string& path = o.positional[0];
    return on_trace(path, [&] {
        const auto opened = Trace::open(path, o);
        Trace& trace = *opened;
        const Stats st = collect(trace);
        print(o.has("--json") ? json_report(trace, st).dump(2) + "\n" : text_report(trace, st));
        return 0;
    });
}

}  // namespace

namespace commands {

extern const Command stats;  // external linkage, for main's table
const Command stats{"stats", "count records and measure fields and sections",
                    R"(Usage: mtf stats [OPTIONS] TRACE

Reads TRACE ('-' for standard input) and prints three tables:
  records   every record type: how many, the bytes its records take, and
            bytes per record
  fields    every field of every user-defined record type that occurs:
            how many values (a field of a repeated group has one per
            element), the least and greatest (for a bytes field, its
            length), the number of distinct values (exact up to 1000000,
            then ">1000000"), and the bytes the field takes under the
            encodings in force when each record was read
  sections  every section: records read from it, its bytes in the file, and
            bytes per record

The bytes of records and fields are counted before compression. When some
chunks are compressed (zstd), those columns are headed "uncompressed", and
"stored/record" gives each record type's share of its section's bytes in
the file (shared out in proportion to the uncompressed bytes); the
sections table then shows both, "stored" and "uncompressed".

Options:
  --json      print the tables as one JSON object instead
  --dtd FILE  read the trace with FILE instead of its embedded DTD; the two
              must lay out records alike (the trace's fingerprint)
  --native    TRACE is the format's native binary file, read with the DTD
              --dtd gives (docs/dtd-language.md, section 16); it is made
              into a temporary trace first
  --form NAME with --native: the DTD's native form to read (by default the
              only one, or the one whose magic bytes start the file)
  -h, --help  show this help

Exit status: 0 on success, 1 for an unreadable or malformed trace, 2 for a
command-line mistake.
)",
                    run};

}  // namespace commands

}  // namespace mtf
