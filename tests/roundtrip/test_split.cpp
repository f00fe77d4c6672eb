// Split streams chosen when a trace is written (WriterOptions::split): the
// fields named store their values in sections the writer adds to the
// embedded DTD, and the DTD's own generated reader reads the trace.
#include <filesystem>
#include <fstream>
#include <vector>

#include <features.hpp>
#include <hatf10.hpp>
#include <metatf/container/codec.hpp>

#include "auto_recode.hpp"
#include "columns_read.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;

namespace {

std::string fresh_path(const std::string& name) { return metatf::test::fresh_path("metatf-split", name); }

using metatf::test::error_of;
using metatf::test::read_hatf;

std::uint64_t section_bytes(const rt::Header& h, std::uint8_t section) {
    std::uint64_t n = 0;
    for (const rt::Chunk& c : h.chunks) n += c.section == section ? c.decoded : 0;
    return n;
}

struct Written {
    std::vector<hatf10::Alloc> allocs;
    std::vector<hatf10::Free> frees;
};

// 3000 allocs and frees, the allocs' addresses in a section of their own,
// the frees' addresses and the allocs' sizes sharing another; 4 KiB chunks.
Written write_split(const std::string& path) {
    Written out;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        // 64-bit addresses: the DTD's 4-byte elements widen to 6 bytes.
        out.allocs.push_back({.size = 16 + i % 48, .address = 0x5565'4a9e'0000 + 64 * i, .time = i});
        out.frees.push_back({.address = 0x5565'4a9e'0000 + 32 * i, .time = i});
    }
    rt::WriterOptions options;
    options.split = {"alloc.address", "free.address+alloc.size"};
    options.chunk_bytes = 4096;
    hatf10::Writer w(path, options);
    for (std::size_t i = 0; i < out.allocs.size(); ++i) {
        w.write(out.allocs[i]);
        w.write(out.frees[i]);
    }
    w.close();
    return out;
}

// The column reader gives the trace at `path` exactly as record by record
// decoding does, reading more than `fast` records in runs; stopped every
// `stop` records too, more than `fast_stopped` of them.
void check_columns(const std::string& path, std::size_t fast, std::size_t stop, std::size_t fast_stopped) {
    rt::TraceReader by_records(path, hatf10::dtd);
    const metatf::test::Rows rows = metatf::test::read_by_records(by_records);
    rt::TraceReader by_columns(path, hatf10::dtd);
    const metatf::test::ColumnsRead columns = metatf::test::read_by_columns(by_columns);
    CHECK(columns.rows == rows);
    CHECK(columns.fast > fast);
    // Each run hands its sections' cursors back.
    rt::TraceReader stopping(path, hatf10::dtd);
    const metatf::test::ColumnsRead stopped = metatf::test::read_by_columns(stopping, stop);
    CHECK(stopped.rows == rows);
    CHECK(stopped.fast > fast_stopped);
}

}  // namespace

