#include "metatf/live_pool.hpp"

#include <algorithm>
#include <bit>
#include <functional>

namespace metatf::rt {

namespace {

// The position in `word` of its set bit with `above` set bits above it.
unsigned bit_from_top(std::uint64_t word, std::uint64_t above) {
    for (; above > 0; --above) word &= ~(std::uint64_t(1) << (63 - std::countl_zero(word)));
    return 63 - static_cast<unsigned>(std::countl_zero(word));
}

}  // namespace

std::size_t ValueIndex::slot_of(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = home(key);
    while (slots_[i].position != none && slots_[i].key != key) i = (i + 1) & mask;
    return i;
}

const std::size_t* ValueIndex::find(std::uint64_t key) const {
    if (size_ == 0) return nullptr;
    const Slot& s = slots_[slot_of(key)];
    return s.position == none ? nullptr : &s.position;
}

std::pair<std::size_t*, bool> ValueIndex::try_emplace(std::uint64_t key, std::size_t position) {
    if (2 * (size_ + 1) > slots_.size()) grow();  // at most half full: short probes
    Slot& s = slots_[slot_of(key)];
    if (s.position != none) return {&s.position, false};
    s = {key, position};
    ++size_;
    return {&s.position, true};
}

// Backward-shift deletion: the entries after the hole that may live there
// move into it, so no probe sequence is cut and no tombstone is left.
void ValueIndex::erase(std::uint64_t key) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t hole = slot_of(key);
    for (std::size_t j = (hole + 1) & mask; slots_[j].position != none; j = (j + 1) & mask) {
        const std::size_t h = home(slots_[j].key);
        // The entry at j stays when its home lies cyclically in (hole, j].
        const bool stays = hole < j ? (hole < h && h <= j) : (hole < h || h <= j);
        if (stays) continue;
        slots_[hole] = slots_[j];
        hole = j;
    }
    slots_[hole].position = none;
    --size_;
}

void ValueIndex::grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t n = old.empty() ? 64 : 2 * old.size();
    slots_.assign(n, Slot{});
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
    for (const Slot& s : old) {
        if (s.position != none) slots_[slot_of(s.key)] = s;
    }
}

// Positions grow with every add() and are reclaimed by compact() once most of
// them are dead.

void LivePool::add(std::uint64_t value) {
    const std::size_t p = values_.size();
    values_.push_back(value);
    if (p % group == 0) groups_.push_back(0);
    if (p % span == 0) spans_.push_back(0);
    if (p % block == 0) {
        words_.push_back(0);
        blocks_.push_back(0);
    }
    words_.back() |= std::uint64_t(1) << (p % block);
    ++blocks_.back();
    ++spans_.back();
    ++groups_.back();
    ++live_;
    index(p);
    if (live_ > max_live) remove(*at_back(live_ - 1));
    if (values_.size() > 2 * live_ + 4096) compact();
}

std::optional<std::size_t> LivePool::at_back(std::uint64_t back) const {
    if (back >= live_) return std::nullopt;
    std::size_t g = groups_.size() - 1;
    for (; back >= groups_[g]; --g) back -= groups_[g];
    std::size_t s = std::min(spans_.size(), (g + 1) * 64) - 1;
    for (; back >= spans_[s]; --s) back -= spans_[s];
    for (std::size_t b = std::min(blocks_.size(), (s + 1) * 64) - 1;; --b) {
        if (back < blocks_[b]) return block * b + bit_from_top(words_[b], back);
        back -= blocks_[b];
    }
}

std::uint64_t LivePool::back_of(std::size_t position) const {
    const std::size_t b = position / block, s = position / span, g = position / group;
    std::uint64_t back = static_cast<std::uint64_t>(std::popcount(words_[b] & ~(~std::uint64_t(0) >> (63 - position % block))));
    for (std::size_t c = b + 1; c < std::min(blocks_.size(), (s + 1) * 64); ++c) back += blocks_[c];
    for (std::size_t t = s + 1; t < std::min(spans_.size(), (g + 1) * 64); ++t) back += spans_[t];
    for (std::size_t h = g + 1; h < groups_.size(); ++h) back += groups_[h];
    return back;
}

std::optional<std::size_t> LivePool::find(std::uint64_t value) const {
    const std::size_t* p = newest_.find(value);
    if (!p) return std::nullopt;
    return *p;
}

void LivePool::remove(std::size_t position) {
    if (!alive(position)) return;
    words_[position / block] &= ~(std::uint64_t(1) << (position % block));
    --blocks_[position / block];
    --spans_[position / span];
    --groups_[position / group];
    --live_;
    // The newest copy left: an older live copy of the same value, if any.
    std::size_t* newest = newest_.find(values_[position]);
    if (!newest || *newest != position) return;
    std::size_t p = same_before_[position];
    while (p != none && !alive(p)) p = same_before_[p];
    if (p == none) {
        newest_.erase(values_[position]);
    } else {
        *newest = p;
    }
}

