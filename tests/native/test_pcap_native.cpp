// The generated pcap native reader and writer on the captures the
// independent C writer made (tests/native/pcap_writer.c, checked in as
// tests/fixtures/native/pcap-*.pcap): the form found by the magic, the file
// header read as a record, the packets' fields where the writer put them,
// and each capture written back to the same bytes in its own form.
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "fixture.hpp"

#include <pcap.hpp>

namespace rt = metatf::rt;

TEST_CASE("the generated pcap native reader and writer: each magic's form, the header record and the packets, byte for byte") {
    for (const char* form : {"le_usec", "be_usec", "le_nsec", "be_nsec"}) {
        CAPTURE(form);
        const std::string file = std::string("pcap-") + std::string(form).replace(2, 1, "-") + ".pcap";
        const std::string bytes = metatf::test::native_fixture(file);
        std::istringstream in(bytes);
        pcap::NativeReader reader(in);
        CHECK(std::string(reader.runtime().form().name) == form);
        const bool nsec = std::string(form).ends_with("nsec");
        std::ostringstream out;
        pcap::NativeWriter writer(out, reader.runtime().form());
        std::vector<std::uint64_t> lengths;
        while (reader.visit([&](const auto& r) {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, pcap::FileHeader>) {
                CHECK(r.version_major == 2);
                CHECK(r.version_minor == 4);
                CHECK(r.thiszone == -3600);
                CHECK(r.snaplen == 96);
                CHECK(r.linktype == 1);
            } else if constexpr (std::is_same_v<T, pcap::Packet>) {
                const auto k = lengths.size();
                CHECK(r.ts_sec == 1700000000u + k);
                CHECK(r.ts_usec == (nsec ? 999999999u : 999999u) - k);
                CHECK(r.data.size() == r.incl_len);
                if (r.incl_len > 1) CHECK(std::to_integer<int>(r.data[1]) == 7 + int(k));
                lengths.push_back(r.orig_len);
            }
            writer.write(r);
        })) {
        }
        writer.close();
        CHECK(lengths == std::vector<std::uint64_t>{0, 1, 60, 1514});
        CHECK(out.str() == bytes);
    }
}
