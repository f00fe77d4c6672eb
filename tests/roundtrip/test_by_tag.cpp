// detail::by_tag(): the fast loops' search from a tag to its record. A record
// it misses is still read, by the general path, so round trips cannot see a
// fault here: this checks every tag against the descriptor.
#include <map>
#include <tuple>

#include <charisma.hpp>
#include <features.hpp>
#include <hatf10.hpp>
#include <laplace.hpp>
#include <paper-count.hpp>
#include <ptf.hpp>
#include <spc.hpp>
#include <variants.hpp>

#include <doctest/doctest.h>

namespace rt = metatf::rt;

namespace {

constexpr int none = -1;

// The slot of the user record that alone has `tag`, from the descriptor.
std::map<std::uint64_t, int> expected_slots(const rt::DtdDesc& dtd) {
    std::map<std::uint64_t, int> slots, count;
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const rt::RecordDesc& r = dtd.records[i];
        ++count[r.tag];
        if (r.predefined == rt::Predefined::none) slots[r.tag] = static_cast<int>(i);
    }
    for (auto& [tag, slot] : slots) {
        if (count[tag] > 1) slot = none;
    }
    return slots;
}

template <typename Codec>
void check_every_tag(const char* name) {
    const auto expected = expected_slots(Codec::dtd);
    const std::uint64_t last = expected.empty() ? 0 : expected.rbegin()->first;
    for (std::uint64_t tag = 0; tag <= last + 2; ++tag) {
        int found = none;
        const bool taken = rt::detail::by_tag<typename Codec::ByTag>(tag, [&]<typename R>(std::type_identity<R>) {
            found = static_cast<int>(R::type);
            return true;
        });
        const auto it = expected.find(tag);
        const int want = it == expected.end() ? none : it->second;
        INFO(name << " tag " << tag);
        CHECK(found == want);
        CHECK(taken == (want != none));
    }
}

}  // namespace

TEST_CASE("by_tag finds the record of every tag that names one alone, and no other") {
    check_every_tag<hatf10::Codec>("hatf10");
    check_every_tag<ptf::Codec>("ptf");
    check_every_tag<spc::Codec>("spc");
    check_every_tag<laplace::Codec>("laplace");
    check_every_tag<charisma::Codec>("charisma");
    check_every_tag<features::Codec>("features");  // tag 4 is shared by two sections' records: in no list
    check_every_tag<paper_count::Codec>("paper-count");
    check_every_tag<variants::Codec>("variants");
}

TEST_CASE("by_tag of a tag past every record's, and of an empty list") {
    auto never = [](auto) {
        FAIL("no record has this tag");
        return true;
    };
    CHECK_FALSE(rt::detail::by_tag<charisma::Codec::ByTag>(~std::uint64_t(0), never));
    CHECK_FALSE(rt::detail::by_tag<std::tuple<>>(4, never));
}

TEST_CASE("by_tag returns what the record's handler returns") {
    const bool declined = rt::detail::by_tag<hatf10::Codec::ByTag>(hatf10::Alloc::tag, [](auto) { return false; });
    CHECK_FALSE(declined);
}
