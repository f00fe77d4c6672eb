// WriterOptions::strict and narrow_after: a writer given a value its field
// cannot hold widens the field (or leaves a default or stride) with metadata,
// and the reader gets every value back; a strict writer refuses the value.
#include <filesystem>
#include <vector>

#include <hatf10.hpp>
#include <spc.hpp>
#include <metatf/core/bytes.hpp>
#include <metatf/io/generic.hpp>

#include <doctest/doctest.h>

#include "scratch.hpp"

namespace rt = metatf::rt;

namespace {

std::string fresh_path(const std::string& name) { return metatf::test::fresh_path("metatf-widen", name); }

using metatf::test::read_hatf;

}  // namespace

TEST_CASE("bytes_needed() is the fewest bytes fits_signed() and fits_unsigned() accept") {
    // Every value next to a byte boundary, on both sides of zero.
    std::vector<std::uint64_t> values{0, 1, ~std::uint64_t(0)};
    for (unsigned bit = 1; bit < 64; ++bit) {
        for (const std::uint64_t v : {std::uint64_t(1) << bit, (std::uint64_t(1) << bit) - 1}) {
            values.insert(values.end(), {v, v + 1, 0 - v, ~v});
        }
    }
    for (const std::uint64_t v : values) {
        for (const bool sign : {false, true}) {
            unsigned fewest = 0;
            while (fewest < 8 && !(sign ? rt::fits_signed(v, fewest) : rt::fits_unsigned(v, fewest))) ++fewest;
            CAPTURE(v);
            CAPTURE(sign);
            CHECK(rt::bytes_needed(v, sign) == fewest);
        }
    }
}

TEST_CASE("a writer widens a field for a value too wide, and the field stays wide") {
    const std::string path = fresh_path("widen.mtf");
    const std::vector<hatf10::Alloc> allocs = {
        {.size = 16, .address = 0x1000},
        {.size = 16, .address = 0x7f3c'6000'0010},  // needs 6 bytes (the DTD's address is 4)
        {.size = 70000, .address = 0x2000},         // the size (2 bytes below) needs 3
        {.size = 16, .address = 0x2040},
    };
    {
        hatf10::Writer w(path);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::size_field, 2);
        for (const hatf10::Alloc& a : allocs) w.write(a);
        w.close();
    }
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == allocs.size());
    for (std::size_t i = 0; i < allocs.size(); ++i) {
        CHECK(got.allocs[i].size == allocs[i].size);
        CHECK(got.allocs[i].address == allocs[i].address);
    }
    // The set_width, then one metadata record before each first wider value.
    REQUIRE(got.metadata.size() == 3);
    CHECK(got.metadata[1].field == hatf10::Alloc::address_field);
    CHECK(got.metadata[1].a == 6);
    CHECK(got.metadata[2].field == hatf10::Alloc::size_field);
    CHECK(got.metadata[2].a == 3);
}

TEST_CASE("a writer widens delta fields for the difference, and the difference restarts nothing") {
    const std::string path = fresh_path("widen-delta.mtf");
    const std::vector<std::uint64_t> addresses = {0x5565'4a9e'3000, 0x5565'4a9e'3040, 0x7f3c'6000'0000, 0x7f3c'6000'0020,
                                                  0x5565'4a9e'3080};
    {
        hatf10::Writer w(path);
        w.set_interpretation(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, rt::MetaOp::delta, 0x5565'4a9e'3000);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, 1);
        for (std::uint64_t a : addresses) w.write(hatf10::Alloc{.size = 8, .address = a});
        w.close();
    }
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) CHECK(got.allocs[i].address == addresses[i]);
    // The steps of 0x40 and 0x20 fit one signed byte; the first jump between regions widens to 6.
    REQUIRE(got.metadata.size() == 2 + 1);
    CHECK(got.metadata[2].a == 6);
}

