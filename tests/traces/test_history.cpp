// Shared histories (FieldDesc::history, history.hpp, docs/dtd-language.md
// "Shared histories"): the bytes a writer stores, worked out by hand; the
// same values back through every reader; segments that decode alone; the
// automatic encodings, which must follow the histories to choose widths.
#include <doctest/doctest.h>

#include <metatf/analysis/auto_encoder.hpp>
#include <metatf/io/generic.hpp>

#include <histories.hpp>
#include <random>
#include <variant>

#include "trace_support.hpp"

namespace {

namespace rt = metatf::rt;
using metatf::test::TempTrace;
using metatf::test::TraceBytes;
using namespace histories;

// An event: cpu, seq, time, and size (a read) or none (a write).
struct Event {
    std::uint64_t cpu, seq, time, size;
    bool read;
};

// Events of 4 CPUs, each numbering its own from 1, in one time order.
std::vector<Event> events(std::size_t n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint64_t> seq(4);
    std::vector<Event> out;
    std::uint64_t time = 1000;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t cpu = rng() % 4;
        time += rng() % 200;
        out.push_back({cpu, ++seq[cpu], time, 512 * (1 + rng() % 8), rng() % 3 != 0});
    }
    return out;
}

void write_events(const std::string& path, const std::vector<Event>& ev, rt::WriterOptions o) {
    o.output.replace = true;
    Writer w(path, o);
    for (const Event& e : ev) {
        if (e.read) {
            w.write(Read{.cpu = e.cpu, .seq = e.seq, .time = e.time, .size = e.size});
        } else {
            w.write(Write{.cpu = e.cpu, .seq = e.seq, .time = e.time});
        }
    }
    w.close();
}

// The events as the generated reader's next() gives them.
std::vector<std::string> by_next(const std::string& path) {
    Reader r(path);
    std::vector<std::string> out;
    while (r.next()) {
        if (r.type() == RecordType::Read) {
            const Read& x = r.get<Read>();
            out.push_back("r " + std::to_string(x.cpu) + " " + std::to_string(x.seq) + " " + std::to_string(x.time) + " " + std::to_string(x.size));
        } else if (r.type() == RecordType::Write) {
            const Write& x = r.get<Write>();
            out.push_back("w " + std::to_string(x.cpu) + " " + std::to_string(x.seq) + " " + std::to_string(x.time));
        }
    }
    return out;
}

std::vector<std::string> expected(const std::vector<Event>& ev) {
    std::vector<std::string> out;
    for (const Event& e : ev) {
        const std::string head = std::to_string(e.cpu) + " " + std::to_string(e.seq) + " " + std::to_string(e.time);
        out.push_back(e.read ? "r " + head + " " + std::to_string(e.size) : "w " + head);
    }
    return out;
}

// The same through the DTD-driven reader (mtf's and Python's), from segment `from`.
std::vector<std::string> by_generic(const std::string& path, std::size_t from = 0) {
    return metatf::test::generic_lines(path, histories::dtd, from, [](const rt::GenericRecord& g) {
        std::string line = g.slot == static_cast<std::uint32_t>(RecordType::Read) ? "r" : "w";
        for (const rt::GenericValue& x : g.values) line += " " + std::to_string(x.integer);
        return line;
    });
}

}  // namespace

TEST_CASE("a shared history: a delta counts from the last value of its key in any record type") {
    TempTrace t("history");
    rt::WriterOptions o;
    o.version = 1;  // the records end where the index starts
    o.strict = true;
    // seq per cpu, time from the last event of either type:
    //   read  cpu 0 seq 1 time 100 size 7: 04 00 | 01 | 64 00 | 07 00 00 00
    //   write cpu 1 seq 1 time 150:        05 01 | 01 | 32 00
    //   read  cpu 0 seq 2 time 160 size 9: 04 00 | 01 | 0a 00 | 09 00 00 00
    //   write cpu 0 seq 3 time 158:        05 00 | 01 | fe ff
    //   write cpu 1 seq 2 time 170:        05 01 | 01 | 0c 00
    write_events(t.path(), {{0, 1, 100, 7, true}, {1, 1, 150, 0, false}, {0, 2, 160, 9, true}, {0, 3, 158, 0, false}, {1, 2, 170, 0, false}}, o);
    CHECK(TraceBytes::load(t.path()).records_tail(33) == "04 00 01 64 00 07 00 00 00 05 01 01 32 00 04 00 01 0a 00 09 00 00 00 05 00 01 fe ff 05 01 01 0c 00");
    const std::vector<std::string> want = {"r 0 1 100 7", "w 1 1 150", "r 0 2 160 9", "w 0 3 158", "w 1 2 170"};
    CHECK(by_next(t.path()) == want);
    CHECK(by_generic(t.path()) == want);
}

