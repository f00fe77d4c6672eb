// Fixed traces: checked-in big-endian and 32-bit-class files must read back
// to the records below, and writing the same records must give the same bytes.
// Table lookups through sectionOffset fields.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <features.hpp>
#include <hatf10.hpp>

#include <doctest/doctest.h>

#include "scratch.hpp"

namespace fs = std::filesystem;
namespace rt = metatf::rt;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The sample: every kind of predefined record and a metadata change of each sort.
void write_sample(hatf10::Writer& w) {
    using namespace hatf10;
    w.comment("sample trace");
    w.write(Alloc{.size = 24, .address = 0x10000});
    w.write(Alloc{.size = 4096, .address = 0x20000});
    w.set_width(RecordType::Alloc, Alloc::size_field, 1);
    w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::delta, 0x20000);
    w.write(Alloc{.size = 16, .address = 0x20010});
    w.write(Alloc{.size = 200, .address = 0x1fff0});
    w.set_interpretation(RecordType::Free, Free::thread_field, rt::MetaOp::none);
    w.write(Free{.address = 0x10000, .thread = 7});
    w.set_interpretation(RecordType::ReallocAlloc, ReallocAlloc::attributes_attributesLength_field, rt::MetaOp::none);
    const std::string caller = "main+0x2a";
    w.write(ReallocAlloc{.size = 64, .oldAddress = 0, .newAddress = 0x30000, .attributes_attributesLength = caller.size(),
                         .attributes_attributesData = rt::as_bytes(caller)});
    w.set_interpretation(RecordType::CreateThread, CreateThread::time_field, rt::MetaOp::stride, 1000, 10);
    w.write(CreateThread{.thread = 0, .time = 1010});
    w.write(CreateThread{.thread = 0, .time = 1020});
}

void check_sample(const std::string& path) {
    using namespace hatf10;
    Reader r(path);
    auto next = [&](RecordType type) {
        REQUIRE(r.next());
        REQUIRE(r.type() == type);
    };
    next(RecordType::Comment);
    CHECK(r.get<Comment>().text == "sample trace");
    next(RecordType::Alloc);
    CHECK(r.get<Alloc>() == Alloc{.size = 24, .address = 0x10000});
    next(RecordType::Alloc);
    CHECK(r.get<Alloc>() == Alloc{.size = 4096, .address = 0x20000});
    next(RecordType::Metadata);
    CHECK(r.get<Metadata>().field == Alloc::size_field);
    CHECK(r.get<Metadata>().a == 1);
    next(RecordType::Metadata);
    CHECK(r.get<Metadata>().op == rt::MetaOp::delta);
    next(RecordType::Alloc);
    CHECK(r.get<Alloc>() == Alloc{.size = 16, .address = 0x20010});
    next(RecordType::Alloc);
    CHECK(r.get<Alloc>() == Alloc{.size = 200, .address = 0x1fff0});
    next(RecordType::Metadata);
    next(RecordType::Free);
    CHECK(r.get<Free>() == Free{.address = 0x10000, .thread = 7});
    next(RecordType::Metadata);
    next(RecordType::ReallocAlloc);
    const auto& realloc = r.get<ReallocAlloc>();
    CHECK(realloc.newAddress == 0x30000);
    CHECK(std::string_view(reinterpret_cast<const char*>(realloc.attributes_attributesData.data()),
                           realloc.attributes_attributesData.size()) == "main+0x2a");
    next(RecordType::Metadata);
    CHECK(r.get<Metadata>().b == 10);
    next(RecordType::CreateThread);
    CHECK(r.get<CreateThread>().time == 1010);
    next(RecordType::CreateThread);
    CHECK(r.get<CreateThread>().time == 1020);
    CHECK_FALSE(r.next());
}

struct Fixture {
    const char* file;
    rt::WriterOptions options;
};

const Fixture fixtures[] = {
    // Container version 1, the older layout: still read, and still written on request.
    {"hatf10-big-endian-64.mtf", {rt::Class::bits64, rt::ByteOrder::big, std::size_t(1) << 20, {true, {}}, 1}},
    {"hatf10-little-endian-32.mtf", {rt::Class::bits32, rt::ByteOrder::little, std::size_t(1) << 20, {true, {}}, 1}},
    {"hatf10-v2-big-endian-64.mtf", {rt::Class::bits64, rt::ByteOrder::big, std::size_t(1) << 20, {true, {}}, 2}},
    {"hatf10-v2-little-endian-32.mtf", {rt::Class::bits32, rt::ByteOrder::little, std::size_t(1) << 20, {true, {}}, 2}},
};

}  // namespace

