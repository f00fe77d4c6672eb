// State blocks (docs/trace-format.md, section 1.2) on DTDs compiled here:
// a field past the 255 that metadata can name, whose delta state a block
// must still restore, and a trace of segments so small that starting each
// costs more than the reader's budget.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <metatf/io/generic.hpp>

#include "lower/lower.hpp"
#include "support.hpp"

namespace rt = metatf::rt;
using namespace metatf;

namespace {

std::uint32_t slot_named(const rt::DtdDesc& dtd, const std::string& name) {
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        if (dtd.records[i].name == name) return i;
    }
    throw std::logic_error("no record " + name);
}

// Record `r`: fields f1 to f`n` of one byte, the last under delta from 1000.
std::string wide_dtd(unsigned n) {
    std::string fields, settings;
    for (unsigned i = 1; i <= n; ++i) {
        fields += ", f" + std::to_string(i);
        settings += " f" + std::to_string(i) + ".width = 1;";
    }
    return "r : (tag" + fields + ") { tag.value = 4;" + settings + " f" + std::to_string(n) + ".interpretation = delta 1000; }\n";
}

std::string temp(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }

// Every record's values, read from segment `from` on.
std::vector<std::vector<std::uint64_t>> values_of(const std::string& path, const rt::DtdDesc& dtd, std::size_t from = 0) {
    rt::TraceReader r(path, dtd);
    r.seek_segment(from);
    std::vector<std::vector<std::uint64_t>> out;
    rt::GenericRecord g;
    while (r.begin_record()) {
        rt::decode_generic(r, g);
        out.emplace_back();
        for (const rt::GenericValue& v : g.values) out.back().push_back(v.integer);
    }
    return out;
}

void write_wide(const std::string& path, const rt::DtdDesc& dtd, unsigned n, std::uint8_t version, std::size_t chunk_bytes) {
    rt::WriterOptions o;
    o.output.replace = true;
    o.version = version;
    o.chunk_bytes = chunk_bytes;
    rt::TraceWriter w(path, dtd, o);
    for (std::uint64_t k = 0; k < 40; ++k) {
        rt::GenericRecord g{slot_named(dtd, "r"), {}};
        for (unsigned i = 1; i <= n; ++i) g.values.push_back({i, i == n ? 1000 + 7 * (k + 1) : (k + i) % 200, 0, {}});
        rt::encode_generic(w, g);
    }
    w.close();
}

}  // namespace

TEST_CASE("a state block restores a delta field past field 255") {
    for (const unsigned n : {256u, 300u}) {
        CAPTURE(n);
        const lower::LoweredDtd lowered = lower::lower(test::schema_of(wide_dtd(n)));
        const rt::DtdDesc& dtd = lowered.desc();
        const std::string v2 = temp("metatf-wide-v2.mtf"), v3 = temp("metatf-wide-v3.mtf");
        write_wide(v2, dtd, n, 2, 1024);
        write_wide(v3, dtd, n, 3, 1024);
        const auto all = values_of(v3, dtd);
        REQUIRE(all.size() == 40);
        CHECK(all == values_of(v2, dtd));
        CHECK(all[6][n - 1] == 1000 + 7 * 7);
        // From a later segment, where the delta's previous value comes from its block.
        rt::TraceReader probe(v3, dtd);
        const std::size_t segments = probe.header().segments.size();
        REQUIRE(segments >= 3);
        const std::uint64_t first = probe.header().segments[segments - 1].first_record;
        const auto tail = values_of(v3, dtd, segments - 1);
        CHECK(tail == std::vector<std::vector<std::uint64_t>>(all.begin() + static_cast<std::ptrdiff_t>(first), all.end()));
        std::filesystem::remove(v2);
        std::filesystem::remove(v3);
    }
}

TEST_CASE("segments too small for the DTD's fields are refused, not reset for ever") {
    // 2,000 record types of 10 fields: 22,000 fields set afresh at every
    // segment, with a segment a record of 11 bytes.
    std::string text;
    for (unsigned t = 0; t < 2000; ++t) {
        text += "r" + std::to_string(t) + " : (tag, a, b, c, d, e, f, g, h, i, j) { tag.value = " + std::to_string(t + 4) +
                "; }\n";
    }
    text = "tag.width = 2;\na.width = 1; b.width = 1; c.width = 1; d.width = 1; e.width = 1;\n"
           "f.width = 1; g.width = 1; h.width = 1; i.width = 1; j.width = 1;\n" + text;
    const lower::LoweredDtd lowered = lower::lower(test::schema_of(text));
    const rt::DtdDesc& dtd = lowered.desc();
    const std::string path = temp("metatf-tiny-segments.mtf");
    rt::WriterOptions o;
    o.output.replace = true;
    o.chunk_bytes = 1;
    {
        rt::TraceWriter w(path, dtd, o);
        for (std::uint64_t k = 0; k < 100; ++k) {
            rt::GenericRecord g{slot_named(dtd, "r" + std::to_string(k % 10)), {}};
            for (std::uint32_t i = 1; i <= 10; ++i) g.values.push_back({i, i, 0, {}});
            rt::encode_generic(w, g);
        }
        w.close();
    }
    std::string refused;
    try {
        values_of(path, dtd);
    } catch (const rt::TraceError& e) {
        CHECK(e.kind == rt::ErrorKind::bad_section);
        refused = e.message;
    }
    CAPTURE(refused);
    CHECK(refused.starts_with("segments so small that starting each ("));
    CHECK(refused.find(" fields set afresh) costs more than the limit for the ") != std::string::npos);
    std::filesystem::remove(path);
}
