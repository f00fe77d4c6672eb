// Pools of live values (live_pool.hpp): the pool against a plain model, a
// free's address as a reference to a live allocation through the generated
// HATF codec and through a DTD that sets them up itself, escapes, and the errors of references a pool cannot answer.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <hatf10.hpp>
#include <pools.hpp>
#include <random>
#include <unordered_map>
#include <variant>

#include "trace_support.hpp"

namespace {

namespace rt = metatf::rt;
using metatf::test::TempTrace;
using metatf::test::TraceBytes;
using namespace hatf10;

// The pool's rules, spelled out on a list: values in order of addition,
// the newest at the back.
struct Model {
    std::deque<std::uint64_t> live;
    void add(std::uint64_t v) {
        live.push_back(v);
        if (live.size() > rt::max_live) live.pop_front();
    }
    std::optional<std::uint64_t> back_of(std::uint64_t v) const {
        for (std::size_t i = live.size(); i-- > 0;) {
            if (live[i] == v) return live.size() - 1 - i;
        }
        return std::nullopt;
    }
};

}  // namespace

TEST_CASE("a pool agrees with a list of live values through adds, references and compactions") {
    rt::LivePools writer;
    rt::ReadPools reader;
    Model model;
    std::mt19937_64 rng(7);
    for (int step = 0; step < 200000; ++step) {
        if (rng() % 100 < 55 || model.live.empty()) {
            const std::uint64_t v = rng() % 5000;  // repeats: a value may be live twice
            writer.feed(1, v);
            reader.feed(1, v);
            model.add(v);
        } else {
            const std::uint64_t back = rng() % 16 == 0 ? rng() % model.live.size() : rng() % std::min<std::size_t>(8, model.live.size());
            const std::uint64_t v = model.live[model.live.size() - 1 - back];
            const auto found = writer.find(1, v);
            REQUIRE(found);
            const auto written = writer.back_of(1, v);
            REQUIRE(written == model.back_of(v));  // the newest copy
            writer.refer(1, *found);
            CHECK(reader.refer_back(1, *written) == v);
            model.live.erase(model.live.end() - 1 - static_cast<std::ptrdiff_t>(*written));
        }
        writer.end_record();
        reader.end_record();
        REQUIRE(writer.live(1) == model.live.size());
        REQUIRE(reader.live(1) == model.live.size());
    }
    CHECK(reader.refer_back(1, model.live.size()) == std::nullopt);
    CHECK(writer.back_of(1, 5000) == std::nullopt);
}

TEST_CASE("a pool whose look-ups reach a few hundred values back finds the newest copy within them, against a list") {
    // The index covers only the newest values a look-up can reach; values
    // enter it from below as newer ones leave, and leave it as new ones come.
    // Few distinct values, so most are live several times over; now and then
    // a look-up reaches further and the index widens.
    rt::LivePools writer;
    Model model;
    std::mt19937_64 rng(5);
    for (int step = 0; step < 300000; ++step) {
        const bool widen = step > 150000 && rng() % 5000 == 0;
        const std::uint64_t reach = widen ? 1 + rng() % 5000 : 1 + rng() % 300;
        if (rng() % 100 < 52 || model.live.empty()) {
            const std::uint64_t v = rng() % 400;
            writer.feed(1, v);
            model.add(v);
        } else {
            const std::uint64_t back = rng() % 4 == 0 ? rng() % model.live.size() : rng() % std::min<std::size_t>(reach, model.live.size());
            const std::uint64_t v = model.live[model.live.size() - 1 - back];
            const auto expected = model.back_of(v);
            const auto found = writer.find(1, v, reach);
            if (*expected < reach) {
                REQUIRE(found);
                REQUIRE(found->back == *expected);
            }
            if (found) {
                REQUIRE(writer.value_back(1, found->back) == v);  // a live copy, wherever it is
                writer.refer(1, *found);
                model.live.erase(model.live.end() - 1 - static_cast<std::ptrdiff_t>(found->back));
            }
        }
        writer.end_record();
        REQUIRE(writer.live(1) == model.live.size());
    }
}