TEST_CASE("split streams: fields go to sections of their own, and the DTD's reader reads them") {
    const std::string path = fresh_path("split.mtf");
    const auto [allocs, frees] = write_split(path);
    const auto got = read_hatf(path);
    REQUIRE(got.allocs.size() == allocs.size());
    REQUIRE(got.frees.size() == frees.size());
    for (std::size_t i = 0; i < allocs.size(); ++i) {
        CHECK(got.allocs[i].address == allocs[i].address);
        CHECK(got.allocs[i].size == allocs[i].size);
        CHECK(got.frees[i].address == frees[i].address);
        CHECK(got.frees[i].time == frees[i].time);
    }
    // The routing, then each first 64-bit address widening its field's elements.
    using T = hatf10::RecordType;
    struct Meta {
        T record;
        std::uint32_t field;
        rt::MetaOp op;
        std::uint64_t a, b;
        bool operator==(const Meta&) const = default;
    };
    std::vector<Meta> metadata;
    for (const hatf10::Metadata& m : got.metadata) metadata.push_back({m.record, m.field, m.op, m.a, m.b});
    // `split`, not `sectionStride`: the fields are under `none`, which their elements keep.
    const std::vector<Meta> want = {{T::Alloc, hatf10::Alloc::address_field, rt::MetaOp::split, 1, 1},
                                    {T::Free, hatf10::Free::address_field, rt::MetaOp::split, 2, 1},
                                    {T::Alloc, hatf10::Alloc::size_field, rt::MetaOp::split, 2, 1},
                                    {T::Alloc, hatf10::Alloc::address_field, rt::MetaOp::width, 6, 0},
                                    {T::Free, hatf10::Free::address_field, rt::MetaOp::width, 6, 0},
                                    // The DTD's time is the default 0, which these times leave.
                                    {T::Alloc, hatf10::Alloc::time_field, rt::MetaOp::none, 0, 0},
                                    {T::Free, hatf10::Free::time_field, rt::MetaOp::none, 0, 0}};
    CHECK(metadata == want);
    // The DTD's fingerprint, its text and the added sections, which hold the values.
    const rt::TraceReader reader(path, hatf10::dtd);
    CHECK(reader.header().dtd_fingerprint == rt::fingerprint(hatf10::dtd));
    CHECK(reader.header().dtd_text == std::string(hatf10::dtd.text) +
                                          "\n// Value sections added by the writer for split streams:\n"
                                          "section split_1 1 { }\nsection split_2 2 { }\n");
    CHECK(section_bytes(reader.header(), 1) == 6 * allocs.size());
    CHECK(section_bytes(reader.header(), 2) == (6 + 4) * allocs.size());  // free.address and alloc.size, 4 bytes
}

TEST_CASE("split streams: the column reader reads their records in runs, as record by record decoding does") {
    const std::string path = fresh_path("split-columns.mtf");
    write_split(path);
    // Field by field: the metadata, and a record whose value is in a section's next chunk (some 20 of them).
    check_columns(path, 5900, 7, 5000);
}

TEST_CASE("split streams keep the field's interpretation: a delta and a base with units, read alike by every reader") {
    using hatf10::Alloc;
    using T = hatf10::RecordType;
    std::vector<Alloc> written;
    std::uint64_t address = 0x5565'4a9e'0000;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        address += 16 * (i % 7) - 32;  // -2 to 4 units of 16
        written.push_back({.size = 4096 + 512 * (i * 7919 % 200) - 51200, .address = address});  // -100 to 99 units from the base
    }
    for (const int compress : {0, 3}) {
        CAPTURE(compress);
        const std::string path = fresh_path("split-kept.mtf");
        rt::WriterOptions options;
        options.split = {"alloc.address", "alloc.size"};
        options.chunk_bytes = 1024;
        options.compress = compress;
        {
            hatf10::Writer w(path, options);
            // Back in the record as a delta in units of 16, then split again, keeping them.
            w.set_interpretation(T::Alloc, Alloc::address_field, rt::MetaOp::delta, written[0].address);
            w.set_unit(T::Alloc, Alloc::address_field, 16);
            w.set_width(T::Alloc, Alloc::address_field, 1);
            w.set_interpretation(T::Alloc, Alloc::address_field, rt::MetaOp::split, 1, 1);
            // A split field takes a unit and a width for its elements where it is.
            w.set_interpretation(T::Alloc, Alloc::size_field, rt::MetaOp::base_offset, 4096);
            w.set_interpretation(T::Alloc, Alloc::size_field, rt::MetaOp::split, 2, 1);
            w.set_unit(T::Alloc, Alloc::size_field, 512);
            w.set_width(T::Alloc, Alloc::size_field, 2);
            for (const Alloc& a : written) w.write(a);
            // What a split cannot keep, and where it cannot go.
            CHECK(error_of([&] { w.set_interpretation(T::Alloc, Alloc::time_field, rt::MetaOp::split, 1, 1); }) ==
                  "metadata for field 'time' of record 'alloc': 'split' keeps none, baseOffset or delta, not 'default'");
            CHECK(error_of([&] { w.set_interpretation(T::Alloc, Alloc::size_field, rt::MetaOp::split, 9, 1); }) ==
                  "metadata for field 'size' of record 'alloc': there is no section 9");
            CHECK(error_of([&] { w.set_interpretation(T::Alloc, Alloc::size_field, rt::MetaOp::split, 2, 0); }) ==
                  "metadata for field 'size' of record 'alloc': 'split' needs a positive stride");
            w.close();
        }
        CHECK(read_hatf(path).allocs == written);
        // The DTD-driven decoder, and the metadata: two splits at the start, four changes of each field.
        std::size_t metadata = 0;
        std::vector<std::uint64_t> sizes, addresses;
        for (const auto& r : metatf::test::read_owned(path, hatf10::dtd, &metadata)) {
            sizes.push_back(std::get<1>(r.values[0]));
            addresses.push_back(std::get<1>(r.values[1]));
        }
        CHECK(metadata == 10);
        REQUIRE(sizes.size() == written.size());
        for (std::size_t i = 0; i < written.size(); ++i) {
            CHECK(sizes[i] == written[i].size);
            CHECK(addresses[i] == written[i].address);
        }
        check_columns(path, 2900, 11, 2500);
        // The differences in one byte, the offsets in two, in units.
        const rt::TraceReader reader(path, hatf10::dtd);
        CHECK(section_bytes(reader.header(), 1) == written.size());
        CHECK(section_bytes(reader.header(), 2) == 2 * written.size());
        // Compressed, the 2-byte elements' chunks are smaller in byte planes; the 1-byte ones have none.
        for (const rt::Chunk& c : reader.header().chunks) {
            CAPTURE(int(c.section));
            const bool planar = compress != 0 && c.section == 2;
            CHECK((c.codec == 2) == planar);  // 1 (zstd) or 0 where zstd did not make a chunk smaller
            CHECK(c.planes == (planar ? 2 : 0));
            if (compress == 0) CHECK(c.codec == 0);
        }
    }
}

