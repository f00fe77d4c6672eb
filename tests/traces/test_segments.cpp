// Segments that decode alone (container version 3, docs/trace-format.md,
// "State blocks"): every segment of a trace read from its own start gives
// the records that a read from the start of the trace gives there, for
// traces whose encodings metadata changes, with delta and stride state,
// pools, split streams with gaps, several record sections and zstd chunks;
// and the generated reader, which keeps constants derived from the
// encodings, reads from a segment alike.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <metatf/io/generic.hpp>

#include <features.hpp>
#include <hatf10.hpp>
#include <pools.hpp>

#include <doctest/doctest.h>

#include "../address_sanitizer.hpp"
#include "trace_support.hpp"

namespace rt = metatf::rt;
using namespace metatf::test;

namespace {

constexpr std::size_t to_end = std::numeric_limits<std::size_t>::max();

rt::WriterOptions options(std::uint8_t version = 3, rt::Class cls = rt::Class::bits64, rt::ByteOrder order = rt::ByteOrder::little) {
    rt::WriterOptions o;
    o.cls = cls;
    o.order = order;
    o.chunk_bytes = 600;
    o.output.replace = true;
    o.version = version;
    return o;
}

// A record as one line: its index, record type and values.
std::string show_record(const rt::TraceReader& r, const rt::GenericRecord& g) {
    std::string line = std::string(" ") + r.dtd().records[g.slot].name;
    for (const rt::GenericValue& v : g.values) {
        line += " " + std::to_string(v.integer) + "/" + std::to_string(v.real) + "/" + std::to_string(v.bytes.size());
        for (std::byte b : v.bytes) line += std::to_string(std::to_integer<unsigned>(b)) + ",";
    }
    return line;
}

// The records of segments [from, to) of the trace at `path`, read by the
// DTD-driven reader from segment `from`.
std::vector<std::string> read_segments(const std::string& path, const rt::DtdDesc& dtd, std::size_t from, std::size_t to) {
    rt::TraceReader r(path, dtd);
    r.seek_segment(from);
    const auto& segments = r.header().segments;
    const std::uint64_t stop = to < segments.size() ? segments[to].first_record : r.header().record_count;
    std::vector<std::string> out;
    rt::GenericRecord g;
    while (r.record_index() < stop && r.begin_record()) {
        g.slot = r.slot();
        g.values.clear();
        const std::uint64_t index = r.record_index();
        rt::decode_generic(r, g);
        out.push_back(std::to_string(index) + show_record(r, g));
    }
    return out;
}

struct Shape {
    std::size_t segments = 0, with_state = 0;
};

Shape shape_of(const std::string& path, const rt::DtdDesc& dtd) {
    rt::TraceReader r(path, dtd);
    Shape s{r.header().segments.size(), 0};
    for (const rt::Segment& seg : r.header().segments) s.with_state += seg.state_size != 0;
    return s;
}

// HATF 1.0 with metadata throughout: widths that grow and shrink, baseOffset,
// delta and stride addresses, times under delta (whose previous value each
// state block carries), values that force the writer to widen.
void write_hatf(const std::string& path, rt::WriterOptions o) {
    using namespace hatf10;
    Writer w(path, o);
    // Metadata values are one word of the class: a 32-bit trace gets 32-bit addresses.
    const std::uint64_t heap = o.cls == rt::Class::bits32 ? 0x10000000 : 0x7f0000000000;
    std::uint64_t time = 1000;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        if (i % 400 == 0) {
            w.set_interpretation(RecordType::Alloc, Alloc::time_field, rt::MetaOp::delta, time);
            w.set_width(RecordType::Alloc, Alloc::size_field, 1 + i / 400 % 3);
        }
        if (i % 700 == 350) w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::base_offset, heap);
        if (i % 700 == 0) w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::delta, heap);
        if (i % 900 == 100) w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::stride, 0x5000, 16);
        if (i % 900 == 800) w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::none);
        time += 3 + i % 17 * (i % 97 == 0 ? 100000 : 1);
        const std::uint64_t size = 16 + (i * 7919) % (i % 50 == 0 ? 1000000 : 300);
        const std::uint64_t address = heap + (i * 48271) % 0x100000 * 16;
        if (i % 3 == 2) {
            w.write(Free{.address = 0x5000 + 16 * (i / 3 + 1)});
        } else {
            w.write(Alloc{.size = size, .address = address, .thread = i % 4, .time = time});
        }
    }
    w.close();
}