TEST_CASE("a writer leaves a default the value differs from, and a stride the value breaks") {
    const std::string path = fresh_path("leave.mtf");
    {
        hatf10::Writer w(path);
        w.set_interpretation(hatf10::RecordType::Alloc, hatf10::Alloc::time_field, rt::MetaOp::stride, 100, 10);
        w.write(hatf10::Alloc{.size = 8, .address = 0x10, .time = 110});
        w.write(hatf10::Alloc{.size = 8, .address = 0x20, .thread = 7, .time = 120});  // thread: default 0 in the DTD
        w.write(hatf10::Alloc{.size = 8, .address = 0x30, .thread = 7, .time = 125});  // breaks the stride
        w.write(hatf10::Alloc{.size = 8, .address = 0x40, .thread = 0, .time = 0});
        w.close();
    }
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == 4);
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> want = {{0, 110}, {7, 120}, {7, 125}, {0, 0}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(got.allocs[i].thread == want[i].first);
        CHECK(got.allocs[i].time == want[i].second);
    }
    // The stride, then `none` for the thread (its declared 4 bytes come back),
    // then `none` for the time (8 bytes): nothing needs widening.
    REQUIRE(got.metadata.size() == 3);
    CHECK((got.metadata[1].field == hatf10::Alloc::thread_field && got.metadata[1].op == rt::MetaOp::none));
    CHECK((got.metadata[2].field == hatf10::Alloc::time_field && got.metadata[2].op == rt::MetaOp::none));
}

TEST_CASE("a writer widens fields of a record type with a repeated group, over all the group's values") {
    const std::string path = fresh_path("widen-repeat.mtf");
    const std::string long_text(300, 'x');  // its length needs 2 bytes; SPC's optionalLength is 1
    const spc::Spc record{.asu = 300,
                          .lba = 5,
                          .size = 512,
                          .opcode = 0,
                          .timestamp = 1,
                          .optionalCount = 2,
                          .optionalCount_items = {{3, rt::as_bytes("abc")}, {long_text.size(), rt::as_bytes(long_text)}}};
    {
        spc::Writer w(path);
        w.write(record);
        w.close();
    }
    spc::Reader r(path);
    std::vector<std::pair<std::uint32_t, std::uint64_t>> widths;  // field, width
    bool found = false;
    while (r.next()) {
        if (r.type() == spc::RecordType::Metadata) {
            const auto& m = r.get<spc::Metadata>();
            widths.emplace_back(m.field, m.a);
        } else if (r.type() == spc::RecordType::Spc) {
            CHECK(r.get<spc::Spc>() == record);
            found = true;
        }
    }
    CHECK(found);
    CHECK(widths == std::vector<std::pair<std::uint32_t, std::uint64_t>>{{spc::Spc::asu_field, 2},
                                                                         {spc::Spc::optional_optionalLength_field, 2}});
}

TEST_CASE("the generic encoder widens and leaves interpretations as the generated writer does") {
    const std::string path = fresh_path("generic.mtf");
    const auto alloc = static_cast<std::uint32_t>(hatf10::RecordType::Alloc);
    // size, address, thread, heap, time, attributesLength (the bytes are empty).
    auto record = [&](std::uint64_t address, std::uint64_t thread) {
        rt::GenericRecord r{alloc, {}};
        for (std::uint64_t v : {std::uint64_t{8}, address, thread, std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{0}}) {
            r.values.push_back(rt::GenericValue{static_cast<std::uint32_t>(r.values.size() + 1), v, 0, {}});
        }
        r.values.push_back(rt::GenericValue{7, 0, 0, {}});
        return r;
    };
    {
        rt::TraceWriter w(path, hatf10::dtd);
        rt::encode_generic(w, record(0x1000, 0));
        rt::encode_generic(w, record(0x7f3c'6000'0010, 3));
        w.close();
    }
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == 2);
    CHECK(got.allocs[1].address == 0x7f3c'6000'0010);
    CHECK(got.allocs[1].thread == 3);
    REQUIRE(got.metadata.size() == 2);
    CHECK((got.metadata[0].field == hatf10::Alloc::address_field && got.metadata[0].a == 6));
    CHECK((got.metadata[1].field == hatf10::Alloc::thread_field && got.metadata[1].op == rt::MetaOp::none));

    rt::WriterOptions strict;
    strict.strict = true;
    rt::TraceWriter w(fresh_path("generic-strict.mtf"), hatf10::dtd, strict);
    try {
        rt::encode_generic(w, record(0x7f3c'6000'0010, 0));
        FAIL("a strict writer took a value too wide");
    } catch (const rt::TraceError& e) {
        CHECK(e.kind == rt::ErrorKind::bad_value);
        CHECK(e.message == "value 139897285378064 of field 'address' (none) does not fit in 4 bytes");
    }
}

