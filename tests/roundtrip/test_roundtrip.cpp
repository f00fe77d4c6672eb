// Round trips through the generated codecs of every shipped DTD and of the
// feature and paper-count fixtures: random traces in both byte orders and both
// classes, with chunks stored and compressed; and each written again through
// the AutoEncoder, which must keep every record.
#include <charisma.hpp>
#include <features.hpp>
#include <hatf10.hpp>
#include <laplace.hpp>
#include <paper-count.hpp>
#include <ptf.hpp>
#include <spc.hpp>

#include "../address_sanitizer.hpp"
#include "auto_recode.hpp"
#include "random_trace.hpp"
#include "scratch.hpp"

namespace {

template <typename RoundTripType>
void round_trips(const metatf::rt::DtdDesc& dtd, const std::string& name) {
    using metatf::rt::ByteOrder;
    using metatf::rt::Class;
    std::uint64_t seed = 1;
    for (Class cls : {Class::bits64, Class::bits32}) {
        for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
            // Chunks of 4 KiB compressed: zstd chunks, and small ones that stay stored, in one trace.
            for (const auto& setting : {std::pair<std::size_t, int>{64, 0}, {4096, 3}, {std::size_t(1) << 20, 0}}) {
                const auto [chunk, compress] = setting;
                CAPTURE(static_cast<int>(cls));
                CAPTURE(static_cast<int>(order));
                CAPTURE(setting.first);   // the chunk size (Clang's lambdas cannot capture a structured binding)
                CAPTURE(setting.second);  // the compression level
                CAPTURE(seed);
                metatf::test::TraceShape shape;
                shape.options = {cls, order, chunk, {true, {}}, metatf::rt::container_version};
                shape.options.compress = compress;
                // Under AddressSanitizer a record costs several times as much: a third of them.
                shape.steps = metatf::test::address_sanitizer ? 1000 : 3000;
                shape.seed = seed++;
                // Planned records, read by the DTD-driven decoder too (and skipped: skip_generic).
                shape.generic_check = order == ByteOrder::little && chunk == std::size_t(1) << 20;
                RoundTripType trip(dtd, shape);
                const std::string path = metatf::test::fresh_path("metatf-roundtrip", name + ".mtf");
                trip.run(path);
                CHECK(trip.records_read > std::size_t(shape.steps) * 2 / 3);
                if (chunk == 4096) metatf::test::check_auto_recode(path, dtd, shape.options);
            }
        }
    }
}

}  // namespace

TEST_CASE("random HATF 1.0 traces round-trip through the generated codec") {
    using namespace hatf10;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "hatf10");
}

TEST_CASE("random PTF traces round-trip through the generated codec") {
    using namespace ptf;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "ptf");
}

TEST_CASE("random SPC traces round-trip through the generated codec") {
    using namespace spc;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "spc");
}

TEST_CASE("random Laplace traces round-trip through the generated codec") {
    using namespace laplace;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "laplace");
}

TEST_CASE("random CHARISMA traces round-trip through the generated codec") {
    using namespace charisma;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "charisma");
}

TEST_CASE("random traces of the feature DTD round-trip: sections, repeats, every type and interpretation") {
    using namespace features;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "features");
}

TEST_CASE("random traces of the paper-count DTD round-trip: counts that 'n*x' introduces, mixed with earlier ones") {
    using namespace paper_count;
    round_trips<metatf::test::RoundTrip<Records, Writer, Reader, RecordType, Comment, Section, Metadata>>(dtd, "paper-count");
}
