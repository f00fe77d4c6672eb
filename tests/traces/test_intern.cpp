// Interned strings (Interp::intern, string_table.hpp, docs/dtd-language.md
// "Interned strings"): the bytes a writer stores, worked out by hand; a full
// table; segments that decode alone; a code past the table; the automatic
// encodings, which intern a string of few values and not one of many.
#include <doctest/doctest.h>

#include <metatf/io/generic.hpp>

#include <interned.hpp>

#include "trace_support.hpp"

namespace {

namespace rt = metatf::rt;
using metatf::test::error_of;
using metatf::test::TempTrace;
using metatf::test::TraceBytes;
using namespace interned;

struct Row {
    std::string host, op;
    std::uint64_t size;
};

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

void write_rows(const std::string& path, const std::vector<Row>& rows, rt::WriterOptions o) {
    o.output.replace = true;
    Writer w(path, o);
    for (const Row& x : rows) {
        w.write(Request{.hostLength = x.host.size(), .host = bytes_of(x.host), .opLength = x.op.size(), .op = bytes_of(x.op), .size = x.size});
    }
    w.close();
}

std::string text(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

std::vector<std::string> lines(const std::vector<Row>& rows) {
    std::vector<std::string> out;
    for (const Row& x : rows) out.push_back(std::to_string(x.host.size()) + " " + x.host + " " + x.op + " " + std::to_string(x.size));
    return out;
}

// The rows as the generated reader's next() gives them.
std::vector<std::string> by_next(const std::string& path) {
    Reader r(path);
    std::vector<std::string> out;
    while (r.next()) {
        if (r.type() != RecordType::Request) continue;
        const Request& x = r.get<Request>();
        out.push_back(std::to_string(x.hostLength) + " " + text(x.host) + " " + text(x.op) + " " + std::to_string(x.size));
    }
    return out;
}

// The same through the DTD-driven reader (mtf's and Python's), from segment `from`.
std::vector<std::string> by_generic(const std::string& path, std::size_t from = 0) {
    return metatf::test::generic_lines(path, interned::dtd, from, [](const rt::GenericRecord& g) {
        const auto& v = g.values;
        return std::to_string(v[0].integer) + " " + text(v[1].bytes) + " " + text(v[3].bytes) + " " + std::to_string(v[4].integer);
    });
}

rt::WriterOptions strict_v1() {
    rt::WriterOptions o;
    o.version = 1;  // the records end where the index starts
    o.strict = true;
    return o;
}

}  // namespace

TEST_CASE("an interned string: its code when the table holds it, else the escape, its length and its bytes") {
    TempTrace t("intern");
    const std::vector<Row> rows = {{"hm", "R", 1}, {"mds", "W", 2}, {"hm", "R", 3}};
    write_rows(t.path(), rows, strict_v1());
    //   hm  (new: escape, length, bytes) R 1: 04 | ff 02 68 6d | 01 52 | 01 00 00 00
    //   mds (new, code 1 from here on)   W 2: 04 | ff 03 6d 64 73 | 01 57 | 02 00 00 00
    //   hm  (code 0)                     R 3: 04 | 00 | 01 52 | 03 00 00 00
    CHECK(TraceBytes::load(t.path()).records_tail(31) ==
          "04 ff 02 68 6d 01 52 01 00 00 00 04 ff 03 6d 64 73 01 57 02 00 00 00 04 00 01 52 03 00 00 00");
    CHECK(by_next(t.path()) == lines(rows));
    CHECK(by_generic(t.path()) == lines(rows));
}

TEST_CASE("a full table: a string past the codes of the width is stored whole each time") {
    TempTrace t("intern-full");
    std::vector<Row> rows;
    for (int i = 0; i < 300; ++i) rows.push_back({"h" + std::to_string(i), "R", 1});
    rows.push_back({"h0", "R", 2});    // code 0
    rows.push_back({"h299", "R", 3});  // the table took 255 (codes 0-254): escaped again
    write_rows(t.path(), rows, strict_v1());
    CHECK(TraceBytes::load(t.path()).records_tail(21) == "04 00 01 52 02 00 00 00 04 ff 04 68 32 39 39 01 52 03 00 00 00");
    CHECK(by_next(t.path()) == lines(rows));
    CHECK(by_generic(t.path()) == lines(rows));
}

TEST_CASE("interned strings: tables emptied at every segment, which then decodes alone") {
    std::vector<Row> rows;
    const char* hosts[] = {"hm", "mds", "prn", "proj", "prxy", "rsrch", "src1", "src2"};
    for (std::uint64_t i = 0; i < 20000; ++i) rows.push_back({hosts[i * 7 % 8], i % 3 ? "Read" : "Write", i});
    TempTrace t("intern-segments");
    rt::WriterOptions o;
    o.chunk_bytes = 4096;
    write_rows(t.path(), rows, o);
    const std::vector<std::string> all = lines(rows);
    CHECK(by_next(t.path()) == all);
    CHECK(by_generic(t.path()) == all);
    rt::TraceReader r(t.path(), interned::dtd);
    const auto& segments = r.header().segments;
    REQUIRE(segments.size() > 10);
    for (std::size_t s : {std::size_t(1), segments.size() / 2, segments.size() - 1}) {
        const std::ptrdiff_t before = metatf::test::records_before_segment(t.path(), interned::dtd, s);
        CHECK(by_generic(t.path(), s) == std::vector<std::string>(all.begin() + before, all.end()));
    }
}

TEST_CASE("a code past the table is an error at the code") {
    TempTrace t("intern-bad");
    write_rows(t.path(), {{"hm", "R", 1}}, strict_v1());
    TraceBytes b = TraceBytes::load(t.path());
    const std::uint64_t code_at = b.word(TraceBytes::index_offset) - 10;  // the byte after the tag
    REQUIRE(b.b.at(code_at) == 0xff);
    b.b.at(code_at) = 5;
    b.save(t.path());
    const auto e = error_of([&] { by_generic(t.path()); });
    REQUIRE(e);
    CHECK(e->kind == rt::ErrorKind::bad_value);
    CHECK(e->offset == code_at);
    CHECK(e->message == "field 'hostLength' names string 5 of its table, which holds 0");
    CHECK(error_of([&] { by_next(t.path()); })->message == e->message);
}

TEST_CASE("the automatic encodings intern a string of few values, and not one of many") {
    std::vector<Row> rows;
    for (std::uint64_t i = 0; i < 30000; ++i) rows.push_back({"host" + std::to_string(i), i % 3 ? "Read" : "Write", i});
    TempTrace t("intern-auto");
    rt::WriterOptions o;
    o.auto_window = 16384;
    write_rows(t.path(), rows, o);
    CHECK(by_next(t.path()) == lines(rows));
    CHECK(by_generic(t.path()) == lines(rows));
    rt::TraceReader r(t.path(), interned::dtd);
    rt::GenericRecord g;
    std::size_t records = 0;
    while (r.begin_record()) {
        const std::uint32_t slot = r.slot();
        if (r.dtd().records[slot].predefined == rt::Predefined::none) {
            ++records;
            CHECK(r.states(slot)[1].kind != rt::Interp::intern);  // a host of its own in each record
            CHECK(r.states(slot)[3].kind == rt::Interp::intern);  // Read or Write
        }
        rt::decode_generic(r, g);
    }
    CHECK(records == rows.size());
}

TEST_CASE("metadata sets intern only on the length of the bytes field after it") {
    TempTrace t("intern-metadata");
    rt::WriterOptions o;
    o.output.replace = true;
    Writer w(t.path(), o);
    CHECK_THROWS_WITH_AS(w.runtime().metadata(static_cast<std::uint32_t>(RecordType::Request), 5, rt::MetaOp::intern),
                         "byte 0, section 0, record 0: metadata for field 'size' of record 'request': 'intern' cannot apply: it is "
                         "not the length of the bytes field that follows it",
                         rt::TraceError);
    // A table's records are read out of sequence, which would see the strings' codes move.
    CHECK_THROWS_WITH_AS(w.runtime().metadata(static_cast<std::uint32_t>(RecordType::Request), 5, rt::MetaOp::section_offset, 1),
                         "byte 0, section 0, record 0: metadata for field 'size' of record 'request': a DTD with interned strings has no tables",
                         rt::TraceError);
    w.runtime().metadata(static_cast<std::uint32_t>(RecordType::Request), 3, rt::MetaOp::intern);
    CHECK(w.runtime().states(static_cast<std::uint32_t>(RecordType::Request))[3].kind == rt::Interp::intern);
}
