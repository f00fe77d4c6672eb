// A field's unit (metadata property 10, docs/trace-format.md section 6): the
// stored integer times the unit is the value (none), the offset from the
// base (baseOffset) or the difference from the previous value (delta).
// Writers refuse, or with strict off leave the unit for, a value that is not
// a whole number of units; the auto encoder picks a unit where it saves bytes.
#include <filesystem>
#include <functional>
#include <map>
#include <type_traits>
#include <string>
#include <vector>

#include <hatf10.hpp>
#include <ptf.hpp>
#include <metatf/io/generic.hpp>

#include <doctest/doctest.h>

#include "auto_recode.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;
using metatf::test::error_of;
using hatf10::Alloc;
using hatf10::RecordType;

namespace {

std::string fresh_path(const std::string& name) { return metatf::test::fresh_path("metatf-units", name); }

// The allocs and metadata records of a trace through next(); visit() must
// give the same allocs.
struct Read {
    std::vector<Alloc> allocs;
    std::vector<hatf10::Metadata> metadata;
};

Read read_all(const std::string& path) {
    Read out;
    hatf10::Reader r(path);
    while (r.next()) {
        if (r.type() == RecordType::Alloc) out.allocs.push_back(r.get<Alloc>());
        if (r.type() == RecordType::Metadata) out.metadata.push_back(r.get<hatf10::Metadata>());
    }
    std::vector<Alloc> visited;
    hatf10::Reader v(path);
    v.visit([&](const auto& record) {
        if constexpr (std::is_same_v<std::decay_t<decltype(record)>, Alloc>) visited.push_back(record);
    });
    CHECK(visited == out.allocs);
    return out;
}


}  // namespace

TEST_CASE("units: values stored in units come back whole under none, baseOffset and delta") {
    const std::string path = fresh_path("units.mtf");
    const std::vector<Alloc> written = {
        {.size = 4096, .address = 0x10000000, .time = 5'000'000},
        {.size = 512, .address = 0x10000000 - 0x30, .time = 5'002'000},  // a negative delta
        {.size = 65536 * 512, .address = 0x10000000 + 0x7ff0, .time = 4'999'000},
    };
    {
        hatf10::Writer w(path);
        w.set_unit(RecordType::Alloc, Alloc::size_field, 512);
        w.set_width(RecordType::Alloc, Alloc::size_field, 1);
        w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::delta, 0x10000000);
        w.set_unit(RecordType::Alloc, Alloc::address_field, 16);
        w.set_width(RecordType::Alloc, Alloc::address_field, 2);
        w.set_interpretation(RecordType::Alloc, Alloc::time_field, rt::MetaOp::base_offset, 5'000'000);
        w.set_width(RecordType::Alloc, Alloc::time_field, 1);
        w.set_unit(RecordType::Alloc, Alloc::time_field, 1000);
        for (const Alloc& a : written) w.write(a);
        w.close();
    }
    const Read read = read_all(path);
    CHECK(read.allocs == written);
    // 65536 units of 512 need a third byte of size: the writer widened it, and set no other unit.
    REQUIRE(read.metadata.size() == 9);
    CHECK(read.metadata[8].op == rt::MetaOp::width);
    CHECK(read.metadata[8].a == 3);

    // The generic decoder agrees.
    std::vector<std::uint64_t> sizes;
    for (const auto& r : metatf::test::read_owned(path, hatf10::dtd)) sizes.push_back(std::get<1>(r.values[0]));
    CHECK(sizes == std::vector<std::uint64_t>{4096, 512, 65536 * 512});
}

TEST_CASE("units: a strict writer refuses a value that is not a whole number of units") {
    const std::string path = fresh_path("strict.mtf");
    rt::WriterOptions options;
    options.strict = true;
    hatf10::Writer w(path, options);
    w.set_unit(RecordType::Alloc, Alloc::size_field, 16);
    w.write(Alloc{.size = 32, .address = 1});
    CHECK(error_of([&] { w.write(Alloc{.size = 24, .address = 1}); }) ==
          "value 24 of field 'size' (none) is not a multiple of the field's unit, 16");
    CHECK_FALSE(fs::exists(path));
    // The message names the value, not the number of units it stores.
    hatf10::Writer narrow(fresh_path("narrow.mtf"), options);
    narrow.set_unit(RecordType::Alloc, Alloc::size_field, 1000);
    narrow.set_width(RecordType::Alloc, Alloc::size_field, 1);
    CHECK(error_of([&] { narrow.write(Alloc{.size = 300000, .address = 1}); }) ==
          "value 300000 of field 'size' (none) does not fit in 1 bytes in units of 1000");
}

