// `predict` fields (predictor.hpp, docs/trace-format.md section 5.3): the
// codes a writer stores, worked out by hand from the rules; references into
// a pool before predictions; and the errors of codes a reader cannot answer.
#include <doctest/doctest.h>

#include <metatf/io/generic.hpp>

#include <hatf10.hpp>
#include <predicted.hpp>
#include <type_traits>
#include <variant>

#include "trace_support.hpp"

namespace {

namespace rt = metatf::rt;
using metatf::test::TempTrace;
using metatf::test::TraceBytes;
using namespace hatf10;

// Frees of `addresses` whose address is `predict pool` in 1 byte, after
// `allocs` allocations (16 bytes apart from 0x1000) fed to pool 1. Version
// 1: the records end where the index starts.
void write_predicted(const std::string& path, const std::vector<std::uint64_t>& addresses, std::uint64_t pool, std::uint64_t allocs = 0) {
    rt::WriterOptions options;
    options.output.replace = true;
    options.version = 1;
    options.strict = true;  // a predict field refuses no value
    Writer w(path, options);
    w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::feed, 1);
    w.set_width(RecordType::Free, Free::address_field, 1);
    w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::predict, pool, rt::all_predictors);
    for (std::uint64_t i = 0; i < allocs; ++i) w.write(Alloc{.size = 16, .address = 0x1000 + 16 * i});
    for (std::uint64_t a : addresses) w.write(Free{.address = a});
    w.close();
}

std::vector<std::uint64_t> frees(const std::string& path) {
    Reader r(path);
    std::vector<std::uint64_t> out;
    while (r.next()) {
        if (r.type() == RecordType::Free) out.push_back(r.get<Free>().address);
    }
    return out;
}

}  // namespace

TEST_CASE("a predict field stores the code of the first predictor that guesses, else the escape and the difference") {
    TempTrace t("predict");
    // 100: nothing seen, every prediction 0: escape, zigzag(100) = 200 = LEB128 c8 01.
    // 100: the last value (code 0).
    // 200: last 100, before 100, stride 100, FCM1 of 100 is 100, FCM3 of (100, 100, 0) unseen,
    //      DFCM1 of difference 0 is the 100 that followed the first 0: 100 + 100 (code 5).
    // 300: 200 + the stride of 100 (code 2).
    // 250: nothing guesses it (DFCM1 of difference 100 says 400, DFCM3 300):
    //      escape, the difference from the last escaped value, 100:
    //      zigzag(150) = 300 = LEB128 ac 02.
    // 300: the value before the last (code 1).
    write_predicted(t.path(), {100, 100, 200, 300, 250, 300}, 0);
    CHECK(frees(t.path()) == std::vector<std::uint64_t>{100, 100, 200, 300, 250, 300});
    static_assert(Free::tag == 5);
    CHECK(TraceBytes::load(t.path()).records_tail(16) == "05 ff c8 01 05 00 05 05 05 02 05 ff ac 02 05 01");
}

TEST_CASE("a predict field with a pool names a live value first, then a predictor, then escapes") {
    TempTrace t("predict-pool");
    // After allocations at 0x1000 + 16 i (i < 10): the newest is code 7 (7 predictors, then 0 back);
    // 0x1000 + 16 * 5 is 3 back once the newest left: code 10; freed twice, the second is not live
    // but the last value guesses it (code 0).
    const std::uint64_t newest = 0x1000 + 16 * 9, fifth = 0x1000 + 16 * 5;
    write_predicted(t.path(), {newest, fifth, fifth}, 1, 10);
    CHECK(frees(t.path()) == std::vector<std::uint64_t>{newest, fifth, fifth});
    CHECK(TraceBytes::load(t.path()).records_tail(6) == "05 07 05 0a 05 00");
}

namespace {

// The error of reading the trace of write_predicted() of `addresses` with
// its last byte of records set to `last`; `at` is that byte's offset.
std::optional<rt::TraceError> error_with(const std::vector<std::uint64_t>& addresses, int last, std::uint64_t pool,
                                         std::uint64_t allocs, std::uint64_t& at) {
    TempTrace t("predict-bad");
    write_predicted(t.path(), addresses, pool, allocs);
    TraceBytes b = TraceBytes::load(t.path());
    at = b.word(TraceBytes::index_offset) - 1;
    b.b.at(at) = static_cast<std::uint8_t>(last);
    b.save(t.path());
    return metatf::test::read_error<Reader>(t.path());
}

}  // namespace

