// `mtf dump --format jsonl`, which decodes with tables built at run time from
// the DTD a trace carries, must give exactly the records the generated reader
// reads: random traces of every shipped DTD and of the feature and paper-count
// fixtures, compared record by record, field by field. The column reader of
// the Python module (rt::read_columns) must agree with record-by-record
// decoding on the same traces.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>

#include <charisma.hpp>
#include <features.hpp>
#include <hatf10.hpp>
#include <laplace.hpp>
#include <msr.hpp>
#include <paper-count.hpp>
#include <ptf.hpp>
#include <spc.hpp>
#include <nlohmann/json.hpp>

#include "../address_sanitizer.hpp"
#include "columns_read.hpp"
#include "random_trace.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;
using nlohmann::json;

namespace {

std::string temp_path(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / "metatf-mtf";
    fs::create_directories(dir);
    fs::remove(dir / name);  // writers do not replace a file unless told to
    return (dir / name).string();
}

// mtf's JSON strings: byte b is code point U+00bb, which a JSON parser gives as UTF-8.
std::string latin1_to_utf8(std::span<const std::byte> bytes) {
    std::string out;
    for (std::byte b : bytes) {
        const auto c = std::to_integer<unsigned char>(b);
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else {
            out += static_cast<char>(0xc0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3f));
        }
    }
    return out;
}

// The names a field's enum, flags or parts give `v`, worked out on their
// own: an enum's one name; the flags set, in the DTD's order, then any other
// bits in hex; each part as name:value, bit by bit, then any other bits.
std::optional<std::string> expected_name(std::uint64_t v, const rt::FieldDesc& f) {
    if (!f.rules || f.rules->name_count == 0) return std::nullopt;
    const std::span<const rt::NamedValue> names(f.rules->names, f.rules->name_count);
    if (f.rules->naming == rt::Naming::parts) {
        std::string out;
        std::uint64_t left = v;
        for (const rt::NamedValue& n : names) {
            std::uint64_t part = 0, weight = 1;
            for (unsigned bit = 0; bit < 64; ++bit) {
                if (!(n.value >> bit & 1)) continue;
                if (v >> bit & 1) part += weight;
                weight <<= 1;
                left &= ~(std::uint64_t(1) << bit);
            }
            out += (out.empty() ? "" : ",") + std::string(n.name) + ":" + std::to_string(part);
        }
        if (left) {
            char buf[24];
            std::snprintf(buf, sizeof buf, ",0x%llx", static_cast<unsigned long long>(left));
            out += buf;
        }
        return out;
    }
    if (f.rules->naming == rt::Naming::values) {
        for (const rt::NamedValue& n : names) {
            if (n.value == v) return n.name;
        }
        return std::nullopt;
    }
    if (v == 0) return "0";
    std::string out;
    std::uint64_t left = v;
    for (const rt::NamedValue& n : names) {
        if ((v & n.value) != n.value) continue;
        out += (out.empty() ? "" : "|") + std::string(n.name);
        left &= ~n.value;
    }
    if (left) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(left));
        out += (out.empty() ? "" : "|") + std::string(buf);
    }
    return out;
}

// An integer as mtf dump should write it in JSON, worked out here on its
// own: its name where the field's enum or flags give one (a string of its
// number where they do not), a string where the DTD's text form spells it as
// hex digits or a character, a fixed-point number where it has a scale,
// else the integer.
json expected_integer(std::uint64_t magnitude, bool negative, const rt::FieldDesc& f, const rt::TextFieldDesc* text) {
    std::string digits = std::to_string(magnitude);
    if (f.scale != 0) {
        if (digits.size() <= f.scale) digits.insert(0, f.scale + 1 - digits.size(), '0');
        digits.insert(digits.size() - f.scale, ".");
    }
    digits.insert(0, negative ? "-" : "");
    if (f.rules && f.rules->name_count) return expected_name(negative ? 0 - magnitude : magnitude, f).value_or(digits);
    if (text && text->format == rt::TextFormat::hex) {
        char buf[80];
        std::snprintf(buf, sizeof buf, text->upper ? "%0*llX" : "%0*llx", int(text->digits), static_cast<unsigned long long>(magnitude));
        return buf;
    }
    if (text && text->format == rt::TextFormat::chars && magnitude < std::strlen(text->chars)) return std::string(1, text->chars[magnitude]);
    if (f.scale == 0) return negative ? json(-static_cast<std::int64_t>(magnitude)) : json(magnitude);
    return json::parse(digits);
}