TEST_CASE("byte planes: byte i of a chunk in plane i % planes, and back, whatever the chunk's length") {
    const auto bytes = [](std::initializer_list<int> v) {
        std::vector<std::byte> out;
        for (int b : v) out.push_back(std::byte(b));
        return out;
    };
    const std::vector<std::byte> seven = bytes({0, 1, 2, 3, 4, 5, 6});
    std::vector<std::byte> planar(7);
    rt::detail::to_planes(seven, 3, planar.data());
    CHECK(planar == bytes({0, 3, 6, 1, 4, 2, 5}));
    for (unsigned planes = rt::min_planes; planes <= rt::max_planes; ++planes) {
        for (std::size_t n = 0; n < 20; ++n) {
            std::vector<std::byte> in(n), there(n), back(n);
            for (std::size_t i = 0; i < n; ++i) in[i] = std::byte(i * 37 + planes);
            rt::detail::to_planes(in, planes, there.data());
            rt::detail::from_planes(there, planes, back.data());
            CHECK(back == in);
        }
    }
}

TEST_CASE("split streams under the auto encoder: each window's elements in the interpretation and width that take fewest bytes") {
    std::vector<metatf::test::OwnedRecord> records;
    const auto slot = static_cast<std::uint32_t>(hatf10::RecordType::Alloc);
    for (std::uint64_t i = 0; i < 5000; ++i) {
        metatf::test::OwnedRecord r{slot, {}};
        const std::uint64_t address = i < 2500 ? 0x100 + i : 0x7f3c'6000'0000 + 16 * i;  // steps of 1, then of 16
        const std::uint64_t values[] = {16, address, 1, 0, 1000 + 25 * i};
        for (std::uint32_t f = 0; f < 5; ++f) r.values.emplace_back(f + 1, values[f], 0, std::vector<std::byte>{});
        r.values.emplace_back(hatf10::Alloc::attributes_attributesLength_field, 0, 0, std::vector<std::byte>{});
        r.values.emplace_back(hatf10::Alloc::attributes_attributesData_field, 0, 0, std::vector<std::byte>{});
        records.push_back(std::move(r));
    }
    for (const int compress : {0, 3}) {
        CAPTURE(compress);
        rt::WriterOptions options;
        options.split = {"alloc.address"};
        options.compress = compress;
        const std::string path = fresh_path("split-auto.mtf");
        metatf::test::write_auto(records, path, hatf10::dtd, options, 2500);
        CHECK(metatf::test::read_owned(path, hatf10::dtd) == records);
        if (compress != 0) continue;  // compressed, the choice is zstd's estimate's
        // Uncompressed, bytes decide: a delta of 1 byte in each window, set in
        // the record and split again (a continued delta would need 6 bytes in the second).
        using Op = std::pair<rt::MetaOp, std::uint64_t>;
        std::vector<Op> ops;
        for (const hatf10::Metadata& m : read_hatf(path).metadata) {
            if (m.record == hatf10::RecordType::Alloc && m.field == hatf10::Alloc::address_field) ops.emplace_back(m.op, m.a);
        }
        const std::vector<Op> want = {{rt::MetaOp::split, 1}, {rt::MetaOp::delta, 0x100}, {rt::MetaOp::width, 1}, {rt::MetaOp::split, 1},
                                      {rt::MetaOp::delta, 0x7f3c'6000'0000 + 16 * 2500}, {rt::MetaOp::split, 1}};
        CHECK(ops == want);
        CHECK(section_bytes(rt::TraceReader(path, hatf10::dtd).header(), 1) == records.size());
    }
}