// pools.dtd: every address joins pool 1 and a free names it by a count back;
// frees of blocks from earlier segments escape, the pools being emptied at each.
void write_pools(const std::string& path, rt::WriterOptions o) {
    using namespace pools;
    Writer w(path, o);
    std::vector<std::uint64_t> live;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        if (i % 3 != 2 || live.empty()) {
            live.push_back(0x100000 + i * 64);
            w.write(Alloc{.size = 32 + i % 5, .address = live.back()});
        } else {
            // Mostly recent blocks, now and then one of the oldest.
            const std::size_t at = i % 11 == 0 ? 0 : live.size() - 1 - i % std::min<std::size_t>(live.size(), 4);
            w.write(Free{.address = live[at]});
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
        }
    }
    w.close();
}

// hatf10 with alloc.address and alloc.size split by `split` records that keep
// their arithmetic: the address a delta in units of 16, set again every 500
// records from the last address (so a state block carries it); the size in
// units of 512, its elements widened by the writer at the first that needs it.
void write_kept(const std::string& path, rt::WriterOptions o) {
    using namespace hatf10;
    o.split = {"alloc.address", "alloc.size"};
    Writer w(path, o);
    w.set_unit(RecordType::Alloc, Alloc::size_field, 512);
    w.set_width(RecordType::Alloc, Alloc::size_field, 1);
    std::uint64_t address = 0x5565'4a9e'0000;
    for (std::uint64_t i = 0; i < 3000; ++i) {
        if (i % 500 == 0) {
            w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::delta, address);
            w.set_unit(RecordType::Alloc, Alloc::address_field, 16);
            w.set_width(RecordType::Alloc, Alloc::address_field, 1);
            w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::split, 1, 1);
        }
        address += 16 * (i % 7) - 32 + (i % 97 == 0 ? 0x100000 : 0);
        w.write(Alloc{.size = 512 * (1 + i * 7919 % 300), .address = address});
    }
    w.close();
}

// features: records in sections 0 and 3 (segments start in either), events
// whose addresses go to value section 2 with a stride of 3 elements (a
// cursor with gaps that the state block carries) and whose seq and when
// keep stride and delta state.
void write_features(const std::string& path, rt::WriterOptions o) {
    using namespace features;
    Writer w(path, o);
    w.set_interpretation(RecordType::Event, Event::addr_field, rt::MetaOp::section_stride, 2, 3);
    std::uint64_t seq = 100;
    for (std::uint64_t i = 0; i < 400; ++i) {
        w.write(Tick{.id = i * 5 + 1});
        if (i % 7 == 3) {
            w.section(3);
            for (std::uint64_t id = 0; id < i % 5; ++id) w.write(Mark{.id = i * 10 + id});
            w.section(0);
        }
        Event e{};
        e.id = static_cast<std::uint32_t>(i);
        e.when = 1000000 + i * 1500;
        e.seq = seq += 3;
        e.base = 0x10000 + i % 100;
        e.konst = 7;
        e.label = rt::as_bytes("abc");
        e.addr = 0x7f0000000000 + i * 4096;
        w.write(e);
    }
    w.close();
}

using Write = void (*)(const std::string& path, rt::WriterOptions o);

// `write` in version 3 with `o`: every segment alone, and every tail from a
// segment on, equals the same records of a read from the start, which
// equals a read of the same records written in version 2 (whose segments
// carry no state). The trace must have several segments, and `with_state`
// of them state blocks, or the check would tell little.
void check_alone(Write write, const rt::DtdDesc& dtd, rt::WriterOptions o, std::size_t with_state = 2) {
    TempTrace t("alone"), t2("alone-v2");
    o.version = 2;
    write(t2.path(), o);
    o.version = 3;
    write(t.path(), o);
    const std::vector<std::string> all = read_segments(t.path(), dtd, 0, to_end);
    CHECK(all == read_segments(t2.path(), dtd, 0, to_end));
    const Shape shape = shape_of(t.path(), dtd);
    REQUIRE(shape.segments >= 4);
    CHECK(shape.with_state >= with_state);
    std::vector<std::string> joined;
    for (std::size_t k = 0; k < shape.segments; ++k) {
        CAPTURE(k);
        const std::vector<std::string> one = read_segments(t.path(), dtd, k, k + 1);
        CHECK(!one.empty());
        joined.insert(joined.end(), one.begin(), one.end());
        // Each tail reads to the end: under AddressSanitizer, every third and the last.
        if (address_sanitizer && k % 3 != 0 && k + 1 != shape.segments) continue;
        const std::vector<std::string> tail = read_segments(t.path(), dtd, k, to_end);
        CHECK(std::equal(tail.begin(), tail.end(), all.end() - static_cast<std::ptrdiff_t>(tail.size()), all.end()));
    }
    CHECK(joined == all);
    CHECK(read_segments(t.path(), dtd, shape.segments, to_end).empty());
}

}  // namespace