TEST_CASE("a writer's value index agrees with std::unordered_map through growth and deletions") {
    rt::ValueIndex index;
    std::unordered_map<std::uint64_t, std::size_t> model;
    std::mt19937_64 rng(11);
    for (std::size_t step = 0; step < 300000; ++step) {
        // Heap-like keys, 16 bytes apart in a few regions, so probes collide and wrap.
        const std::uint64_t key = (rng() % 3) << 40 | (rng() % 20000) << 4;
        if (rng() % 3 != 0) {
            const auto position = static_cast<std::uint32_t>(step);
            const auto [ends, added] = index.try_emplace(key, {position, position});
            const auto [it, model_added] = model.try_emplace(key, step);
            REQUIRE(added == model_added);
            REQUIRE(ends->newest == it->second);
        } else if (model.erase(key)) {
            index.erase(key);
        }
        const std::uint64_t probe = (rng() % 3) << 40 | (rng() % 20000) << 4;
        const auto it = model.find(probe);
        const auto* found = index.find(probe);
        REQUIRE((found != nullptr) == (it != model.end()));
        if (found) REQUIRE(found->newest == it->second);
    }
    for (const auto& [key, position] : model) REQUIRE(index.find(key)->newest == position);
}

TEST_CASE("a pool drops its oldest value past max_live") {
    rt::LivePools pools;
    rt::ReadPools reader;
    for (std::uint64_t v = 0; v <= rt::max_live + 1; ++v) {
        pools.feed(2, v);
        reader.feed(2, v);
    }
    pools.end_record();
    reader.end_record();
    CHECK(pools.live(2) == rt::max_live);
    CHECK(pools.back_of(2, 1) == std::nullopt);
    CHECK(pools.back_of(2, 2) == rt::max_live - 1);
    CHECK(pools.back_of(2, rt::max_live + 1) == 0);
    CHECK(reader.live(2) == rt::max_live);
    CHECK(reader.refer_back(2, rt::max_live - 1) == 2);
    CHECK(reader.refer_back(2, 0) == rt::max_live + 1);
    CHECK(reader.refer_back(2, rt::max_live) == std::nullopt);
}

TEST_CASE("big arrays: 2 MiB-aligned from 2 MiB up, writable to their end, and a count that overflows is refused") {
    namespace d = rt::detail;
    for (const std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(4096), (std::size_t(2) << 20) - 1,
                                    std::size_t(2) << 20, (std::size_t(5) << 20) + 3}) {
        CAPTURE(bytes);
        void* p = d::allocate_big(bytes);
        REQUIRE(p != nullptr);
        if (bytes >= std::size_t(2) << 20) CHECK(reinterpret_cast<std::uintptr_t>(p) % (std::size_t(2) << 20) == 0);
        std::memset(p, 0x5a, bytes);
        if (bytes != 0) CHECK(static_cast<unsigned char*>(p)[bytes - 1] == 0x5a);
        d::free_big(p);
    }
    d::BigAllocator<std::uint64_t> words;
    CHECK_THROWS_AS(static_cast<void>(words.allocate(std::size_t(-1) / 4)), std::bad_array_new_length);
}

TEST_CASE("a reader's pools apply a record's references and feeds at its end, against a list") {
    // Records of several references (some to one value twice) and feeds over
    // two pools, the reader's pools against the rules spelled out on lists.
    rt::ReadPools reader;
    std::array<std::deque<std::uint64_t>, 2> model;
    std::mt19937_64 rng(11);
    std::uint64_t next = 0;
    for (int step = 0; step < 100000; ++step) {
        std::array<std::vector<std::uint64_t>, 2> taken;  // the backs a record refers to
        for (std::uint8_t pool = 1; pool <= 2; ++pool) {
            auto& live = model[pool - 1];
            const std::uint64_t refs = live.empty() ? 0 : rng() % 4;
            for (std::uint64_t r = 0; r < refs; ++r) {
                const std::uint64_t back = rng() % 8 == 0 ? rng() % live.size() : rng() % std::min<std::size_t>(70, live.size());
                REQUIRE(reader.refer_back(pool, back) == live[live.size() - 1 - back]);  // the pool before the record
                taken[pool - 1].push_back(back);
            }
        }
        std::array<std::vector<std::uint64_t>, 2> fed;
        for (std::uint64_t f = rng() % 5; f > 0; --f) {
            const auto pool = static_cast<std::uint8_t>(1 + rng() % 2);
            reader.feed(pool, next);
            fed[pool - 1].push_back(next++);
        }
        reader.end_record();
        for (std::size_t p = 0; p < 2; ++p) {
            auto& live = model[p];
            std::sort(taken[p].begin(), taken[p].end(), std::greater<>());  // the oldest first: the newer keep their backs
            taken[p].erase(std::unique(taken[p].begin(), taken[p].end()), taken[p].end());
            for (const std::uint64_t back : taken[p]) live.erase(live.end() - 1 - static_cast<std::ptrdiff_t>(back));
            live.insert(live.end(), fed[p].begin(), fed[p].end());
            REQUIRE(reader.live(static_cast<std::uint8_t>(p + 1)) == live.size());
        }
    }
    for (std::uint8_t pool = 1; pool <= 2; ++pool) {
        const auto& live = model[pool - 1];
        for (std::uint64_t back = 0; back < live.size(); back += 37) CHECK(reader.refer_back(pool, back) == live[live.size() - 1 - back]);
    }
}

