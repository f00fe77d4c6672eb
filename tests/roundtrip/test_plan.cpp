// update_plan(): a plan adjusted in place after a width change must be the
// plan make_plan() builds from scratch, offsets included, for every record
// type of the shipped DTDs and random sequences of metadata changes.
#include <random>
#include <vector>

#include <charisma.hpp>
#include <hatf10.hpp>
#include <laplace.hpp>
#include <ptf.hpp>
#include <spc.hpp>

#include <doctest/doctest.h>

namespace rt = metatf::rt;

namespace {

std::vector<rt::FieldState> initial_states(const rt::RecordDesc& r) {
    std::vector<rt::FieldState> states;
    for (std::uint32_t f = 0; f < r.field_count; ++f) states.push_back(rt::FieldState::initial(r.fields[f]));
    return states;
}

// A change of width or interpretation of a random field; false when the
// field cannot take it (apply_metadata's refusal), and then nothing changed.
bool random_change(std::mt19937& random, const rt::DtdDesc& dtd, std::vector<rt::FieldState>& states,
                   std::uint32_t& field, rt::MetaOp& op, std::uint32_t& old_width) {
    field = 1 + static_cast<std::uint32_t>(random() % (states.size() - 1));
    constexpr rt::MetaOp ops[] = {rt::MetaOp::width, rt::MetaOp::width, rt::MetaOp::width,
                                  rt::MetaOp::none,  rt::MetaOp::delta, rt::MetaOp::base_offset};
    op = ops[random() % std::size(ops)];
    const std::uint64_t a = op == rt::MetaOp::width ? 1 + random() % 8 : random() % 1000;
    rt::FieldState changed = states[field];
    old_width = changed.width;
    if (rt::apply_metadata(changed, op, a, 0, dtd)) return false;
    states[field] = changed;
    return true;
}

void check_dtd(const rt::DtdDesc& dtd) {
    std::mt19937 random(20261123);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const rt::RecordDesc& r = dtd.records[i];
        if (r.predefined != rt::Predefined::none || r.field_count < 2) continue;
        CAPTURE(r.name);
        std::vector<rt::FieldState> kept = initial_states(r), fresh = kept;
        rt::RecordPlan plan = rt::make_plan(r, kept.data(), true);
        int in_place = 0;
        for (int step = 0; step < 300; ++step) {
            std::uint32_t field = 0, old_width = 0;
            rt::MetaOp op{};
            if (!random_change(random, dtd, kept, field, op, old_width)) continue;
            fresh[field] = kept[field];
            in_place += rt::update_plan(plan, r, kept.data(), field, op, old_width, true);
            const rt::RecordPlan expected = rt::make_plan(r, fresh.data(), true);
            CAPTURE(step);
            REQUIRE(plan.usable == expected.usable);
            if (!plan.usable) continue;
            CHECK(plan.plain == expected.plain);
            CHECK(plan.size == expected.size);
            CHECK(plan.varying == expected.varying);
            for (std::uint32_t f = 0; f < r.field_count; ++f) CHECK(kept[f].offset == fresh[f].offset);
        }
        // Records whose plan is usable at all take the in-place path for most width changes.
        if (plan.usable) CHECK(in_place > 0);
    }
}

}  // namespace

TEST_CASE("a plan adjusted in place equals the plan built from scratch") {
    check_dtd(hatf10::dtd);
    check_dtd(spc::dtd);
    check_dtd(ptf::dtd);
    check_dtd(laplace::dtd);
    check_dtd(charisma::dtd);
}