TEST_CASE("units: otherwise the writer returns the field to unit 1 before such a value") {
    const std::string path = fresh_path("adapt.mtf");
    {
        hatf10::Writer w(path);
        w.set_interpretation(RecordType::Alloc, Alloc::time_field, rt::MetaOp::delta, 0);
        w.set_unit(RecordType::Alloc, Alloc::time_field, 1000);
        w.write(Alloc{.size = 1, .address = 1, .time = 3000});
        w.write(Alloc{.size = 1, .address = 1, .time = 3001});
        w.write(Alloc{.size = 1, .address = 1, .time = 4001});
        w.close();
    }
    const Read read = read_all(path);
    REQUIRE(read.allocs.size() == 3);
    CHECK(read.allocs[1].time == 3001);
    CHECK(read.allocs[2].time == 4001);
    const auto& meta = read.metadata;
    REQUIRE(meta.size() == 3);
    CHECK(meta[2].op == rt::MetaOp::unit);
    CHECK(meta[2].a == 1);
    // A field that stores nothing has no use for its unit: a default that is no multiple keeps it.
    {
        hatf10::Writer w(path, [] {
            rt::WriterOptions o;
            o.output.replace = true;
            return o;
        }());
        w.set_unit(RecordType::Alloc, Alloc::thread_field, 1000);
        w.set_interpretation(RecordType::Alloc, Alloc::thread_field, rt::MetaOp::default_value, 7);
        w.write(Alloc{.size = 1, .address = 1, .thread = 7});
        w.close();
    }
    CHECK(read_all(path).metadata.size() == 2);
}

TEST_CASE("units: the auto encoder stores timestamps that fall on microseconds in microseconds") {
    // Times in nanoseconds, each a whole number of microseconds, 1 to 30 ms apart.
    const auto slot = static_cast<std::uint32_t>(RecordType::Alloc);
    std::vector<metatf::test::OwnedRecord> records;
    std::uint64_t time = 3'612'000'000'000;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        time += 1000 * (1000 + (i * 7919) % 29000);
        metatf::test::OwnedRecord r{slot, {}};
        const std::uint64_t values[] = {512 * (1 + i % 8), 0x10000000 + 4096 * i, 1, 0, time};
        for (std::uint32_t f = 0; f < 5; ++f) r.values.emplace_back(f + 1, values[f], 0, std::vector<std::byte>{});
        r.values.emplace_back(Alloc::attributes_attributesLength_field, 0, 0, std::vector<std::byte>{});
        r.values.emplace_back(Alloc::attributes_attributesData_field, 0, 0, std::vector<std::byte>{});
        records.push_back(std::move(r));
    }
    const std::string path = fresh_path("auto.mtf");
    metatf::test::write_auto(records, path, hatf10::dtd, {}, 1000);
    CHECK(metatf::test::read_owned(path, hatf10::dtd) == records);
    std::map<std::uint32_t, std::uint64_t> units;
    for (const hatf10::Metadata& m : read_all(path).metadata) {
        if (m.op == rt::MetaOp::unit) units[m.field] = m.a;
    }
    // Time deltas of 1-30 ms: 2 bytes in microseconds (4 in nanoseconds); addresses 4096 apart: stride.
    CHECK(units[Alloc::time_field] == 1000);
    CHECK(units[Alloc::size_field] == 512);
    CHECK(units.count(Alloc::address_field) == 0);
    // 1 tag + 1 size + 2 time = 4 bytes a record, the metadata of three windows and the container.
    const std::string empty = fresh_path("empty.mtf");
    metatf::test::write_auto({}, empty, hatf10::dtd, {}, 1000);
    CHECK(fs::file_size(path) - fs::file_size(empty) < 3000 * 4 + 200);
}

TEST_CASE("units: a repeated field with one value off the unit is widened for all its values at unit 1") {
    const std::string path = fresh_path("repeat.mtf");
    ptf::Fo fo;
    fo.formatId = 41;
    fo.numberOfDataMembers = 2;
    fo.numberOfDataMembers_items = {{200000}, {7}};  // 200 units of 1000 (1 byte); 7 is not a multiple
    {
        ptf::Writer w(path);
        w.set_unit(ptf::RecordType::Fo, ptf::Fo::dataMemberFormatId_field, 1000);
        w.set_width(ptf::RecordType::Fo, ptf::Fo::dataMemberFormatId_field, 1);
        w.write(fo);
        w.close();
    }
    ptf::Reader r(path);
    std::vector<ptf::Metadata> metadata;
    bool found = false;
    while (r.next()) {
        if (r.type() == ptf::RecordType::Metadata) metadata.push_back(r.get<ptf::Metadata>());
        if (r.type() == ptf::RecordType::Fo) {
            CHECK(r.get<ptf::Fo>() == fo);
            found = true;
        }
    }
    CHECK(found);
    // unit 1000, width 1, then unit 1 and the 3 bytes 200000 takes.
    REQUIRE(metadata.size() == 4);
    CHECK(metadata[2].op == rt::MetaOp::unit);
    CHECK(metadata[2].a == 1);
    CHECK(metadata[3].op == rt::MetaOp::width);
    CHECK(metadata[3].a == 3);
}