TEST_CASE("narrow_after: a widened field stays wide while values need it, and narrows after N that fit fewer bytes") {
    const std::string path = fresh_path("narrow-after.mtf");
    // Sizes against a 1-byte field: two wide values (one widening), then
    // four that fit one byte, of which the first three are not enough.
    std::vector<std::uint64_t> sizes = {10, 300, 70000, 20, 30, 40, 50, 60, 300};
    {
        rt::WriterOptions options;
        options.narrow_after = 4;
        hatf10::Writer w(path, options);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::size_field, 1);
        for (std::uint64_t size : sizes) w.write(hatf10::Alloc{.size = size, .address = 0x1000});
        w.close();
    }
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) CHECK(got.allocs[i].size == sizes[i]);
    // set_width 1; widen to 2 for 300; to 3 for 70000; after 20, 30, 40, 50
    // narrow to 1 (the widest of them); widen to 2 for 300.
    // The address, 0x1000 throughout, narrows from the DTD's 4 bytes to 2
    // after the first four records.
    std::vector<std::uint64_t> widths, address_widths;
    for (const hatf10::Metadata& m : got.metadata) {
        (m.field == hatf10::Alloc::size_field ? widths : address_widths).push_back(m.a);
    }
    CHECK(widths == std::vector<std::uint64_t>{1, 2, 3, 1, 2});
    CHECK(address_widths == std::vector<std::uint64_t>{2});
}

TEST_CASE("narrow_after: delta addresses narrow to the widest recent difference") {
    const std::string path = fresh_path("narrow-after-delta.mtf");
    std::vector<std::uint64_t> addresses;
    std::uint64_t a = 0x5565'4a9e'3000;
    for (int i = 0; i < 40; ++i) {
        a += i % 10 == 0 ? 0x2'0000'0000 : 0x100;  // a jump needing 5 bytes, then steps needing 2
        addresses.push_back(a);
    }
    {
        rt::WriterOptions options;
        options.narrow_after = 8;
        hatf10::Writer w(path, options);
        w.set_interpretation(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, rt::MetaOp::delta, 0x5565'4a9e'3000);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, 2);
        for (std::uint64_t x : addresses) w.write(hatf10::Alloc{.size = 8, .address = x});
        w.close();
    }
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) CHECK(got.allocs[i].address == addresses[i]);
    // Per ten records: widen to 5 at the jump, narrow to 2 after 8 steps.
    std::vector<std::uint64_t> widths;
    for (const hatf10::Metadata& m : got.metadata) {
        if (m.field == hatf10::Alloc::address_field && m.op == rt::MetaOp::width) widths.push_back(m.a);
    }
    CHECK(widths == std::vector<std::uint64_t>{2, 5, 2, 5, 2, 5, 2, 5, 2});
}

TEST_CASE("a strict writer refuses a value too wide") {
    const std::string path = fresh_path("strict.mtf");
    rt::WriterOptions strict;
    strict.strict = true;
    hatf10::Writer w(path, strict);
    CHECK_THROWS_WITH_AS(w.write(hatf10::Alloc{.size = 8, .address = 0x7f3c'6000'0000}),
                         doctest::Contains("does not fit in 4 bytes"), rt::TraceError);
}
