// The generated CHARISMA native reader and writer on the files the
// independent C writer made for both machine layouts
// (tests/native/charisma_writer.c, checked in as
// tests/fixtures/native/charisma-*.bin): values read where the writer put
// them, the padding skipped, the records written back to the same bytes in
// either layout, and what a layout cannot hold refused.
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include "fixture.hpp"

#include <charisma.hpp>

namespace rt = metatf::rt;

namespace {

using metatf::test::native_fixture;

std::string text(std::span<const std::byte> bytes) { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }

// Reads every record of `bytes` and writes it again in `form`; the names and
// paths are copied out of the reader's buffer into `names` first.
std::string rewrite(const std::string& bytes, const rt::NativeFormDesc& form, std::vector<std::string>& names) {
    std::istringstream in(bytes);
    charisma::NativeReader reader(in);
    std::ostringstream out;
    charisma::NativeWriter writer(out, form);
    while (reader.visit([&](const auto& record) {
        if constexpr (requires { record.name; }) names.push_back(text(record.name));
        if constexpr (requires { record.path; }) names.push_back(text(record.path));
        writer.write(record);
    })) {
    }
    writer.close();
    return out.str();
}

}  // namespace

TEST_CASE("the generated CHARISMA native reader finds the layout by its magic and reads each value the C writer wrote") {
    for (const char* file : {"charisma-ipsc860.bin", "charisma-lp64.bin"}) {
        CAPTURE(file);
        std::istringstream in(native_fixture(file));
        charisma::NativeReader reader(in);
        CHECK(std::string(reader.runtime().form().name) == (std::string(file) == "charisma-lp64.bin" ? "lp64" : "ipsc860"));
        std::vector<std::string> seen;
        while (reader.visit([&](const auto& r) {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, charisma::Header>) {
                CHECK(r.startDate == 804556800);
                CHECK(r.gmtOffset == -18000);
                CHECK(r.timestamp == 123456789u);
                CHECK(r.systemId == 0x81aa0a01u);
                CHECK(r.mdVersion == 2);
                CHECK(text(r.releaseData).substr(0, 27) == "OSF/1 R1.3.3, CFS, icc R4.5");
                CHECK(r.memoryPerDisk == 16);
                CHECK(r.timestampUnit == 0.0001);
                seen.push_back("header");
            } else if constexpr (std::is_same_v<T, charisma::AppLoad>) {
                CHECK(text(r.name) == "matmul");
                CHECK(r.nameLength == 6);
                CHECK(text(r.path) == "/home/user/bin");
                CHECK(r.initialLoadSize == 262144u);
                REQUIRE(r.numClients_items.size() == 2);
                CHECK(r.numClients_items[1].client == 71u);
                seen.push_back("appLoad");
            } else if constexpr (std::is_same_v<T, charisma::ClientOpen>) {
                CHECK(text(r.name) == "a_name_of_exactly_32_characters_");  // fills its array: no NUL
                CHECK(r.nameLength == 32);
                CHECK(r.fileId == 0x0000000300001234u);
                CHECK(r.openFlags == 10u);
                seen.push_back("clientOpen");
            } else if constexpr (std::is_same_v<T, charisma::ReadWrite>) {
                CHECK(r.numClients == r.numClients_items.size());
                CHECK(r.numClients_items.back().ioRequest_memoryOffset == 0x10000000u + 4096 * (r.numClients - 1));
                seen.push_back("readWrite");
            } else if constexpr (std::is_same_v<T, charisma::Fcntl>) {
                CHECK(r.fileDesc == 3u);
                CHECK(r.arg == -1);
                seen.push_back("fcntl");
            } else if constexpr (std::is_same_v<T, charisma::AppExit>) {
                CHECK(r.timestamp == 7000u);
                seen.push_back("appExit");
            }
        })) {
        }
        CHECK(seen == std::vector<std::string>{"header", "appLoad", "clientOpen", "readWrite", "readWrite", "fcntl", "appExit"});
        CHECK(reader.runtime().offset() == native_fixture(file).size());
    }
}

TEST_CASE("the generated CHARISMA native writer writes either layout from the records of either, byte for byte") {
    const std::string ipsc = native_fixture("charisma-ipsc860.bin"), lp64 = native_fixture("charisma-lp64.bin");
    std::vector<std::string> names;
    CHECK(rewrite(ipsc, charisma::native_ipsc860, names) == ipsc);
    CHECK(rewrite(lp64, charisma::native_lp64, names) == lp64);
    CHECK(rewrite(ipsc, charisma::native_lp64, names) == lp64);
    CHECK(rewrite(lp64, charisma::native_ipsc860, names) == ipsc);
}

TEST_CASE("the CHARISMA native writer refuses what a layout cannot hold, and writes nothing of it") {
    std::ostringstream out;
    charisma::NativeWriter writer(out, charisma::native_ipsc860);
    charisma::AppOpen open;
    const std::string long_name(33, 'n');
    open.name = rt::as_bytes(long_name);
    open.nameLength = long_name.size();
    CHECK_THROWS_WITH_AS(writer.write(open), "byte 8, record 0: field 'name' of record 'appOpen' has 33 bytes, more than its 32 chars can hold", rt::TraceError);
    const std::string with_nul("a\0b", 3);
    open.name = rt::as_bytes(with_nul);
    open.nameLength = 3;
    CHECK_THROWS_WITH_AS(writer.write(open), "byte 8, record 0: field 'name' of record 'appOpen' holds a NUL byte, where its C string would end", rt::TraceError);
    open.name = {};
    open.nameLength = 0;
    open.creationDate = std::int64_t(1) << 40;  // past 2038: no 4-byte time_t holds it
    CHECK_THROWS_WITH_AS(writer.write(open), "byte 8, record 0: field 'creationDate' of record 'appOpen' holds 1099511627776, more than its 4 bytes can", rt::TraceError);
    CHECK_THROWS_WITH_AS(writer.write(charisma::CompressedReadWrite{}),
                         "byte 8, record 0: record 'compressedReadWrite' has no type code in the native form 'ipsc860' of 'charisma' ('tag.code = none')", rt::TraceError);
    open.creationDate = -1;
    writer.write(open);
    writer.close();
    // The magic, then only the record that fits: 2 + 2 padding + ... = sizeof(TraceAppOpenRecord) on the iPSC/860.
    const std::string bytes = out.str();
    CHECK(bytes.substr(0, 8) == std::string("\x01\x23\x45\x67\x00\x00\x00\x01", 8));
    CHECK(bytes.size() == 8 + 216);
    CHECK(bytes.substr(8, 2) == std::string("\x00\x05", 2));
}