// Builds the JSON of a generated record struct through visit_fields().
class ToJson {
public:
    ToJson(const rt::RecordDesc& r, const rt::TextFieldDesc* text, json& fields) : record_(r), text_(text), stack_{&fields} {}

    void field(std::uint32_t i, std::uint64_t v) { put(i, expected_integer(v, false, record_.fields[i], text_ ? &text_[i] : nullptr)); }
    void field(std::uint32_t i, std::int64_t v) {
        const std::uint64_t magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
        put(i, expected_integer(magnitude, v < 0, record_.fields[i], text_ ? &text_[i] : nullptr));
    }
    void field(std::uint32_t i, double v) { put(i, v); }
    void field(std::uint32_t i, std::span<const std::byte> v) { put(i, latin1_to_utf8(v)); }
    template <typename Vector, typename Body>
    void repeat(std::uint32_t count, Vector& elements, Body&& body) {
        // The k-th group over one count is "n*k" from the second on (docs/mtf.md).
        json& object = *stack_.back();
        const std::string key = std::string(record_.fields[count].path) + "*";
        int k = 1;
        while (object.contains(k == 1 ? key : key + std::to_string(k))) ++k;
        json& list = object[k == 1 ? key : key + std::to_string(k)] = json::array();
        for (auto& e : elements) {
            stack_.push_back(&list.emplace_back(json::object()));
            body(e);
            stack_.pop_back();
        }
    }

private:
    void put(std::uint32_t i, json v) { (*stack_.back())[record_.fields[i].path] = std::move(v); }
    const rt::RecordDesc& record_;
    const rt::TextFieldDesc* text_;  // the record's text form, or nullptr
    std::vector<json*> stack_;
};

template <typename Comment, typename Section, typename Metadata>
struct Expect {
    const rt::DtdDesc& dtd;

    json fields(const Comment& c) const {
        return {{"length", c.text.size()}, {"data", latin1_to_utf8(rt::as_bytes(c.text))}};
    }
    json fields(const Section& s) const { return {{"number", s.number}}; }
    json fields(const Metadata& m) const {
        const rt::RecordDesc& r = dtd.records[static_cast<std::uint32_t>(m.record)];
        const rt::FieldDesc& f = r.fields[m.field];
        const bool signed_first = f.type == rt::Type::signed_int && m.op != rt::MetaOp::width &&
                                  m.op != rt::MetaOp::section_offset && m.op != rt::MetaOp::section_stride && m.op != rt::MetaOp::split &&
                                  m.op != rt::MetaOp::live && m.op != rt::MetaOp::feed && m.op != rt::MetaOp::unit &&
                                  m.op != rt::MetaOp::predict;
        json values = json::array();
        if (rt::metadata_value_count(m.op) > 0) values.push_back(signed_first ? json(static_cast<std::int64_t>(m.a)) : json(m.a));
        if (rt::metadata_value_count(m.op) > 1) values.push_back(static_cast<std::int64_t>(m.b));
        return {{"record", r.name}, {"field", f.path}, {"property", mtf_property(m.op)}, {"value", values}};
    }
    template <typename T>
    json fields(const T& record) const {
        json out = json::object();
        const auto slot = static_cast<std::uint32_t>(T::type);
        const bool text = dtd.text_form && dtd.text_form->records[slot].mnemonic;
        ToJson v(dtd.records[slot], text ? dtd.text_form->records[slot].fields : nullptr, out);
        visit_fields(const_cast<T&>(record), v);
        return out;
    }

    static const char* mtf_property(rt::MetaOp op) {
        static const char* const names[] = {"width",         "none",   "baseOffset", "delta",
                                            "default", "sectionOffset", "stride", "sectionStride",
                                            "live",    "feed",   "unit",       "predict", "intern", "split"};
        return names[static_cast<int>(op)];
    }
};

