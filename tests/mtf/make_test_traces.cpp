// Writes traces for tests of mtf:
//
//   make_test_traces seeds DIR
//     the seed corpus of fuzz_mtf_trace: random traces (records, metadata of
//     every sort, sections, comments) of the shipped DTDs and the feature and
//     paper-count fixtures, in both classes, both byte orders, small chunks
//     and container versions 1, 4, 5 and 6 (and for HATF and SPC split streams), each read
//     back through its generated reader;
//     and a small repeat bomb (below) as a regression case.
//   make_test_traces spc-bomb OUT [RECORDS [COUNT]]
//     the repeat bomb: an SPC trace whose metadata makes every field of the
//     record a default, the repeat count a default COUNT (16777215, the
//     largest the reader takes) and each repeated element zero bytes wide,
//     followed by RECORDS records of one byte (the tag) each, in one chunk:
//     2,200,000 by default, about 2 MB. The reader takes a count of up to 8
//     elements per byte left in the chunk, plus 1024, so each of the first
//     records alone passes; together they expand to far more elements than
//     the trace-wide budget (ReaderLimits) allows.
#define DOCTEST_CONFIG_IMPLEMENT  // the read-back checks of random_trace.hpp, outside a test runner
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <charisma.hpp>
#include <features.hpp>
#include <hatf10.hpp>
#include <laplace.hpp>
#include <paper-count.hpp>
#include <ptf.hpp>
#include <spc.hpp>

#include "random_trace.hpp"

namespace rt = metatf::rt;
namespace fs = std::filesystem;

