// The generated native reader and writer of PTF on the file the independent
// C writer made (tests/native/ptf_binary_writer.c, checked in as
// tests/fixtures/native/ptf-example.ptfb): every value read where the writer
// put it, and the same records written back to the same bytes.
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include <ptf.hpp>

namespace rt = metatf::rt;

namespace {

std::string fixture() {
    std::ifstream in(std::string(METATF_SOURCE_DIR) + "/tests/fixtures/native/ptf-example.ptfb", std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), {}};
}

using Event = std::variant<ptf::Fo, ptf::Co, ptf::Cao, ptf::Do_, ptf::Sr, ptf::Gr, ptf::Dr, ptf::Dw, ptf::Adr, ptf::Adw,
                           ptf::Er, ptf::Ew, ptf::Ts, ptf::Te>;

// The events, in order; the class name is copied out of the reader's buffer.
std::vector<Event> read_events(const std::string& bytes, std::string& header, std::string& class_name) {
    std::istringstream in(bytes);
    ptf::NativeReader reader(in);
    std::vector<Event> events;
    while (reader.visit([&](const auto& record) {
        using T = std::decay_t<decltype(record)>;
        if constexpr (std::is_constructible_v<Event, T>) events.emplace_back(record);
        if constexpr (std::is_same_v<T, ptf::Fo>) class_name.assign(reinterpret_cast<const char*>(record.className.data()), record.className.size());
    })) {
    }
    header = reader.runtime().header();
    return events;
}

}  // namespace

TEST_CASE("the generated PTF native reader reads each value the C writer wrote") {
    std::string header, class_name;
    const std::vector<Event> events = read_events(fixture(), header, class_name);
    CHECK(header == "PTF 1.0\nbinary tree example, written by tests/native/ptf_binary_writer.c\n");
    REQUIRE(events.size() == 15);
    const auto& fo = std::get<ptf::Fo>(events[0]);
    CHECK(fo.formatId == 41);
    CHECK(fo.superFormatId == 0);
    CHECK(fo.numberOfPointers == 2);
    REQUIRE(fo.numberOfDataMembers_items.size() == 1);
    CHECK(fo.numberOfDataMembers_items[0].dataMemberFormatId == 2);
    REQUIRE(fo.numberOfArrayMembers_items.size() == 1);
    CHECK(fo.numberOfArrayMembers_items[0].arrayDataMemberFormatId == 3);
    CHECK(fo.numberOfArrayMembers_items[0].numberOfElements == 10);
    CHECK(fo.lengthOfClassName == 14);
    CHECK(class_name == "BinaryTreeNode");
    CHECK(std::get<ptf::Co>(events[1]).oid == 44);
    const auto& cao = std::get<ptf::Cao>(events[2]);
    CHECK((cao.formatId == 3 && cao.oid == 45 && cao.containerOid == 44 && cao.numberOfElements == 10));
    CHECK(std::holds_alternative<ptf::Gr>(events[4]));
    CHECK(std::get<ptf::Dw>(events[5]).offset == 1);
    const auto& adw = std::get<ptf::Adw>(events[7]);
    CHECK((adw.offset == -2 && adw.index == 7 && adw.length == 3));
    const auto& ew = std::get<ptf::Ew>(events[9]);
    CHECK((ew.fromOid == 44 && ew.edge == 1 && ew.toOid == 48));
    CHECK(std::holds_alternative<ptf::Ts>(events[11]));
    CHECK(std::holds_alternative<ptf::Te>(events[12]));
    CHECK(std::get<ptf::Co>(events[14]).oid == 0xffffffffu);
}

TEST_CASE("the generated PTF native writer writes the records back to the same bytes") {
    const std::string bytes = fixture();
    std::string header, class_name;
    const std::vector<Event> events = read_events(bytes, header, class_name);
    std::ostringstream out;
    ptf::NativeWriter writer(out);
    writer.runtime().header(header);
    for (Event e : events) {
        std::visit(
            [&](auto& record) {
                if constexpr (std::is_same_v<std::decay_t<decltype(record)>, ptf::Fo>) record.className = rt::as_bytes(class_name);
                writer.write(record);
            },
            e);
    }
    writer.close();
    CHECK(out.str() == bytes);
}

TEST_CASE("the native writer refuses a value wider than its field, and a header that would not read back") {
    std::ostringstream out;
    ptf::NativeWriter writer(out);
    CHECK_THROWS_WITH_AS(writer.runtime().header("no line break"), "the header (the first comment) must end with a line break",
                         rt::TraceError);
    writer.runtime().header("PTF 1.0\n");
    ptf::Dw dw;
    dw.offset = 70000;
    CHECK_THROWS_WITH_AS(writer.write(dw), "byte 10, record 0: field 'offset' of record 'dw' holds 70000, more than its 2 bytes can",
                         rt::TraceError);
    writer.close();
    CHECK(out.str() == "PTF 1.0\n$\n");  // nothing of the refused record
}
