// WriterOptions::widen: a generated writer given a value wider than its
// field widens the field with metadata for that one record, and the reader
// gets every value back.
#include <filesystem>
#include <vector>

#include <hatf10.hpp>

#include <doctest/doctest.h>

namespace fs = std::filesystem;
namespace rt = metatf::rt;

namespace {

std::string fresh_path(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / "metatf-widen";
    fs::create_directories(dir);
    fs::remove(dir / name);
    return (dir / name).string();
}

struct Read {
    std::vector<hatf10::Alloc> allocs;
    std::vector<hatf10::Metadata> metadata;
};

Read read_all(const std::string& path) {
    Read out;
    hatf10::Reader r(path);
    while (r.next()) {
        if (r.type() == hatf10::RecordType::Alloc) out.allocs.push_back(r.get<hatf10::Alloc>());
        if (r.type() == hatf10::RecordType::Metadata) out.metadata.push_back(r.get<hatf10::Metadata>());
    }
    return out;
}

}  // namespace

TEST_CASE("a writer that widens: a 64-bit address and a negative delta are written, each widening only its own record") {
    const std::string path = fresh_path("widen.mtf");
    const std::vector<hatf10::Alloc> allocs = {
        {.size = 16, .address = 0x1000},
        {.size = 16, .address = 0x7f3c'6000'0010},  // needs 6 bytes (the DTD's address is 4)
        {.size = 70000, .address = 0x2000},         // the size (2 bytes below) needs 3
        {.size = 16, .address = 0x2040},
    };
    {
        rt::WriterOptions options;
        options.widen = true;
        hatf10::Writer w(path, options);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::size_field, 2);
        for (const hatf10::Alloc& a : allocs) w.write(a);
        w.close();
    }
    const Read got = read_all(path);
    REQUIRE(got.allocs.size() == allocs.size());
    for (std::size_t i = 0; i < allocs.size(); ++i) {
        CHECK(got.allocs[i].size == allocs[i].size);
        CHECK(got.allocs[i].address == allocs[i].address);
    }
    // The set_width, then around each wide record one metadata record to widen and one to narrow back.
    REQUIRE(got.metadata.size() == 5);
    CHECK(got.metadata[1].field == hatf10::Alloc::address_field);
    CHECK(got.metadata[1].a == 6);
    CHECK(got.metadata[2].a == 4);
    CHECK(got.metadata[3].field == hatf10::Alloc::size_field);
    CHECK(got.metadata[3].a == 3);
    CHECK(got.metadata[4].a == 2);
}

TEST_CASE("a writer that widens: delta fields widen for the difference, and the difference restarts nothing") {
    const std::string path = fresh_path("widen-delta.mtf");
    const std::vector<std::uint64_t> addresses = {0x5565'4a9e'3000, 0x5565'4a9e'3040, 0x7f3c'6000'0000, 0x7f3c'6000'0020,
                                                  0x5565'4a9e'3080};
    {
        rt::WriterOptions options;
        options.widen = true;
        hatf10::Writer w(path, options);
        w.set_interpretation(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, rt::MetaOp::delta, 0x5565'4a9e'3000);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, 1);
        for (std::uint64_t a : addresses) w.write(hatf10::Alloc{.size = 8, .address = a});
        w.close();
    }
    const Read got = read_all(path);
    REQUIRE(got.allocs.size() == addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) CHECK(got.allocs[i].address == addresses[i]);
    // Two jumps between regions widen; the steps of 0x40 and 0x20 fit one signed byte.
    CHECK(got.metadata.size() == 2 + 4);
}

TEST_CASE("narrow_after: a widened field stays wide while values need it, and narrows after N that fit fewer bytes") {
    const std::string path = fresh_path("narrow-after.mtf");
    // Sizes against a 1-byte field: two wide values (one widening), then
    // four that fit one byte, of which the first three are not enough.
    std::vector<std::uint64_t> sizes = {10, 300, 70000, 20, 30, 40, 50, 60, 300};
    {
        rt::WriterOptions options;
        options.widen = true;
        options.narrow_after = 4;
        hatf10::Writer w(path, options);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::size_field, 1);
        for (std::uint64_t size : sizes) w.write(hatf10::Alloc{.size = size, .address = 0x1000});
        w.close();
    }
    const Read got = read_all(path);
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
        options.widen = true;
        options.narrow_after = 8;
        hatf10::Writer w(path, options);
        w.set_interpretation(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, rt::MetaOp::delta, 0x5565'4a9e'3000);
        w.set_width(hatf10::RecordType::Alloc, hatf10::Alloc::address_field, 2);
        for (std::uint64_t x : addresses) w.write(hatf10::Alloc{.size = 8, .address = x});
        w.close();
    }
    const Read got = read_all(path);
    REQUIRE(got.allocs.size() == addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) CHECK(got.allocs[i].address == addresses[i]);
    // Per ten records: widen to 5 at the jump, narrow to 2 after 8 steps.
    std::vector<std::uint64_t> widths;
    for (const hatf10::Metadata& m : got.metadata) {
        if (m.field == hatf10::Alloc::address_field && m.op == rt::MetaOp::width) widths.push_back(m.a);
    }
    CHECK(widths == std::vector<std::uint64_t>{2, 5, 2, 5, 2, 5, 2, 5, 2});
}

TEST_CASE("without widen, a value too wide is still refused") {
    const std::string path = fresh_path("strict.mtf");
    hatf10::Writer w(path);
    CHECK_THROWS_WITH_AS(w.write(hatf10::Alloc{.size = 8, .address = 0x7f3c'6000'0000}),
                         doctest::Contains("does not fit in 4 bytes"), rt::TraceError);
}
