#include "metatf/encoding/predictor.hpp"

#include <algorithm>

namespace metatf::rt {

namespace {

// Three values in one context word: order-3 predictors see the last three.
constexpr std::uint64_t three(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    return a ^ std::rotl(b, 21) ^ std::rotl(c, 42);
}

}  // namespace

std::uint64_t& PredictTables::slot(Table t, std::uint64_t context, std::uint64_t salt) {
    if (slots_.empty()) slots_.assign(std::size_t(4) << bits_, Slot{0, generation_});
    const std::uint64_t mixed = (context + salt * 0x9e3779b97f4a7c15u) * 0xd6e8feb86659fd93u;
    const std::size_t i = (std::size_t(t) << bits_) + (mixed >> (64 - bits_));
    Slot& s = slots_[i];
    if (s.written != generation_) s = {0, generation_};
    return s.word;
}

std::uint64_t PredictTables::prediction(unsigned which, std::uint64_t salt, const PredictHistory& h) {
    const auto& l = h.last;
    switch (which) {
        case 0: return l[0];
        case 1: return l[1];
        case 2: return l[0] + (l[0] - l[1]);
        case 3: return slot(fcm1, l[0], salt);
        case 4: return slot(fcm3, three(l[0], l[1], l[2]), salt);
        case 5: return l[0] + slot(dfcm1, l[0] - l[1], salt);
        default: return l[0] + slot(dfcm3, three(l[0] - l[1], l[1] - l[2], l[2] - l[3]), salt);
    }
}

std::uint64_t PredictTables::named(std::uint64_t set, std::uint64_t code, std::uint64_t salt, const PredictHistory& h) {
    for (; code != 0; --code) set &= set - 1;  // drops the lowest bits, one a code
    return prediction(static_cast<unsigned>(std::countr_zero(set)), salt, h);
}

std::optional<std::uint64_t> PredictTables::code_of(std::uint64_t set, std::uint64_t value, std::uint64_t salt, const PredictHistory& h) {
    std::uint64_t code = 0;
    for (unsigned which = 0; which < predictor_count; ++which) {
        if ((set >> which & 1) == 0) continue;
        if (prediction(which, salt, h) == value) return code;
        ++code;
    }
    return std::nullopt;
}

void PredictTables::learn(std::uint64_t set, std::uint64_t salt, const PredictHistory& h, std::uint64_t value) {
    const auto& l = h.last;
    const std::uint64_t d0 = l[0] - l[1];
    if (set >> 3 & 1) slot(fcm1, l[0], salt) = value;
    if (set >> 4 & 1) slot(fcm3, three(l[0], l[1], l[2]), salt) = value;
    if (set >> 5 & 1) slot(dfcm1, d0, salt) = value - l[0];
    if (set >> 6 & 1) slot(dfcm3, three(d0, l[1] - l[2], l[2] - l[3]), salt) = value - l[0];
}

void PredictTables::clear() {
    if (++generation_ != 0) return;
    std::fill(slots_.begin(), slots_.end(), Slot{0, generation_});  // once in 2^32 clears
}

}  // namespace metatf::rt