void LivePool::index(std::size_t position) {
    const auto [newest, added] = newest_.try_emplace(values_[position], position);
    same_before_.push_back(added ? none : *newest);
    *newest = position;
}

void LivePool::compact() {
    std::size_t n = 0;
    for (std::size_t p = 0; p < values_.size(); ++p) {
        if (alive(p)) values_[n++] = values_[p];
    }
    values_.resize(n);
    words_.assign((n + block - 1) / block, ~std::uint64_t(0));
    blocks_.assign(words_.size(), static_cast<std::uint8_t>(block));
    spans_.assign((n + span - 1) / span, static_cast<std::uint32_t>(span));
    if (n % block != 0) {
        words_.back() = (std::uint64_t(1) << (n % block)) - 1;
        blocks_.back() = static_cast<std::uint8_t>(n % block);
    }
    if (n % span != 0) spans_.back() = static_cast<std::uint32_t>(n % span);
    groups_.assign((n + group - 1) / group, static_cast<std::uint32_t>(group));
    if (n % group != 0) groups_.back() = static_cast<std::uint32_t>(n % group);
    newest_.clear();
    same_before_.clear();
    for (std::size_t p = 0; p < n; ++p) index(p);
}

std::optional<std::uint64_t> LivePools::value_back(std::uint8_t pool, std::uint64_t back) const {
    const auto p = at(pool).at_back(back);
    return p ? std::optional<std::uint64_t>(at(pool).value(*p)) : std::nullopt;
}

std::optional<LivePools::Found> LivePools::find(std::uint8_t pool, std::uint64_t value) const {
    const auto p = at(pool).find(value);
    if (!p) return std::nullopt;
    return Found{*p, at(pool).back_of(*p)};
}

void LivePools::end_record() {
    for (const auto& [pool, position] : referred_) at(pool).remove(position);
    for (const auto& [pool, value] : fed_) at(pool).add(value);
    referred_.clear();
    fed_.clear();
}

// Blocks fill from the back: values go into the last block until it holds
// 64, then a new one opens. Blocks emptied by removals stay until compact().
// Past max_live the oldest value leaves.
void ReadPool::add_slow(std::uint64_t value) {
    if (live_ == max_live) {
        while (counts_[first_] == 0) ++first_;
        remove(block * first_);
    }
    if (counts_[last_] == block) {
        last_ = counts_.size();
        if (last_ % group == 0) groups_.push_back(0);
        if (last_ % span == 0) spans_.push_back(0);
        counts_.push_back(0);
        values_.resize(values_.size() + block);
        if (counts_.size() > 2 * (live_ / block) + 64) compact();
    }
    add(value);
}

std::size_t ReadPool::far_back(std::uint64_t back) const {
    std::size_t g = groups_.size() - 1;
    for (; back >= groups_[g]; --g) back -= groups_[g];
    std::size_t s = std::min(spans_.size(), (g + 1) * (group / span)) - 1;
    for (; back >= spans_[s]; --s) back -= spans_[s];
    std::size_t b = std::min(counts_.size(), (s + 1) * span) - 1;
    for (; back >= counts_[b]; --b) back -= counts_[b];
    return block * b + counts_[b] - 1 - back;
}

// Packs the live values into full blocks, oldest first.
void ReadPool::compact() {
    std::size_t n = 0;
    for (std::size_t b = first_; b < counts_.size(); ++b) {
        const auto from = values_.begin() + static_cast<std::ptrdiff_t>(block * b);
        std::copy(from, from + counts_[b], values_.begin() + static_cast<std::ptrdiff_t>(n));
        n += counts_[b];
    }
    const std::size_t blocks = std::max<std::size_t>((n + block - 1) / block, 1);
    values_.resize(block * blocks);
    counts_.assign(blocks, static_cast<std::uint32_t>(block));
    counts_.back() = static_cast<std::uint32_t>(n - block * (blocks - 1));
    spans_.assign((blocks + span - 1) / span, 0);
    groups_.assign((blocks + group - 1) / group, 0);
    for (std::size_t b = 0; b < blocks; ++b) {
        spans_[b / span] += counts_[b];
        groups_[b / group] += counts_[b];
    }
    first_ = 0;
    last_ = blocks - 1;
}

// Several values of one record leave their pools highest slot first, so that
// the moves within a block do not shift the slots still to go; a value
// referred to twice leaves once.
void ReadPools::remove_referred() {
    if (referred_.size() == 2) {  // an allocation's size and address, say
        const Change a = std::max(referred_[0], referred_[1]), b = std::min(referred_[0], referred_[1]);
        pools_[a.pool - 1].remove(a.value);
        if (b != a) pools_[b.pool - 1].remove(b.value);
        return;
    }
    std::sort(referred_.begin(), referred_.end(), std::greater<>());
    const auto end = std::unique(referred_.begin(), referred_.end());
    for (auto it = referred_.begin(); it != end; ++it) pools_[it->pool - 1].remove(it->value);
}

}  // namespace metatf::rt