TEST_CASE("checked-in big-endian and 32-bit-class traces read back, and writing them again gives the same bytes") {
    for (const Fixture& f : fixtures) {
        CAPTURE(f.file);
        const std::string checked_in = std::string(METATF_SOURCE_DIR "/tests/fixtures/traces/") + f.file;
        const std::string fresh = metatf::test::fresh_path("metatf-fixed", f.file);
        {
            hatf10::Writer w(fresh, f.options);
            write_sample(w);
            w.close();
        }
        // METATF_UPDATE_FIXTURES=1 rewrites the checked-in files after an intended format change.
        if (std::getenv("METATF_UPDATE_FIXTURES")) fs::copy_file(fresh, checked_in, fs::copy_options::overwrite_existing);
        REQUIRE(fs::exists(checked_in));
        check_sample(checked_in);
        CHECK(read_file(fresh) == read_file(checked_in));
    }
}

TEST_CASE("the header says how the trace was written") {
    const std::string path = std::string(METATF_SOURCE_DIR "/tests/fixtures/traces/") + fixtures[0].file;
    hatf10::Reader r(path);
    const rt::Header& h = r.runtime().header();
    CHECK(h.cls == rt::Class::bits64);
    CHECK(h.order == rt::ByteOrder::big);
    CHECK(h.dtd_name == "hatf10");
    CHECK(h.record_count == 14);
    CHECK(h.dtd_fingerprint == rt::fingerprint(hatf10::dtd));
    REQUIRE(h.chunks.size() == 1);
    CHECK(h.chunks[0].section == 0);
}

// The names the events of `path` refer to, looked up in the table section.
std::vector<std::string> resolved_names(const std::string& path) {
    using namespace features;
    Reader r(path);
    std::vector<std::string> resolved;
    while (r.next()) {
        if (r.type() != RecordType::Event) continue;
        r.visit_table_record(1, r.get<Event>().nameRef, [&](const auto& record) {
            if constexpr (std::is_same_v<std::decay_t<decltype(record)>, Name>) {
                resolved.emplace_back(reinterpret_cast<const char*>(record.vfield_data.data()), record.vfield_data.size());
            }
        });
    }
    return resolved;
}

TEST_CASE("sectionOffset fields resolve into a table section, from a file and from a pipe") {
    using namespace features;
    const std::string path = metatf::test::fresh_path("metatf-fixed", "table.mtf");
    const std::string names[] = {"int", "struct node", "char[16]"};
    std::vector<std::uint64_t> offsets;
    {
        Writer w(path);
        w.section(1);
        for (const std::string& n : names) {
            offsets.push_back(w.write(Name{.vfield_length = n.size(), .vfield_data = rt::as_bytes(n)}));
        }
        w.section(0);
        for (std::size_t i = 0; i < 6; ++i) {
            Event e{};
            e.seq = 103 + 3 * i;
            e.konst = 7;
            e.base = 0x10000;
            e.label = rt::as_bytes("abc");
            e.nameRef = offsets[i % 3];
            w.write(e);
        }
        w.close();
    }
    CHECK(offsets == std::vector<std::uint64_t>{0, 5, 18});
    const std::vector<std::string> want{"int", "struct node", "char[16]", "int", "struct node", "char[16]"};
    CHECK(resolved_names(path) == want);
    // A pipe streams: the table's records go by before the events refer to them.
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));  // fits in the pipe
    ::close(fds[1]);
    CHECK(resolved_names("/dev/fd/" + std::to_string(fds[0])) == want);
    ::close(fds[0]);
}

TEST_CASE("a sectionStride field draws successive elements from its section") {
    using namespace features;
    const std::string path = metatf::test::fresh_path("metatf-fixed", "stride.mtf");
    {
        Writer w(path, {rt::Class::bits64, rt::ByteOrder::little, 16, {true, {}}, rt::container_version});  // tiny chunks: elements span many
        for (std::uint64_t i = 0; i < 100; ++i) {
            Event e{};
            e.seq = 103 + 3 * i;
            e.konst = 7;
            e.base = 0x10000;
            e.label = rt::as_bytes("abc");
            e.addr = 0x7f0000000000 + 64 * i;
            w.write(e);
        }
        w.close();
    }
    Reader r(path);
    std::uint64_t i = 0;
    while (r.next()) CHECK(r.get<Event>().addr == 0x7f0000000000 + 64 * i++);
    CHECK(i == 100);
    std::size_t stream_chunks = 0;
    for (const auto& c : r.runtime().header().chunks) stream_chunks += c.section == 2;
    // Every 16 bytes of records end a segment, which takes the elements written so far: one each.
    CHECK(stream_chunks == 100);
}