namespace {

// Allocations fed to pool 1, frees referring to them with 1-byte counts.
void write_live(const std::string& path, rt::WriterOptions options, const std::vector<std::uint64_t>& frees,
                std::uint64_t allocs = 300) {
    Writer w(path, options);
    w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::feed, 1);
    w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::live, 1);
    w.set_width(RecordType::Free, Free::address_field, 1);
    for (std::uint64_t i = 0; i < allocs; ++i) w.write(Alloc{.size = 16, .address = 0x1000 + 16 * i});
    for (std::uint64_t a : frees) w.write(Free{.address = a});
    w.close();
}

}  // namespace

TEST_CASE("frees refer to live allocations and read back as their addresses") {
    TempTrace t("live");
    rt::WriterOptions options;
    options.output.replace = true;
    const std::vector<std::uint64_t> frees = {0x1000 + 16 * 299, 0x1000 + 16 * 100, 0x1000 + 16 * 298, 0x1000 + 16 * 101,
                                              0x1000 + 16 * 50};
    write_live(t.path(), options, frees);
    Reader r(t.path());
    std::vector<std::uint64_t> got;
    int metadata = 0;
    while (r.next()) {
        if (r.type() == RecordType::Free) got.push_back(r.get<Free>().address);
        metadata += r.type() == RecordType::Metadata;
    }
    CHECK(got == frees);
    CHECK(metadata == 3);  // the writer changed nothing more
}

TEST_CASE("a value that is not live, or too far back for the width, follows an escape") {
    TempTrace t("live-miss");
    rt::WriterOptions options;
    options.output.replace = true;
    options.version = 1;  // records end where the index starts
    options.strict = true;  // a live field refuses no value
    const std::uint64_t last = 0x1000 + 16 * 299;
    // The second free of `last` finds it freed; 0x1000 is 298 values back, past a 1-byte count.
    write_live(t.path(), options, {last, last, 0x1000});
    Reader r(t.path());
    std::vector<std::uint64_t> got;
    int metadata = 0;
    while (r.next()) {
        if (r.type() == RecordType::Free) got.push_back(r.get<Free>().address);
        metadata += r.type() == RecordType::Metadata;
    }
    CHECK(got == std::vector<std::uint64_t>{last, last, 0x1000});
    CHECK(metadata == 3);
    const TraceBytes b = TraceBytes::load(t.path());
    const std::uint64_t end = b.word(TraceBytes::index_offset);
    // tag, count 0; tag, escape, 8 bytes; tag, escape, 8 bytes
    CHECK(b.b.at(end - 22) == Free::tag);
    CHECK(b.b.at(end - 21) == 0);
    CHECK(b.b.at(end - 20) == Free::tag);
    CHECK(b.b.at(end - 19) == 0xff);
    CHECK(b.get(end - 18, 8) == last);
    CHECK(b.b.at(end - 10) == Free::tag);
    CHECK(b.b.at(end - 9) == 0xff);
    CHECK(b.get(end - 8, 8) == 0x1000);
}

