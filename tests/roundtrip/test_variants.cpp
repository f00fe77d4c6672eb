// Encoding variants (docs/dtd-language.md, "Variants"): records whose
// encodings metadata has made one of their DTD's variants are written and
// read with that variant's layout, and must come back as written, through
// next(), visit() and the DTD-driven decoder alike.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <vector>

#include <variants.hpp>

#include "random_trace.hpp"
#include "scratch.hpp"

namespace rt = metatf::rt;

namespace {

using Trip = metatf::test::RoundTrip<variants::Records, variants::Writer, variants::Reader, variants::RecordType,
                                     variants::Comment, variants::Section, variants::Metadata>;

}  // namespace

TEST_CASE("a variant's encodings are those of the record's fields with the variant's properties over them") {
    const rt::RecordDesc& r1 = variants::dtd.records[static_cast<std::uint32_t>(variants::RecordType::R1)];
    REQUIRE(r1.variant_count == 2);
    CHECK(std::string(r1.variants[0].name) == "narrow");
    const rt::Encoding* narrow = r1.variants[0].fields;
    CHECK(narrow[variants::R1::a_field].width == 2);
    CHECK(narrow[variants::R1::b_field].kind == rt::Interp::delta);
    CHECK(narrow[variants::R1::b_field].width == 1);
    CHECK(narrow[variants::R1::c_field].kind == rt::Interp::base_offset);
    CHECK(narrow[variants::R1::c_field].value == 1000);
    CHECK(narrow[variants::R1::f_field].width == 8);  // as the DTD has it
    const rt::Encoding* wide = r1.variants[1].fields;
    CHECK(wide[variants::R1::n_field].kind == rt::Interp::default_value);
    CHECK(wide[variants::R1::n_field].value == 0);
    const rt::RecordDesc& r2 = variants::dtd.records[static_cast<std::uint32_t>(variants::RecordType::R2)];
    CHECK(r2.variants[0].fields[variants::R2::b_field].value == static_cast<std::uint64_t>(-7));
}

TEST_CASE("records in a variant's encodings round-trip, and the DTD-driven decoder reads what the variant paths wrote") {
    std::uint64_t seed = 1;
    for (rt::ByteOrder order : {rt::ByteOrder::little, rt::ByteOrder::big}) {
        for (std::size_t chunk : {std::size_t(256), std::size_t(1) << 20}) {
            CAPTURE(static_cast<int>(order));
            CAPTURE(chunk);
            metatf::test::TraceShape shape;
            shape.options = {rt::Class::bits64, order, chunk, {true, {}}, rt::container_version};
            shape.steps = 4000;
            shape.seed = seed++;
            shape.steer_to_variants = 60;
            shape.generic_check = true;
            Trip trip(variants::dtd, shape);
            trip.run(metatf::test::fresh_path("metatf-roundtrip", "variants.mtf"));
            CHECK(trip.records_read > 3000);
            // Most records are written while their type is in a variant (in
            // a big-endian trace none: variants need the machine's order).
            if (order == rt::ByteOrder::little) {
                CHECK(trip.variant_records() > 1000);
            } else {
                CHECK(trip.variant_records() == 0);
            }
        }
    }
}

// The fast loops of next() and visit() switch on a tag they load in the
// machine's byte order. In a big-endian trace a 2-byte tag 768 (bytes 03 00)
// would load as 3, the metadata record's tag: such traces are read by the
// general path, which reads tags in the trace's order and refuses 768.
TEST_CASE("a big-endian trace's 2-byte tag is not read in the machine's order") {
    const std::string path = metatf::test::fresh_path("metatf-roundtrip", "variants-big.mtf");
    rt::WriterOptions options;
    options.order = rt::ByteOrder::big;
    options.version = 3;  // no checksum to mend after the change
    {
        variants::Writer w(path, options);
        for (int i = 0; i < 100; ++i) w.write(variants::R2{.a = 0x11223344, .b = 0x55667788});
        w.close();
    }
    std::vector<char> bytes;
    {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    // The 50th record: the first is read before a chunk is loaded, by the general path.
    const std::string fields("\x11\x22\x33\x44\x55\x66\x77\x88", 8);
    auto at = bytes.begin();
    for (int i = 0; i < 50; ++i) {
        at = std::search(i == 0 ? at : at + 1, bytes.end(), fields.begin(), fields.end());
        REQUIRE(at != bytes.end());
    }
    REQUIRE(at[-2] == 0);
    REQUIRE(at[-1] == static_cast<char>(variants::R2::tag));
    at[-2] = 3;  // its tag becomes 768
    at[-1] = 0;
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const std::string unknown = "no record of section 0 has tag 768";
    CHECK(metatf::test::error_of([&] {
              variants::Reader r(path);
              while (r.next()) {
              }
          }) == unknown);
    CHECK(metatf::test::error_of([&] { variants::Reader(path).visit([](const auto&) {}); }) == unknown);
}

// visit() reads a metadata record inside its fast loop; the record must reach
// the visitor as every other record does, a non-const lvalue, so that an
// overload taking `Metadata&` still gets it.
namespace {

struct MetadataCounter {
    std::size_t& metadata;
    void operator()(variants::Metadata&) { ++metadata; }
    void operator()(const auto&) {}
};

}  // namespace

TEST_CASE("visit() hands metadata records read in its fast loop over as non-const lvalues") {
    const std::string path = metatf::test::fresh_path("metatf-roundtrip", "variants-metadata.mtf");
    {
        variants::Writer w(path);
        for (std::uint32_t i = 0; i < 200; ++i) {
            w.set_width(variants::RecordType::R2, variants::R2::a_field, i % 2 == 0 ? 2 : 4);
            w.write(variants::R2{.a = 7, .b = 1});
        }
        w.close();
    }
    std::size_t metadata = 0;
    variants::Reader(path).visit(MetadataCounter{metadata});
    CHECK(metadata == 200);
}
