// The generated reader and writer of tests/native/bitfields.dtd on the files
// GCC laid out for each allocation order (tests/native/bitfields_writer.c,
// checked in as tests/fixtures/native/bitfields-*.bin): each part read
// through its generated getter is the value the C program stored, and
// records built with the setters are written back to the same bytes.
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "fixture.hpp"

#include <bitfields.hpp>

namespace rt = metatf::rt;

namespace {

using metatf::test::native_fixture;

// Record i as bitfields_writer.c fills it in, through the setters.
bitfields::Compressed expected(unsigned i) {
    bitfields::Compressed r;
    r.clientId = i;
    r.set_fileDesc(i % 64);
    r.set_memStrideIndex(i % 4);
    r.set_sizeIndex((i / 4) % 4);
    r.set_strideIndex((i / 16) % 4);
    r.set_operationType(i % 8);
    r.set_timestampDelta(i % 2);
    r.duration = i * 1000003u;
    r.set_mode(i % 8);
    r.set_level((i * 7) % 32);
    r.set_zone((i * 5) % 16);
    r.modeBits |= std::uint64_t(i % 3 == 0 ? i % 16 : 0) << 12;  // the spare bits, in no part
    return r;
}

}  // namespace

TEST_CASE("bit fields: each part the C compiler allocated, in either order, reads back through its getter") {
    for (const auto* form : {&bitfields::native_lsb, &bitfields::native_msb}) {
        const std::string name = std::string("bitfields-") + form->name + ".bin";
        CAPTURE(name);
        std::istringstream in(native_fixture(name));
        bitfields::NativeReader reader(in, *form);
        unsigned i = 0;
        while (reader.visit([&](const bitfields::Compressed& r) {
            CAPTURE(i);
            CHECK(r.fileDesc() == i % 64);
            CHECK(r.memStrideIndex() == i % 4);
            CHECK(r.sizeIndex() == (i / 4) % 4);
            CHECK(r.strideIndex() == (i / 16) % 4);
            CHECK(r.operationType() == i % 8);
            CHECK(r.timestampDelta() == i % 2);
            CHECK(r.mode() == i % 8);
            CHECK(r.level() == (i * 7) % 32);
            CHECK(r.zone() == (i * 5) % 16);
            CHECK(r == expected(i));
            ++i;
        })) {
        }
        CHECK(i == 64);
    }
}

TEST_CASE("bit fields: records built with the setters are written in each order as the C compiler laid them out") {
    for (const auto* form : {&bitfields::native_lsb, &bitfields::native_msb}) {
        CAPTURE(form->name);
        std::ostringstream out;
        bitfields::NativeWriter writer(out, *form);
        for (unsigned i = 0; i < 64; ++i) writer.write(expected(i));
        writer.close();
        CHECK(out.str() == native_fixture(std::string("bitfields-") + form->name + ".bin"));
    }
}

TEST_CASE("bit fields: a setter refuses a value wider than its part, and keeps the other parts") {
    bitfields::Compressed r;
    r.set_fileDesc(63);
    r.set_memStrideIndex(2);
    CHECK(r.fileDescBits == 0xbf);
    try {
        r.set_fileDesc(64);
        FAIL("a 7-bit value went into a 6-bit part");
    } catch (const rt::TraceError& e) {
        CHECK(std::string(e.what()) == "part 'fileDesc' is 6 bits wide; 64 does not fit");
    }
    CHECK(r.fileDescBits == 0xbf);
}
