// Encoding variants (docs/dtd-language.md, "Variants"): records whose
// encodings metadata has made one of their DTD's variants are written and
// read with that variant's layout, and must come back as written, through
// next(), visit() and the DTD-driven decoder alike.
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
                CHECK(trip.variant_records > 1000);
            } else {
                CHECK(trip.variant_records == 0);
            }
        }
    }
}