TEST_CASE("a strict writer refuses a value its width cannot hold against the shared history") {
    TempTrace t("history-strict");
    rt::WriterOptions o;
    o.strict = true;
    o.output.replace = true;
    Writer w(t.path(), o);
    w.write(Read{.cpu = 2, .seq = 1, .time = 10, .size = 1});
    // The write's own last seq would be 0, but cpu 2's is 1: a difference of 299 needs 2 bytes.
    CHECK_THROWS_WITH_AS(w.write(Write{.cpu = 2, .seq = 300, .time = 20}), doctest::Contains("does not fit in 1 bytes"), rt::TraceError);
}

TEST_CASE("shared histories: widened as values need, read back alike, and emptied at every segment") {
    const std::vector<Event> ev = events(20000, 7);
    TempTrace t("history-segments");
    rt::WriterOptions o;
    o.chunk_bytes = 4096;  // many segments, each starting the histories afresh
    write_events(t.path(), ev, o);
    CHECK(by_next(t.path()) == expected(ev));
    const std::vector<std::string> all = by_generic(t.path());
    CHECK(all == expected(ev));
    rt::TraceReader r(t.path(), histories::dtd);
    const auto& segments = r.header().segments;
    REQUIRE(segments.size() > 10);
    for (std::size_t s : {std::size_t(1), segments.size() / 2, segments.size() - 1}) {
        // `all` holds events only: the segment's are those after the ones before it.
        const std::ptrdiff_t before = metatf::test::records_before_segment(t.path(), histories::dtd, s);
        CHECK(by_generic(t.path(), s) == std::vector<std::string>(all.begin() + before, all.end()));
    }
}

TEST_CASE("the automatic encodings follow the shared histories: a per-CPU sequence takes one byte") {
    const std::vector<Event> ev = events(30000, 11);
    TempTrace t("history-auto");
    rt::WriterOptions o;
    o.auto_window = 16384;
    write_events(t.path(), ev, o);
    CHECK(by_next(t.path()) == expected(ev));
    CHECK(by_generic(t.path()) == expected(ev));
    // Each event's seq is its CPU's last plus 1: a delta of 1, one byte, in every record but a CPU's first of a segment.
    rt::TraceReader r(t.path(), histories::dtd);
    rt::GenericRecord g;
    std::uint64_t seq_width_sum = 0, records = 0;
    while (r.begin_record()) {
        const std::uint32_t slot = r.slot();
        if (r.dtd().records[slot].predefined == rt::Predefined::none) {
            seq_width_sum += r.states(slot)[2].width;
            ++records;
        }
        rt::decode_generic(r, g);
    }
    CHECK(records == ev.size());
    CHECK(seq_width_sum == records);
}

TEST_CASE("a metadata record never ends a segment: the record it announces was fitted to the histories before it") {
    TempTrace t("history-flush");
    rt::WriterOptions o;
    o.chunk_bytes = 1;  // every record would end a segment, which empties the histories
    o.output.replace = true;
    {
        Writer w(t.path(), o);
        w.write(Read{.cpu = 0, .seq = 70000, .time = 10, .size = 1});
        // seq is 1 past cpu 0's last, one byte; the time needs metadata for a wider field. Had that
        // metadata record ended the segment, seq would count from 0 and not fit in its byte.
        w.write(Write{.cpu = 0, .seq = 70001, .time = 100000});
        w.close();
    }
    const std::vector<std::string> want = {"r 0 70000 10 1", "w 0 70001 100000"};
    CHECK(by_next(t.path()) == want);
    CHECK(by_generic(t.path()) == want);
    CHECK(by_generic(t.path(), 1) == std::vector<std::string>{"w 0 70001 100000"});
}

TEST_CASE("a DTD with shared histories has no tables: metadata for a sectionOffset field is refused") {
    TempTrace t("history-table");
    rt::WriterOptions o;
    o.output.replace = true;
    Writer w(t.path(), o);
    CHECK_THROWS_WITH_AS(w.runtime().metadata(static_cast<std::uint32_t>(RecordType::Read), 4, rt::MetaOp::section_offset, 1),
                         "byte 0, section 0, record 0: metadata for field 'size' of record 'read': a DTD with shared histories has no tables",
                         rt::TraceError);
}

TEST_CASE("keys past 255 are entries a reader counts against its limits") {
    TempTrace t("history-keys");
    std::vector<Event> ev;
    for (std::uint64_t k = 0; k < 300; ++k) ev.push_back({1000 + k, 1, 10 + k, 0, false});  // a key of its own each
    write_events(t.path(), ev, {});
    rt::TraceReader r(t.path(), histories::dtd);
    r.set_limits({.elements_per_byte = 0, .elements_slack = 200});
    rt::GenericRecord g;
    std::size_t events = 0;
    const auto read_all = [&] {
        while (r.begin_record()) {
            events += r.dtd().records[r.slot()].predefined == rt::Predefined::none;
            rt::decode_generic(r, g);
        }
    };
    // Each event adds one entry (its cpu's seq) to the budget, which the segment's start (its fields) shares.
    CHECK_THROWS_WITH_AS(read_all(), doctest::Contains("shared histories hold more than 200 entries and elements"), rt::TraceError);
    CHECK(events > 150);
    CHECK(events < 200);
}