// Reads `path` with the generated reader into the JSON lines mtf should print.
template <typename Reader, typename Comment, typename Section, typename Metadata>
std::vector<json> expected_lines(const rt::DtdDesc& dtd, const std::string& path) {
    Reader r(path);
    Expect<Comment, Section, Metadata> expect{dtd};
    std::vector<json> out;
    int section = 0;  // a record is read from the section the last section record started
    while (r.next()) {
        r.dispatch([&](const auto& record) {
            const std::uint32_t slot = static_cast<std::uint32_t>(r.type());
            out.push_back({{"record", dtd.records[slot].name}, {"index", out.size()}, {"section", section},
                           {"fields", expect.fields(record)}});
            if constexpr (std::is_same_v<std::decay_t<decltype(record)>, Section>) section = record.number;
        });
    }
    return out;
}

std::vector<json> mtf_lines(const std::string& path) {
    const std::string out = path + ".jsonl";
    fs::remove(out);
    const std::string command = std::string("\"") + MTF_PATH + "\" dump --meta --format jsonl -o \"" + out + "\" \"" + path + "\"";
    REQUIRE(std::system(command.c_str()) == 0);
    std::ifstream in(out);
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
}

template <typename RoundTripType, typename Reader, typename Comment, typename Section, typename Metadata>
void agree(const rt::DtdDesc& dtd, const std::string& name) {
    std::uint64_t seed = 100, fast = 0, halves_fast = 0;
    for (rt::Class cls : {rt::Class::bits64, rt::Class::bits32}) {
        for (rt::ByteOrder order : {rt::ByteOrder::little, rt::ByteOrder::big}) {
            CAPTURE(seed);
            metatf::test::TraceShape shape;
            shape.options = {cls, order, 256, {true, {}}, rt::container_version};
            shape.options.compress = order == rt::ByteOrder::big ? 1 : 0;  // zstd chunks and stored ones
            shape.steps = metatf::test::address_sanitizer ? 500 : 1500;  // a third under AddressSanitizer
            shape.seed = seed++;
            const std::string path = temp_path(name + ".mtf");
            RoundTripType(dtd, shape).run(path);
            const auto want = expected_lines<Reader, Comment, Section, Metadata>(dtd, path);
            const auto got = mtf_lines(path);
            REQUIRE(got.size() == want.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                CAPTURE(i);
                REQUIRE(got[i].dump() == want[i].dump());
            }
            // The Python module's column reader, against record-by-record decoding.
            rt::TraceReader by_columns(path, dtd), by_records(path, dtd);
            const metatf::test::ColumnsRead columns = metatf::test::read_by_columns(by_columns);
            const metatf::test::Rows rows = metatf::test::read_by_records(by_records);
            CHECK(columns.rows == rows);
            fast += columns.fast;
            // Stopped every 7 records (the Python module stops a thread at its part's end).
            rt::TraceReader by_sevens(path, dtd);
            const metatf::test::ColumnsRead sevens = metatf::test::read_by_columns(by_sevens, 7);
            CHECK(sevens.rows == rows);
            CHECK(sevens.longest <= 7);
            // Every other field kept: those not kept are still read (a delta's
            // previous value, a group's count), in runs and past their ends.
            rt::TraceReader by_halves(path, dtd);
            const metatf::test::ColumnsRead halves = metatf::test::read_by_columns(by_halves, 5, 2);
            CHECK(halves.rows == metatf::test::without_dropped(dtd, rows, 2));
            halves_fast += halves.fast;
        }
    }
    CHECK(fast > 0);
    CHECK(halves_fast > 0);
}

}  // namespace

TEST_CASE("mtf dump agrees with the generated reader on random HATF 1.0 traces") {
    using namespace hatf10;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "hatf10");
}

TEST_CASE("mtf dump agrees with the generated reader on random PTF traces") {
    using namespace ptf;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "ptf");
}

TEST_CASE("mtf dump agrees with the generated reader on random SPC traces") {
    using namespace spc;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "spc");
}

TEST_CASE("mtf dump agrees with the generated reader on random Laplace traces") {
    using namespace laplace;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "laplace");
}

TEST_CASE("mtf dump agrees with the generated reader on random CHARISMA traces") {
    using namespace charisma;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "charisma");
}

TEST_CASE("mtf dump agrees with the generated reader on random MSR Cambridge traces") {
    // Its host name is a string whose length stretches a fixed layout (RecordPlan::stretch).
    using namespace msr;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "msr");
}

TEST_CASE("mtf dump agrees with the generated reader on random traces of the feature DTD") {
    using namespace features;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "features");
}

