// Fields whose value the DTD fixes (`magic.value = N;`, docs/dtd-language.md,
// section 6): generated writers fill them in, writers refuse another value,
// and every reader (next(), visit(), the generic decoder, the column reader) refuses a trace
// that stores another, with the field's offset and the record's index.
#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <features.hpp>
#include <metatf/io/generic.hpp>

#include <doctest/doctest.h>

#include "columns_read.hpp"
#include "scratch.hpp"

namespace rt = metatf::rt;
using metatf::test::error_of;

namespace {

std::string fresh_path(const std::string& name) { return metatf::test::fresh_path("metatf-fixed", name); }

// A trace of a `plain` record and then a `header` with the values its struct starts with.
void write_header_trace(const std::string& path, const rt::WriterOptions& options = {}) {
    features::Writer w(path, options);
    w.write(features::Plain{.id = 1, .n = 2});
    w.write(features::Header{});
    w.close();
}

// The same, with records after the header, which give the readers' planned
// paths the room for their wide loads.
void write_header_and_more(const std::string& path, const rt::WriterOptions& options = {}) {
    features::Writer w(path, options);
    w.write(features::Plain{.id = 1, .n = 2});
    w.write(features::Header{});
    w.write(features::Plain{.id = 2, .n = 3});
    w.write(features::Plain{.id = 3, .n = 4});
    w.close();
}

std::vector<char> bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("fixed values: the generated struct starts with them, and they come back from every reader") {
    const std::string path = fresh_path("filled.mtf");
    write_header_trace(path);
    features::Reader r(path);
    REQUIRE(r.next());
    REQUIRE(r.next());
    REQUIRE(r.type() == features::RecordType::Header);
    CHECK(r.get<features::Header>().magic == 0x4d544621u);
    CHECK(r.get<features::Header>().version == -3);
    CHECK_FALSE(r.next());

    int headers = 0;
    features::Reader(path).visit([&](const auto& record) {
        if constexpr (std::is_same_v<std::decay_t<decltype(record)>, features::Header>) {
            CHECK(record.magic == 0x4d544621u);
            CHECK(record.version == -3);
            ++headers;
        }
    });
    CHECK(headers == 1);

    rt::TraceReader generic(path, features::Codec::dtd);
    rt::GenericRecord record;
    REQUIRE(generic.begin_record());
    rt::decode_generic(generic, record);
    REQUIRE(generic.begin_record());
    rt::decode_generic(generic, record);
    REQUIRE(record.values.size() == 2);
    CHECK(record.values[0].integer == 0x4d544621u);
    CHECK(static_cast<std::int64_t>(record.values[1].integer) == -3);
}

TEST_CASE("fixed values: a writer refuses a record that gives another value, and leaves no file") {
    const std::string path = fresh_path("refused.mtf");
    {
        features::Writer w(path);
        features::Header h;
        h.version = 4;
        CHECK(error_of([&] { w.write(h); }) ==
              "value 4 of field 'version' (none) differs from the value the DTD fixes, -3");
    }
    CHECK_FALSE(std::filesystem::exists(path));

    // Metadata changes how the value is stored, not the value.
    {
        features::Writer w(path);
        CHECK(error_of([&] { w.set_interpretation(features::RecordType::Header, features::Header::magic_field, rt::MetaOp::default_value, 5); },
                       false) == "metadata for field 'magic' of record 'header': the DTD fixes the field's value at 1297368609; 'default 5' would change it");
        w.set_interpretation(features::RecordType::Header, features::Header::magic_field, rt::MetaOp::default_value, 0x4d544621);
        w.write(features::Header{});
        w.close();
        features::Reader r(path);
        REQUIRE(r.next());
        REQUIRE(r.next());
        CHECK(r.get<features::Header>().magic == 0x4d544621u);
        std::filesystem::remove(path);
    }

    // The generic encoder (mtf's) too, whatever encoding it could choose.
    rt::TraceWriter w(path, features::Codec::dtd);
    const rt::GenericRecord header{static_cast<std::uint32_t>(features::RecordType::Header), {{1, 7, 0, {}}, {2, std::uint64_t(-3), 0, {}}}};
    CHECK(error_of([&] { rt::encode_generic(w, header); }) ==
          "value 7 of field 'magic' (none) differs from the value the DTD fixes, 1297368609");
}

TEST_CASE("fixed values: a trace that stores another value is an error at the field, in every reader") {
    for (const bool more : {false, true}) {
        CAPTURE(more);
        const std::string path = fresh_path("changed.mtf");
        rt::WriterOptions options;
        options.version = 3;  // no checksum to mend after the change
        (more ? write_header_and_more : write_header_trace)(path, options);
        std::vector<char> bytes = bytes_of(path);
        const std::array<char, 4> magic = {0x21, 0x46, 0x54, 0x4d};  // 0x4d544621, little-endian
        const auto at = std::search(bytes.begin(), bytes.end(), magic.begin(), magic.end());
        REQUIRE(at != bytes.end());
        const auto offset = static_cast<std::size_t>(at - bytes.begin());
        bytes[offset] = 0x22;
        std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));

        const std::string want = "byte " + std::to_string(offset) +
                                 ", section 0, record 1: field 'magic' of record 'header' is 1297368610; the DTD fixes it at 1297368609";
        CHECK(error_of([&] {
                  features::Reader r(path);
                  while (r.next()) {
                  }
              }, true) == want);
        CHECK(error_of([&] { features::Reader(path).visit([](const auto&) {}); }, true) == want);
        CHECK(error_of([&] {
                  rt::TraceReader r(path, features::Codec::dtd);
                  rt::GenericRecord record;
                  while (r.begin_record()) rt::decode_generic(r, record);
              }, true) == want);
        // The Python module's column reader, whose run of records reaches the header when more follow it.
        CHECK(error_of([&] {
                  rt::TraceReader r(path, features::Codec::dtd);
                  metatf::test::read_by_columns(r);
              }, true) == want);
    }
}

TEST_CASE("bit fields: a part named like a member gets a suffix, and a setter changes the field whatever its name") {
    features::Packed p;
    p.set_lo(5);
    p.set_hi(3);
    CHECK(p.part == 0x35u);
    p.set_x_field_(7);
    p.set_Packed_(2);
    p.set_RecordType_(1);
    CHECK(p.x == (7u | 2u << 3 | 1u << 5));
    CHECK(p.x_field_() == 7u);
    CHECK(features::Packed::x_field == 1u);
    const std::string path = fresh_path("packed.mtf");
    {
        features::Writer w(path);
        w.write(p);
        w.close();
    }
    features::Reader r(path);
    REQUIRE(r.next());
    CHECK(r.get<features::Packed>() == p);
}