TEST_CASE("predict codes a reader cannot answer are errors at the code") {
    std::uint64_t at = 0;
    // The second free of 0x1000 is a last-value hit, code 0 in the last byte.
    auto e = error_with({0x1000, 0x1000}, 9, 0, 0, at);
    REQUIRE(e);
    CHECK(e->kind == rt::ErrorKind::bad_value);
    CHECK(e->offset == at);
    CHECK(std::string(e->what()).ends_with("field 'address' stores code 9, which names neither one of its 7 predictors nor the escape, and the field has no pool"));
    e = error_with({0x1000, 0x1000}, 7 + 3, 1, 3, at);  // 3 allocations, the first freed: 2 live
    REQUIRE(e);
    CHECK(e->offset == at);
    CHECK(std::string(e->what()).ends_with("field 'address' refers 3 values back in pool 1, which holds 2"));
    // 2^63 up from the last value: zigzag 2^64 - 1, nine bytes ff and a last 01.
    const std::vector<std::uint64_t> far = {0x1000, 0x1000 + (std::uint64_t(1) << 63)};
    e = error_with(far, 0x02, 0, 0, at);  // a tenth byte holds one bit
    REQUIRE(e);
    CHECK(e->offset == at - 9);
    CHECK(std::string(e->what()).ends_with("an escaped difference does not fit in 64 bits (LEB128 of more than 10 bytes)"));
    e = error_with({0x1000, 0x1000 + 1000}, 0x8f, 0, 0, at);  // zigzag 2000, d0 0f, goes on past the records
    REQUIRE(e);
    CHECK(e->kind == rt::ErrorKind::truncated);
}

TEST_CASE("metadata setting predict is checked") {
    TempTrace t("predict-meta");
    Writer w(t.path());
    const auto message = [&](auto&& change) {
        const auto e = metatf::test::error_of(change);
        return e ? std::string(e->what()) : std::string();
    };
    CHECK(message([&] { w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::predict, 5); })
              .ends_with("field 'address' of record 'free': there is no pool 5 (pools are 1 to 4)"));
    CHECK(message([&] { w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::predict, 0); }).empty());
    CHECK(message([&] { w.set_width(RecordType::Free, Free::address_field, 0); })
              .ends_with("field 'address' of record 'free': a predict field needs a width of 1 to 8 bytes"));
}

TEST_CASE("a DTD's own predict settings need no metadata, and segments decode alone") {
    TempTrace t("predict-dtd");
    using predicted::Alloc, predicted::Free;
    using Event = std::variant<Alloc, Free>;
    std::vector<Event> written;
    for (std::uint64_t i = 0; i < 20000; ++i) {
        const std::uint64_t address = 0x7f0000000000 + 64 * (i % 700);
        written.emplace_back(Alloc{.size = 16 + 16 * (i % 3), .address = address});
        if (i % 4 != 3) written.emplace_back(Free{.address = address});
    }
    rt::WriterOptions options;
    options.output.replace = true;
    options.strict = true;
    options.chunk_bytes = 4096;  // segments of about 4 KiB: tables and histories start empty in each
    {
        predicted::Writer w(t.path(), options);
        for (const auto& r : written) std::visit([&](const auto& x) { w.write(x); }, r);
        w.close();
    }
    predicted::Reader r(t.path());
    std::vector<Event> read;
    while (r.next()) {
        REQUIRE(r.type() != predicted::RecordType::Metadata);
        if (r.type() == predicted::RecordType::Alloc) read.emplace_back(r.get<Alloc>());
        if (r.type() == predicted::RecordType::Free) read.emplace_back(r.get<Free>());
    }
    CHECK(read == written);
    CHECK(r.runtime().header().record_count == written.size());
}

TEST_CASE("records with predict fields are read with their plan, and every path reads the same values") {
    TempTrace t("predict-planned");
    // 300 allocations fed to pool 1, then frees: live ones (pool codes),
    // repeats (predictor codes) and new addresses (escapes, which leave the plan).
    std::vector<std::uint64_t> addresses;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        const std::uint64_t k = i * 7919 % 300;
        addresses.push_back(i % 5 == 0 ? 0x900000 + 48 * i : i % 5 == 1 ? addresses.back() : 0x1000 + 16 * k);
    }
    rt::WriterOptions options;
    options.output.replace = true;
    options.strict = true;
    {
        Writer w(t.path(), options);
        w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::feed, 1);
        w.set_width(RecordType::Free, Free::address_field, 1);
        w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::predict, 1, rt::all_predictors);
        for (std::uint64_t i = 0; i < 300; ++i) w.write(Alloc{.size = 16, .address = 0x1000 + 16 * i});
        for (std::uint64_t a : addresses) w.write(Free{.address = a});
        w.close();
    }
    CHECK(frees(t.path()) == addresses);
    std::vector<std::uint64_t> visited, generic;
    Reader visiting(t.path());
    visiting.visit([&](const auto& r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, Free>) visited.push_back(r.address);
    });
    CHECK(visited == addresses);
    const rt::RecordPlan& plan = visiting.runtime().plan(static_cast<std::uint32_t>(RecordType::Free));
    CHECK(plan.fixed);
    CHECK(plan.predicts == std::uint64_t(1) << Free::address_field);
    rt::TraceReader reader(t.path(), Codec::dtd);
    rt::GenericRecord record;
    while (reader.begin_record()) {
        rt::decode_generic(reader, record);
        if (record.slot == static_cast<std::uint32_t>(RecordType::Free)) generic.push_back(record.values.at(0).integer);
    }
    CHECK(generic == addresses);
}