TEST_CASE("mtf dump agrees with the generated reader on random traces of the paper-count DTD") {
    using namespace paper_count;
    agree<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>, Reader, Comment,
          Section, Metadata>(dtd, "paper-count");
}

namespace {

std::uint32_t index_of(const rt::RecordDesc& r, std::string_view path) {
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        if (r.fields[i].path == path) return i;
    }
    FAIL("no field " << path);
    return 0;
}

}  // namespace

// The runtime writes a metadata record's values (0 to 2, one class word each),
// which the prelude does not declare: decode_generic and mtf dump read them back.
TEST_CASE("metadata records the runtime writes read back through decode_generic and mtf dump, in both classes") {
    const rt::DtdDesc& dtd = features::dtd;
    const auto event = static_cast<std::uint32_t>(features::RecordType::Event);
    const rt::RecordDesc& r = dtd.records[event];
    const std::uint32_t offset = index_of(r, "offset"), kind = index_of(r, "kind");
    struct Change {
        std::uint32_t field;
        rt::MetaOp op;
        std::int64_t a, b;
        json shown;  // "property" and "value" as mtf dump gives them
    };
    const Change changes[] = {
        {offset, rt::MetaOp::default_value, -3, 0, {{"property", "default"}, {"value", {-3}}}},
        {offset, rt::MetaOp::stride, -100, -2, {{"property", "stride"}, {"value", {-100, -2}}}},
        {offset, rt::MetaOp::none, 0, 0, {{"property", "none"}, {"value", json::array()}}},
        {kind, rt::MetaOp::width, 2, 0, {{"property", "width"}, {"value", {2}}}},
    };
    for (rt::Class cls : {rt::Class::bits32, rt::Class::bits64}) {
        const unsigned word = cls == rt::Class::bits32 ? 4 : 8;
        CAPTURE(word);
        const std::string path = temp_path("metadata.mtf");
        {
            rt::TraceWriter w(path, dtd, {cls, rt::ByteOrder::big, 256, {true, {}}, rt::container_version});
            for (const Change& c : changes) w.metadata(event, c.field, c.op, std::uint64_t(c.a), std::uint64_t(c.b));
            w.close();
        }
        rt::TraceReader reader(path, dtd);
        rt::GenericRecord g;
        for (const Change& c : changes) {
            REQUIRE(reader.begin_record());
            rt::decode_generic(reader, g);
            const unsigned n = rt::metadata_value_count(c.op);
            std::vector<std::uint32_t> fields{1, 2, 3};
            std::vector<std::uint64_t> values{r.tag, c.field, std::uint64_t(c.op)};
            for (unsigned i = 0; i < n; ++i) {
                fields.push_back(rt::metadata_values_field);
                values.push_back(std::uint64_t(i == 0 ? c.a : c.b));
            }
            std::vector<std::uint32_t> got_fields;
            std::vector<std::uint64_t> got_values;
            for (const rt::GenericValue& v : g.values) {
                got_fields.push_back(v.field);
                got_values.push_back(v.integer);
            }
            CHECK(got_fields == fields);
            CHECK(got_values == values);
            // The tag, the record's tag, field, property, then the values.
            CHECK(rt::predefined_size(dtd, word, g) == 1 + 1 + 1 + 1 + n * word);
        }
        CHECK_FALSE(reader.begin_record());
        const auto lines = mtf_lines(path);
        REQUIRE(lines.size() == std::size(changes));
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const Change& c = changes[i];
            CHECK(lines[i]["record"] == "metadata");
            json want = c.shown;
            want["record"] = "event";
            want["field"] = r.fields[c.field].path;
            CHECK(lines[i]["fields"].dump() == want.dump());
        }
    }
}

TEST_CASE("a string field's generated NAME_text() gives its bytes as a std::string_view") {
    const std::string path = temp_path("msr-text.mtf");
    const std::string host = "prxy";
    {
        msr::Writer w(path);
        w.write(msr::Request{.timestamp = 1, .hostnameLength = host.size(), .hostname = rt::as_bytes(host), .disk = 0, .type_ = 1,
                             .offset = 512, .size = 4096, .responseTime = 9});
        w.close();
    }
    msr::Reader r(path);
    REQUIRE(r.next());
    REQUIRE(r.type() == msr::RecordType::Request);
    CHECK(r.get<msr::Request>().hostname_text() == "prxy");
    CHECK(!r.next());
}
