// rt::AutoEncoder: the encodings it picks for data shaped like a heap trace,
// the metadata that carries them, and output that depends only on the input.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <features.hpp>
#include <hatf10.hpp>

#include "auto_recode.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;
using metatf::test::OwnedRecord;

namespace {

std::string fresh_path(const std::string& name) { return metatf::test::fresh_path("metatf-auto", name); }

std::vector<char> contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// n allocs as a 64-bit program makes them: addresses near 0x5565'4a9e'0000
// a few dozen bytes apart, small sizes, one thread, a clock that ticks by 25.
std::vector<OwnedRecord> heap_like(std::size_t n) {
    const auto slot = static_cast<std::uint32_t>(hatf10::RecordType::Alloc);
    std::vector<OwnedRecord> out;
    std::uint64_t address = 0x5565'4a9e'0000;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t size = 16 + 16 * (i * 7 % 5);
        address += size + 16;
        OwnedRecord r{slot, {}};
        const std::uint64_t values[] = {size, address, 4242, 0, 1'000'000 + 25 * i};
        for (std::uint32_t f = 0; f < 5; ++f) r.values.emplace_back(f + 1, values[f], 0, std::vector<std::byte>{});
        r.values.emplace_back(hatf10::Alloc::attributes_attributesLength_field, 0, 0, std::vector<std::byte>{});
        r.values.emplace_back(hatf10::Alloc::attributes_attributesData_field, 0, 0, std::vector<std::byte>{});
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<hatf10::Metadata> metadata_of(const std::string& path) {
    std::vector<hatf10::Metadata> out;
    hatf10::Reader r(path);
    while (r.next()) {
        if (r.type() == hatf10::RecordType::Metadata) out.push_back(r.get<hatf10::Metadata>());
    }
    return out;
}

}  // namespace

TEST_CASE("the auto encoder stores a heap-like trace in fewer bytes, and it reads back the same") {
    const std::vector<OwnedRecord> records = heap_like(5000);
    REQUIRE(records.front().values.size() == 7);
    const std::string path = fresh_path("heap.mtf");
    metatf::test::write_auto(records, path, hatf10::dtd, {}, 1000);
    CHECK(metatf::test::read_owned(path, hatf10::dtd) == records);
    // Initial encodings widen the address to 6 bytes and store the time in 8: 1 + 4 + 6 + 8 = 19 bytes a record.
    // Chosen: size 1 byte, address 1 (delta), thread and heap default, time stride: 3 bytes a record, plus metadata.
    const auto size = fs::file_size(path);
    CHECK(size > 5000 * 3);
    CHECK(size < 5000 * 3 + 6000);
    // The first window sets them; later windows continue them and write no metadata.
    const std::vector<hatf10::Metadata> meta = metadata_of(path);
    std::map<std::uint32_t, std::vector<rt::MetaOp>> by_field;
    for (const hatf10::Metadata& m : meta) by_field[static_cast<std::uint32_t>(m.field)].push_back(m.op);
    CHECK(by_field[hatf10::Alloc::size_field] == std::vector{rt::MetaOp::width});
    CHECK(by_field[hatf10::Alloc::address_field] == std::vector{rt::MetaOp::delta, rt::MetaOp::width});
    CHECK(by_field[hatf10::Alloc::thread_field] == std::vector{rt::MetaOp::default_value});
    CHECK(by_field[hatf10::Alloc::heap_field].empty());  // default 0 already
    CHECK(by_field[hatf10::Alloc::time_field] == std::vector{rt::MetaOp::stride});
}

namespace {

// Allocations and frees as a program makes them: blocks freed mostly soon
// after they were allocated, their addresses reused (`reuse` percent of
// allocations, when a freed block is at hand), 64-bit and scattered.
std::vector<OwnedRecord> churn(std::size_t n, std::uint64_t reuse = 50) {
    const auto alloc = static_cast<std::uint32_t>(hatf10::RecordType::Alloc);
    const auto free = static_cast<std::uint32_t>(hatf10::RecordType::Free);
    std::vector<OwnedRecord> out;
    std::vector<std::uint64_t> live, freed;
    std::uint64_t top = 0x5565'4a9e'0000, seed = 12345;
    const auto next = [&] { return (seed = seed * 6364136223846793005u + 1442695040888963407u) >> 33; };
    const auto tail = [](OwnedRecord& r, std::uint32_t length_field) {
        r.values.emplace_back(length_field, 0, 0, std::vector<std::byte>{});
        r.values.emplace_back(length_field + 1, 0, 0, std::vector<std::byte>{});
    };
    while (out.size() < n) {
        if (live.empty() || next() % 100 < 52) {
            std::uint64_t address = top += 16 * (1 + next() % 8);
            if (!freed.empty() && next() % 100 < reuse) {
                address = freed.back();
                freed.pop_back();
            }
            live.push_back(address);
            OwnedRecord r{alloc, {}};
            const std::uint64_t values[] = {16 + next() % 64, address, 7, 0, 0};
            for (std::uint32_t f = 0; f < 5; ++f) r.values.emplace_back(f + 1, values[f], 0, std::vector<std::byte>{});
            tail(r, hatf10::Alloc::attributes_attributesLength_field);
            out.push_back(std::move(r));
        } else {
            const std::size_t i = live.size() - 1 - std::min<std::size_t>(live.size() - 1, next() % 4 == 0 ? next() % live.size() : next() % 8);
            const std::uint64_t address = live[i];
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
            freed.push_back(address);
            OwnedRecord r{free, {}};
            const std::uint64_t values[] = {address, 7, 0, 0};
            for (std::uint32_t f = 0; f < 4; ++f) r.values.emplace_back(f + 1, values[f], 0, std::vector<std::byte>{});
            tail(r, hatf10::Free::attributes_attributesLength_field);
            out.push_back(std::move(r));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("the auto encoder stores frees as references to live allocations") {
    const std::vector<OwnedRecord> records = churn(20000);
    for (int compress : {0, 3}) {
        CAPTURE(compress);
        rt::WriterOptions options;
        options.compress = compress;
        const std::string path = fresh_path("churn.mtf");
        metatf::test::write_auto(records, path, hatf10::dtd, options, 4096);
        CHECK(metatf::test::read_owned(path, hatf10::dtd) == records);
        bool feeds = false, refers = false;
        for (const hatf10::Metadata& m : metadata_of(path)) {
            feeds |= m.record == hatf10::RecordType::Alloc && m.field == hatf10::Alloc::address_field && m.op == rt::MetaOp::feed && m.a == 1;
            // live or predict (by default): a count back to the value
            const bool reference = m.op == rt::MetaOp::live || m.op == rt::MetaOp::predict;
            refers |= m.record == hatf10::RecordType::Free && m.field == hatf10::Free::address_field && reference && m.a == 1;
        }
        CHECK(feeds);
        CHECK(refers);
        if (compress == 0) {
            // Frees store a 1-byte count, allocations a delta of their addresses, sizes 1 byte:
            // less than 4 bytes a record on average, after the header and its embedded DTD.
            CHECK(fs::file_size(path) < 20000 * 4 + std::strlen(hatf10::dtd.text));
        }
    }
}

TEST_CASE("allocations that reuse freed blocks refer to a pool the frees feed") {
    const std::vector<OwnedRecord> records = churn(20000, 95);
    rt::WriterOptions options;
    options.compress = 3;
    const std::string path = fresh_path("reuse.mtf");
    metatf::test::write_auto(records, path, hatf10::dtd, options, 4096);
    CHECK(metatf::test::read_owned(path, hatf10::dtd) == records);
    // pool -> the record types whose addresses feed it, and refer to it
    std::map<std::uint64_t, std::set<hatf10::RecordType>> feeders, takers;
    for (const hatf10::Metadata& m : metadata_of(path)) {
        const bool address = m.record == hatf10::RecordType::Alloc ? m.field == hatf10::Alloc::address_field
                                                                    : m.field == hatf10::Free::address_field;
        if (address && m.op == rt::MetaOp::feed && m.a != 0) feeders[m.a].insert(m.record);
        if (address && (m.op == rt::MetaOp::live || m.op == rt::MetaOp::predict) && m.a != 0) takers[m.a].insert(m.record);
    }
    // Some pool that allocations refer to is fed by frees, and one that frees refer to by
    // allocations (the encoder may number them differently from window to window).
    using T = hatf10::RecordType;
    const auto pairs = [&](T taker, T feeder) {
        return std::any_of(takers.begin(), takers.end(), [&](const auto& t) { return t.second.count(taker) && feeders[t.first].count(feeder); });
    };
    CHECK(pairs(T::Alloc, T::Free));
    CHECK(pairs(T::Free, T::Alloc));
}

TEST_CASE("the auto encoder's output depends only on the records and the window") {
    std::vector<OwnedRecord> records = heap_like(3000);
    // Outliers in the middle: a far address and a long gap in time.
    std::get<1>(records[1500].values[1]) = 0x7f3c'6000'0010;
    std::get<1>(records[2100].values[4]) += 1'000'000'000;
    for (int compress : {0, 3}) {
        CAPTURE(compress);
        rt::WriterOptions options;
        options.compress = compress;
        const std::string a = fresh_path("same-a.mtf"), b = fresh_path("same-b.mtf");
        metatf::test::write_auto(records, a, hatf10::dtd, options, 512);
        metatf::test::write_auto(records, b, hatf10::dtd, options, 512);
        CHECK(contents(a) == contents(b));
        CHECK(metatf::test::read_owned(a, hatf10::dtd) == records);
    }
}

TEST_CASE("the auto encoder keeps comments and records in their order across windows") {
    std::vector<OwnedRecord> records = heap_like(10);
    const auto comment = static_cast<std::uint32_t>(hatf10::RecordType::Comment);
    const std::string text = "phase two";
    std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()),
                                 reinterpret_cast<const std::byte*>(text.data()) + text.size());
    records.insert(records.begin() + 4, OwnedRecord{comment, {{1, text.size(), 0, {}}, {2, 0, 0, bytes}}});
    const std::string path = fresh_path("comments.mtf");
    metatf::test::write_auto(records, path, hatf10::dtd, {}, 3);
    const std::vector<OwnedRecord> got = metatf::test::read_owned(path, hatf10::dtd);
    CHECK(got == records);
    REQUIRE(got.size() > 4);
    CHECK(got[4].slot == comment);
}

TEST_CASE("a generated writer with auto_window chooses encodings as the AutoEncoder does") {
    const std::vector<OwnedRecord> records = heap_like(5000);
    rt::WriterOptions options;
    options.auto_window = 1000;
    const std::string typed = fresh_path("typed-auto.mtf"), generic = fresh_path("generic-auto.mtf");
    {
        hatf10::Writer w(typed, options);
        w.comment("allocations");
        for (const OwnedRecord& r : records) {
            hatf10::Alloc a;
            a.size = std::get<1>(r.values[0]);
            a.address = std::get<1>(r.values[1]);
            a.thread = std::get<1>(r.values[2]);
            a.heap = std::get<1>(r.values[3]);
            a.time = std::get<1>(r.values[4]);
            CHECK(w.write(a) == 0);  // its offset is not known yet
        }
        w.close();
    }
    std::vector<OwnedRecord> with_comment = records;
    const std::string text = "allocations";
    std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()),
                                 reinterpret_cast<const std::byte*>(text.data()) + text.size());
    with_comment.insert(with_comment.begin(),
                        OwnedRecord{static_cast<std::uint32_t>(hatf10::RecordType::Comment), {{1, text.size(), 0, {}}, {2, 0, 0, bytes}}});
    metatf::test::write_auto(with_comment, generic, hatf10::dtd, {}, 1000);
    CHECK(contents(typed) == contents(generic));
    CHECK(metatf::test::read_owned(typed, hatf10::dtd) == with_comment);
}

TEST_CASE("auto_window is refused with strict, and for a DTD whose tables need write()'s offsets") {
    rt::WriterOptions options;
    options.auto_window = 10;
    options.strict = true;
    const std::string path = fresh_path("refused.mtf");
    CHECK_THROWS_WITH_AS(hatf10::Writer(path, options), "a strict writer keeps its encodings: it cannot have them chosen from the data",
                         rt::TraceError);
    CHECK_FALSE(fs::exists(path));
    options.strict = false;
    CHECK_THROWS_WITH_AS(features::Writer(path, options),
                         "auto_window holds records back, so write() cannot return the offsets that this DTD's sectionOffset fields need",
                         rt::TraceError);
    CHECK_FALSE(fs::exists(path));
}