namespace {

void write_spc_bomb(const std::string& path, std::uint64_t records, std::uint64_t count) {
    using namespace spc;
    rt::WriterOptions options;
    options.output.replace = true;
    options.chunk_bytes = records + 4096;  // one chunk, so that each record alone passes the count check
    Writer w(path, options);
    for (std::uint32_t f : {Spc::asu_field, Spc::lba_field, Spc::size_field, Spc::opcode_field, Spc::timestamp_field,
                            Spc::optional_optionalLength_field}) {
        w.set_interpretation(RecordType::Spc, f, rt::MetaOp::default_value, 0);
    }
    w.set_interpretation(RecordType::Spc, Spc::optionalCount_field, rt::MetaOp::default_value, count);
    // Written field by field: the generated writer would want `count` elements in memory.
    rt::TraceWriter& raw = w.runtime();
    const auto slot = static_cast<std::uint32_t>(RecordType::Spc);
    rt::FieldState* s = raw.states(slot);
    for (std::uint64_t i = 0; i < records; ++i) {
        raw.begin_record(slot);
        for (std::uint32_t f : {Spc::asu_field, Spc::lba_field, Spc::size_field, Spc::opcode_field, Spc::timestamp_field}) {
            raw.write_int(s[f], 0);
        }
        raw.write_int(s[Spc::optionalCount_field], count);
        raw.check_count(s[Spc::optionalCount_field], count, count);
        // The elements: a default length 0 and zero bytes of text each, which store nothing.
        raw.end_record();
    }
    w.close();
}

// `split`: fields for a further trace with split streams, in small chunks.
template <typename RoundTrip>
void write_random(const fs::path& dir, const char* name, const rt::DtdDesc& dtd, std::uint64_t& seed,
                  std::vector<std::string> split = {}) {
    struct Shape {
        const char* suffix;
        rt::WriterOptions options;
    };
    const auto options = [](rt::Class cls, rt::ByteOrder order, std::size_t chunk_bytes, std::uint8_t version) {
        rt::WriterOptions o;
        o.cls = cls;
        o.order = order;
        o.chunk_bytes = chunk_bytes;
        o.output.replace = true;
        o.version = version;
        return o;
    };
    std::vector<Shape> shapes = {
        {"64le", options(rt::Class::bits64, rt::ByteOrder::little, std::size_t(1) << 20, 2)},
        {"32be-chunks", options(rt::Class::bits32, rt::ByteOrder::big, 64, 2)},
        {"64le-v1", options(rt::Class::bits64, rt::ByteOrder::little, std::size_t(1) << 20, 1)},
        {"64le-zstd", options(rt::Class::bits64, rt::ByteOrder::little, 512, 2)},
        {"32be-chunks-v4", options(rt::Class::bits32, rt::ByteOrder::big, 64, 4)},
        {"32be-chunks-v5-zstd", options(rt::Class::bits32, rt::ByteOrder::big, 64, 5)},  // the DTD text compressed too
        {"32be-chunks-v6-zstd", options(rt::Class::bits32, rt::ByteOrder::big, 64, 6)},  // and the state blocks
    };
    if (!split.empty()) {
        shapes.push_back({"64le-split", options(rt::Class::bits64, rt::ByteOrder::little, 256, 2)});
        shapes.back().options.split = std::move(split);
    }
    for (const Shape& s : shapes) {
        metatf::test::TraceShape shape;
        shape.options = s.options;
        if (std::string_view(s.suffix).ends_with("zstd")) shape.options.compress = 3;
        shape.steps = 100;  // a few KB of records: small inputs mutate faster
        shape.seed = seed++;
        RoundTrip trip(dtd, shape);
        trip.run((dir / (std::string(name) + "-" + s.suffix + ".mtf")).string());
    }
}

#define METATF_RANDOM(ns, name, seed, ...)                                                                      \
    write_random<metatf::test::RoundTrip<ns::Records, ns::Writer, ns::Reader, ns::RecordType, ns::Comment,       \
                                         ns::Section, ns::Metadata>>(dir, name, ns::dtd, seed __VA_OPT__(, ) __VA_ARGS__)

void write_seeds(const fs::path& dir) {
    fs::create_directories(dir);
    std::uint64_t seed = 1;
    METATF_RANDOM(hatf10, "hatf10", seed, {"alloc.address", "free.address+alloc.size"});
    METATF_RANDOM(spc, "spc", seed, {"spc.lba", "spc.asu+spc.timestamp"});
    METATF_RANDOM(ptf, "ptf", seed);
    METATF_RANDOM(laplace, "laplace", seed);
    METATF_RANDOM(charisma, "charisma", seed);
    METATF_RANDOM(features, "features", seed);
    METATF_RANDOM(paper_count, "paper-count", seed);
    // Each record passes the check of its own count; the third goes over the budget.
    write_spc_bomb((dir / "spc-bomb.mtf").string(), 10'000, 40'000);
}

// A failed read-back check of random_trace.hpp.
void assert_failed(const doctest::AssertData& a) {
    std::fprintf(stderr, "make_test_traces: %s:%d: check failed: %s\n", a.m_file, a.m_line, a.m_expr);
    std::exit(1);
}

int usage() {
    std::fputs("usage: make_test_traces seeds DIR\n"
               "       make_test_traces spc-bomb OUT [RECORDS [COUNT]]\n"
               "         RECORDS: 1 to 100000000, default 2200000; COUNT: 0 to 16777215, default 16777215\n",
               stderr);
    return 2;
}

// A whole decimal number from `min` to `max`.
bool parse(std::string_view s, std::uint64_t min, std::uint64_t max, std::uint64_t& out) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= min && out <= max;
}

}  // namespace

int main(int argc, char** argv) {
    doctest::Context context;
    context.setAsDefaultForAssertsOutOfTestCases();
    context.setAssertHandler(assert_failed);
    const std::string_view mode = argc > 1 ? argv[1] : "";
    try {
        if (mode == "seeds" && argc == 3) {
            write_seeds(argv[2]);
            return 0;
        }
        if (mode == "spc-bomb" && argc >= 3 && argc <= 5) {
            constexpr std::uint64_t max_count = (std::uint64_t(1) << 24) - 1;  // the reader's limit (reader.cpp)
            std::uint64_t records = 2'200'000, count = max_count;
            if ((argc > 3 && !parse(argv[3], 1, 100'000'000, records)) || (argc > 4 && !parse(argv[4], 0, max_count, count))) {
                return usage();
            }
            write_spc_bomb(argv[2], records, count);
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_test_traces: %s\n", e.what());
        return 1;
    }
    return usage();
}