TEST_SUITE("segments that decode alone") {

TEST_CASE("every segment of a trace with metadata, delta and stride reads alone as in a read from the start") {
    for (const auto cls : {rt::Class::bits64, rt::Class::bits32}) {
        for (const auto order : {rt::ByteOrder::little, rt::ByteOrder::big}) {
            CAPTURE(static_cast<int>(cls));
            CAPTURE(static_cast<int>(order));
            check_alone(write_hatf, hatf10::dtd, options(3, cls, order));
        }
    }
}

TEST_CASE("segments with pools, sections, split streams with gaps and zstd chunks read alone") {
    SUBCASE("pools") {
        check_alone(write_pools, pools::dtd, options(), 0);  // the DTD sets the pools up: no metadata to restore
    }
    SUBCASE("sections and a value section with a stride of 3") { check_alone(write_features, features::dtd, options()); }
    SUBCASE("zstd chunks") {
        rt::WriterOptions o = options();
        o.compress = 3;
        check_alone(write_hatf, hatf10::dtd, o);
    }
    SUBCASE("a split stream the writer chose") {
        rt::WriterOptions o = options();
        o.split = {"alloc.address+free.address"};
        check_alone(write_hatf, hatf10::dtd, o);
    }
    SUBCASE("split streams that keep a delta and units") { check_alone(write_kept, hatf10::dtd, options()); }
}

TEST_CASE("the generated reader reads from any segment as from the start") {
    TempTrace t("alone-typed");
    write_hatf(t.path(), options());
    auto read = [&](std::size_t from) {
        hatf10::Reader r(t.path());
        r.runtime().seek_segment(from);
        std::vector<std::string> out;
        r.visit([&](const auto& record) {
            using R = std::decay_t<decltype(record)>;
            std::string line = std::to_string(static_cast<int>(R::type));
            if constexpr (requires { record.address; }) line += " " + std::to_string(record.address);
            if constexpr (requires { record.size; }) line += " " + std::to_string(record.size);
            if constexpr (requires { record.time; }) line += " " + std::to_string(record.time);
            out.push_back(line);
        });
        return out;
    };
    const std::vector<std::string> all = read(0);
    const Shape shape = shape_of(t.path(), hatf10::dtd);
    for (std::size_t k = 1; k < shape.segments; k += 3) {
        CAPTURE(k);
        const std::vector<std::string> tail = read(k);
        REQUIRE(tail.size() < all.size());
        CHECK(std::equal(tail.begin(), tail.end(), all.end() - static_cast<std::ptrdiff_t>(tail.size())));
    }
}

TEST_CASE("state blocks cost a few bytes a segment, and pools restart at each") {
    TempTrace t("alone-cost");
    write_hatf(t.path(), options(2));
    const std::uintmax_t v2 = std::filesystem::file_size(t.path());
    write_hatf(t.path(), options(3));
    const std::uintmax_t v3 = std::filesystem::file_size(t.path());
    const Shape shape = shape_of(t.path(), hatf10::dtd);
    // Entries of 2 + 1 + 1 + 1 + 8 or 16 bytes, a few per segment.
    CHECK(v3 > v2);
    CHECK(v3 - v2 < shape.segments * 64);
}

TEST_CASE("a value section's cursor that a state block does not set is refused where it is read, not read out of bounds") {
    TempTrace t("alone-cursor");
    write_features(t.path(), options());
    std::vector<char> bytes;
    {
        std::ifstream in(t.path(), std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    // The last block with a cursor entry, past the first chunks of the
    // addresses (section 2): its section becomes 1, the table, so that 2's
    // cursor is 0, behind the chunk the reader holds.
    rt::TraceReader probe(t.path(), features::dtd);
    std::size_t segment = 0, changed = 0;
    for (std::size_t k = probe.header().segments.size(); k-- > 0 && changed == 0;) {
        const rt::Segment& seg = probe.header().segments[k];
        for (std::uint64_t at = seg.state_offset; at < seg.state_offset + seg.state_size;) {
            if (bytes[at] == 'C') {
                REQUIRE(bytes[at + 1] == 2);
                bytes[at + 1] = 1;
                changed = at + 1;
                segment = k;
                break;
            }
            const auto property = static_cast<rt::MetaOp>(bytes[at + 7]);
            at += 8 + 8 * rt::metadata_value_count(property);  // kind, section, tag, field (4), property, values
        }
    }
    REQUIRE(changed != 0);
    std::ofstream(t.path(), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    for (const std::size_t from : {std::size_t(0), segment}) {
        CAPTURE(from);
        const auto e = error_of([&] { read_segments(t.path(), features::dtd, from, to_end); });
        REQUIRE(e);
        CHECK(e->kind == rt::ErrorKind::bad_section);
        CHECK(e->message.starts_with("field 'addr' reads offset "));
        CHECK(e->message.ends_with(" of section 2, before the chunk being read"));
    }
}

TEST_CASE("a segment is a place to start only in a version-3 file") {
    TempTrace t("alone-v2");
    write_hatf(t.path(), options(2));
    CHECK(shape_of(t.path(), hatf10::dtd).with_state == 0);
    const std::vector<std::string> v2 = read_segments(t.path(), hatf10::dtd, 0, to_end);
    CHECK(show(error_of([&] { read_segments(t.path(), hatf10::dtd, 1, to_end); })) ==
          show(rt::ErrorKind::usage, 0, -1, 0, "a segment of a version-2 trace needs the segments before it; read it from the start"));
    write_hatf(t.path(), options(3));
    CHECK(read_segments(t.path(), hatf10::dtd, 0, to_end) == v2);  // the same records, in either version
    const std::size_t n = shape_of(t.path(), hatf10::dtd).segments;
    CHECK(show(error_of([&] { read_segments(t.path(), hatf10::dtd, n + 1, to_end); })) ==
          show(rt::ErrorKind::usage, 0, -1, 0, "segment " + std::to_string(n + 1) + " is past the trace's " + std::to_string(n)));
}

}  // TEST_SUITE

TEST_CASE("segments written in the background make the same bytes as written in place") {
    const auto bytes = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        return std::vector<char>(std::istreambuf_iterator<char>(in), {});
    };
    for (const int level : {0, 3}) {
        for (const auto write : {write_hatf, write_pools, write_features}) {
            CAPTURE(level);
            rt::WriterOptions o = options();
            o.compress = level;
            TempTrace in_place("segments-in-place"), background("segments-background");
            write(in_place.path(), o);
            o.background = true;
            write(background.path(), o);
            const auto a = bytes(in_place.path()), b = bytes(background.path());
            CHECK(a.size() > 3 * o.chunk_bytes);  // several segments
            CHECK(a == b);
        }
    }
}

TEST_CASE("compress_first: segments at its level until its bytes are compressed, then at compress") {
    // Each chunk's stored bytes, by segment.
    const auto chunks = [](const std::string& path) {
        rt::TraceReader r(path, hatf10::dtd);
        std::ifstream in(path, std::ios::binary);
        std::vector<std::string> out;
        for (const rt::Chunk& c : r.header().chunks) {
            std::string bytes(c.size, '\0');
            in.seekg(static_cast<std::streamoff>(c.start)).read(bytes.data(), static_cast<std::streamsize>(c.size));
            out.push_back(std::to_string(c.segment) + ":" + bytes);
        }
        return out;
    };
    rt::WriterOptions o = options(rt::container_version);
    TempTrace weak("first-1"), strong("first-19"), mixed("first-mixed");
    o.compress = 19;
    write_hatf(strong.path(), o);
    o.compress = 1;
    write_hatf(weak.path(), o);
    const auto decoded = [&](std::size_t k) { return rt::TraceReader(weak.path(), hatf10::dtd).header().chunks.at(k).decoded; };
    o.compress_first = {19, decoded(0) + decoded(1)};  // the first two segments' records, to the byte
    for (const bool background : {false, true}) {
        o.background = background;
        write_hatf(mixed.path(), o);
        const auto a = chunks(weak.path()), b = chunks(strong.path()), m = chunks(mixed.path());
        REQUIRE(m.size() > 5);
        REQUIRE(a.size() == m.size());
        for (std::size_t i = 0; i < m.size(); ++i) {
            CAPTURE(i);
            CHECK(a[i] != b[i]);
            CHECK(m[i] == (i < 2 ? b[i] : a[i]));
        }
        CHECK(read_segments(mixed.path(), hatf10::dtd, 0, to_end) == read_segments(weak.path(), hatf10::dtd, 0, to_end));
    }
    o.compress_first.level = 23;
    CHECK(show(error_of([&] { write_hatf(mixed.path(), o); })) == show(rt::ErrorKind::usage, 0, -1, 0, "compression level 23 is not 0-22"));
}

std::atomic<std::thread::id> writer_thread;

TEST_CASE("a background write that fails is an output error at a later write or at close, and leaves no file") {
    TempTrace t("segments-background-full");
    rt::WriterOptions o = options();
    o.background = true;
    o.thread_start = [] { writer_thread = std::this_thread::get_id(); };
    // Files of this process may not grow past 64 KiB meanwhile: a write past it fails (EFBIG).
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto old_signal = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 64 << 10;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const auto e = error_of([&] {
        hatf10::Writer w(t.path(), o);
        for (std::uint64_t i = 0; i < 100000; ++i) w.write(hatf10::Alloc{.size = 16 + i % 1000, .address = 0x1000 + 64 * (i * 7919 % 100000)});
        w.close();
    });
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_signal);
    REQUIRE(e);
    CHECK(e->kind == rt::ErrorKind::output);
    CHECK(std::string(e->what()).find("File too large") != std::string::npos);
    CHECK(writer_thread.load() != std::thread::id());
    CHECK(writer_thread.load() != std::this_thread::get_id());
    CHECK_FALSE(std::filesystem::exists(t.path()));

    rt::WriterOptions v1 = options(1);
    v1.background = true;
    CHECK(show(error_of([&] { hatf10::Writer(t.path(), v1); })) ==
          show(rt::TraceError(rt::ErrorKind::usage, "a version-1 trace has no segments to write in the background", 0, -1, 0)));
}

namespace {

// The descriptor this process holds on the temporary file of the trace at `path`.
int descriptor_of_temporary(const std::string& path) {
    const std::string stem = std::filesystem::path(path).filename().string() + ".";
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const std::string target = std::filesystem::read_symlink(entry.path(), ec).filename().string();
        if (!ec && target.starts_with(stem) && target.ends_with(".partial")) return std::stoi(entry.path().filename().string());
    }
    return -1;
}

}  // namespace