TEST_CASE("a reference past the live values of its pool is an error at its byte") {
    TempTrace t("live-past");
    rt::WriterOptions options;
    options.output.replace = true;
    options.version = 1;  // no chunk checksum to mend after the change
    write_live(t.path(), options, {0x1000 + 16 * 1}, 10);
    TraceBytes b = TraceBytes::load(t.path());
    const std::uint64_t at = b.word(TraceBytes::index_offset) - 1;  // the free's count, the last byte of records
    REQUIRE(b.b.at(at) == 8);
    b.b.at(at) = 0xfe;  // 0xff would be the escape
    b.save(t.path());
    const auto e = metatf::test::read_error<Reader>(t.path());
    REQUIRE(e);
    CHECK(e->kind == rt::ErrorKind::bad_value);
    CHECK(e->offset == at);
    CHECK(std::string(e->what()).ends_with("field 'address' refers 254 values back in pool 1, which holds 10"));
}

TEST_CASE("metadata naming a pool is checked") {
    TempTrace t("live-bad");
    Writer w(t.path());
    const auto message = [&](rt::MetaOp op, std::uint64_t a) {
        const auto e = metatf::test::error_of([&] { w.set_interpretation(RecordType::Free, Free::address_field, op, a); });
        return e ? std::string(e->what()) : std::string();
    };
    CHECK(message(rt::MetaOp::live, 0).ends_with("field 'address' of record 'free': there is no pool 0 (pools are 1 to 4)"));
    CHECK(message(rt::MetaOp::feed, 5).ends_with("field 'address' of record 'free': there is no pool 5 (pools are 1 to 4)"));
    CHECK(message(rt::MetaOp::feed, 0).empty());  // 0: stop feeding
    CHECK(message(rt::MetaOp::live, 1).empty());
    const auto e = metatf::test::error_of([&] { w.set_width(RecordType::Free, Free::address_field, 0); });
    REQUIRE(e);
    CHECK(std::string(e->what()).ends_with("field 'address' of record 'free': a live field needs a width of 1 to 8 bytes"));
}

TEST_CASE("a DTD's own live and feed settings need no metadata") {
    TempTrace t("live-dtd");
    rt::WriterOptions options;
    options.output.replace = true;
    options.version = 1;  // records end where the index starts
    options.strict = true;
    using pools::Alloc, pools::Free, pools::Realloc;
    using Event = std::variant<Alloc, Free, Realloc>;
    const std::vector<Event> written = {
        Alloc{.size = 16, .address = 0x7f0000001000}, Alloc{.size = 32, .address = 0x7f0000002000},
        Alloc{.size = 48, .address = 0x7f0000003000},
        Free{.address = 0x7f0000001000},                                             // 2 back
        Realloc{.oldAddress = 0x7f0000003000, .size = 64, .address = 0x7f0000003000},  // 0 back, in place: live again
        Free{.address = 0x7f0000002000},                                             // 1 back
        Free{.address = 0x7f0000009000},                                             // never allocated: escaped
    };
    {
        pools::Writer w(t.path(), options);
        for (const auto& r : written) std::visit([&](const auto& x) { w.write(x); }, r);
        w.close();
    }
    pools::Reader r(t.path());
    std::vector<Event> read;
    while (r.next()) {
        REQUIRE(r.type() != pools::RecordType::Metadata);
        if (r.type() == pools::RecordType::Alloc) read.emplace_back(r.get<Alloc>());
        if (r.type() == pools::RecordType::Free) read.emplace_back(r.get<Free>());
        if (r.type() == pools::RecordType::Realloc) read.emplace_back(r.get<Realloc>());
    }
    CHECK(read == written);
    const TraceBytes b = TraceBytes::load(t.path());
    const std::uint64_t end = b.word(TraceBytes::index_offset);
    // free: tag, 0xff, 8 bytes; before it free: tag, 1; realloc: tag, 0, size 4, address 8
    CHECK(b.b.at(end - 10) == Free::tag);
    CHECK(b.b.at(end - 9) == 0xff);
    CHECK(b.get(end - 8, 8) == 0x7f0000009000);
    CHECK(b.b.at(end - 12) == Free::tag);
    CHECK(b.b.at(end - 11) == 1);
    CHECK(b.b.at(end - 26) == Realloc::tag);
    CHECK(b.b.at(end - 25) == 0);
    CHECK(b.b.at(end - 28) == Free::tag);
    CHECK(b.b.at(end - 27) == 2);
}