TEST_CASE("split streams: a name that is not an integer field of one record is refused, naming it") {
    const std::string path = fresh_path("split-bad.mtf");
    const auto refusal = [&](std::vector<std::string> split) {
        rt::WriterOptions options;
        options.split = std::move(split);
        return error_of([&] { rt::TraceWriter w(path, hatf10::dtd, options); });
    };
    CHECK(refusal({"alloc"}) == "split streams: 'alloc' is not record.field");
    CHECK(refusal({"malloc.size"}) == "split streams: the DTD has no record 'malloc'");
    CHECK(refusal({"alloc.sizes"}) == "split streams: record 'alloc' has no field 'sizes'");
    CHECK(refusal({"alloc.attributes.attributesData"}) == "split streams: field 'attributes.attributesData' of record 'alloc' is not an integer");
    CHECK(refusal({"alloc.size", "free.address+alloc.size"}) == "split streams: 'alloc.size' is named twice");
    CHECK(refusal({"metadata.field"}) == "split streams: 'metadata' is a record of the trace's own");
    rt::WriterOptions options;
    options.split = {"mark.id"};
    CHECK(error_of([&] { rt::TraceWriter w(path, features::dtd, options); }) ==
          "split streams: record 'mark' belongs to section 3; only the fields of global records can be split");
    CHECK_FALSE(fs::exists(path));
}

TEST_CASE("a reader refuses added sections it cannot take, at the embedded DTD") {
    const auto refusal = [](const rt::DtdDesc& dtd, const std::string& added, const char* name) {
        const std::string text = std::string(dtd.text) + added;
        rt::DtdDesc with = dtd;
        with.text = text.c_str();  // the text is not in the fingerprint
        const std::string path = fresh_path(name);
        {
            rt::TraceWriter w(path, with);
            w.close();
        }
        return error_of([&] { rt::TraceReader r(path, dtd); });
    };
    const std::string marker = "\n// Value sections added by the writer for split streams:\n";
    CHECK(refusal(hatf10::dtd, marker + "section split_1 1 {}\n", "form.mtf") ==
          "the embedded DTD's added sections: 'section split_1 1 {}' is not a line 'section split_N N { }'");
    CHECK(refusal(hatf10::dtd, marker + "section split_1 1 { }", "end.mtf") ==
          "the embedded DTD's added sections: 'section split_1 1 { }' is not a line 'section split_N N { }'");
    CHECK(refusal(hatf10::dtd, marker + "section split_3 3 { }\nsection split_3 3 { }\n", "twice.mtf") ==
          "the embedded DTD's added sections: section 3 is added twice");
    CHECK(refusal(features::dtd, marker + "section split_2 2 { }\n", "own.mtf") ==
          "the embedded DTD's added sections: section 2 is the DTD's own");
    // Without added sections, the same text reads as it always did.
    CHECK(refusal(hatf10::dtd, "\n// a comment\n", "plain.mtf").empty());
}