TEST_CASE("a writer whose descriptor now names another file writes nothing into it, and fails") {
    // As a traced program may do: it closes the trace's descriptor and opens a
    // file of its own at that number, while segments wait to be written.
    for (const bool background : {false, true}) {
        CAPTURE(background);
        TempTrace t("segments-stolen"), own("segments-stolen-own");
        rt::WriterOptions o = options();
        o.background = background;
        int fd = -1;
        const auto e = error_of([&] {
            hatf10::Writer w(t.path(), o);
            w.write(hatf10::Alloc{.size = 16, .address = 0x1000});
            fd = descriptor_of_temporary(t.path());
            REQUIRE(fd >= 0);
            const int mine = ::open(own.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            REQUIRE(mine >= 0);
            REQUIRE(::write(mine, "mine\n", 5) == 5);
            REQUIRE(::dup2(mine, fd) == fd);
            ::close(mine);
            for (std::uint64_t i = 0; i < 100000; ++i) w.write(hatf10::Alloc{.size = 16 + i % 1000, .address = 0x1000 + 64 * i});
            w.close();
        });
        REQUIRE(e);
        CHECK(e->kind == rt::ErrorKind::output);
        CHECK(std::string(e->what()).find("its descriptor " + std::to_string(fd) + " was closed or now names another file") !=
              std::string::npos);
        CHECK(::fcntl(fd, F_GETFD) >= 0);  // still open: the program's
        ::close(fd);
        std::ifstream in(own.path());
        CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "mine\n");
        CHECK_FALSE(std::filesystem::exists(t.path()));
        CHECK(descriptor_of_temporary(t.path()) == -1);
        for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(t.path()).parent_path())) {
            CHECK_FALSE(entry.path().filename().string().starts_with(std::filesystem::path(t.path()).filename().string() + "."));
        }
    }
}
