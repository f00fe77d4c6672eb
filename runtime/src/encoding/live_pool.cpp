#include "metatf/encoding/live_pool.hpp"

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

// The room a reader's pool grows to: double, but from 64 KiB straight to a
// huge page (big_memory.hpp), as each size between would be faulted in and
// copied on the way.
std::size_t next_room(std::size_t capacity) {
    const std::size_t doubled = 2 * capacity, huge = detail::huge_page / sizeof(std::uint64_t);
    return doubled > huge / 32 ? std::max(doubled, huge) : doubled;
}

}  // namespace

std::size_t ValueIndex::slot_of(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = home(key);
    while (!empty(slots_[i]) && slots_[i].key != key) i = (i + 1) & mask;
    return i;
}

const ValueIndex::Ends* ValueIndex::find(std::uint64_t key) const {
    if (size_ == 0) return nullptr;
    const Slot& s = slots_[slot_of(key)];
    return empty(s) ? nullptr : &s.ends;
}

std::pair<ValueIndex::Ends*, bool> ValueIndex::try_emplace(std::uint64_t key, Ends ends) {
    if (2 * (size_ + 1) > slots_.size()) grow();  // at most half full: short probes
    Slot& s = slots_[slot_of(key)];
    if (!empty(s)) return {&s.ends, false};
    s = {key, ends};
    ++size_;
    return {&s.ends, true};
}

// Backward-shift deletion: the entries after the hole that may live there
// move into it, so no probe sequence is cut and no tombstone is left.
void ValueIndex::erase(std::uint64_t key) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t hole = slot_of(key);
    for (std::size_t j = (hole + 1) & mask; !empty(slots_[j]); j = (j + 1) & mask) {
        const std::size_t h = home(slots_[j].key);
        // The entry at j stays when its home lies cyclically in (hole, j].
        const bool stays = hole < j ? (hole < h && h <= j) : (hole < h || h <= j);
        if (stays) continue;
        slots_[hole] = slots_[j];
        hole = j;
    }
    slots_[hole].ends = {};
    --size_;
}

void ValueIndex::grow() {
    auto old = std::move(slots_);
    const std::size_t n = old.empty() ? 64 : 2 * old.size();
    slots_.assign(n, Slot{});
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
    for (const Slot& s : old) {
        if (!empty(s)) slots_[slot_of(s.key)] = s;
    }
}

// Positions grow with every add() and are reclaimed by compact() once most of
// them are dead.

void LivePool::add(std::uint64_t value) {
    const std::size_t p = values_.size();
    values_.push_back(value);
    older_.push_back(unlinked);
    newer_.push_back(unlinked);
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
    // The oldest value the index covered is one too far back now: out
    // first, so that the index never holds more than window_ values.
    if (edge_ != none && live_ > window_) {
        unindex(edge_);
        edge_ = next_alive(edge_);
    }
    index_at(p, true);
    if (edge_ == none) edge_ = p;
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

// There is one (the caller knows): empty spans are skipped whole.
std::size_t LivePool::next_alive(std::size_t p) const {
    std::size_t b = p / block;
    std::uint64_t w = words_[b] & (~std::uint64_t(1) << (p % block));
    while (w == 0) {
        ++b;
        while (b % 64 == 0 && spans_[b / 64] == 0) b += 64;
        w = words_[b];
    }
    return block * b + static_cast<std::size_t>(std::countr_zero(w));
}

std::size_t LivePool::prev_alive(std::size_t p) const {
    std::size_t b = p / block;
    std::uint64_t w = words_[b] & ((std::uint64_t(1) << (p % block)) - 1);
    while (w == 0) {
        if (b == 0) return none;
        --b;
        while (b % 64 == 63 && spans_[b / 64] == 0) {
            if (b < 64) return none;
            b -= 64;
        }
        w = words_[b];
    }
    return block * b + 63 - static_cast<std::size_t>(std::countl_zero(w));
}

std::optional<std::size_t> LivePool::find(std::uint64_t value, std::uint64_t reach) const {
    if (reach > window_ && live_ > window_) {
        window_ = std::bit_ceil(std::min(reach, max_live));
        rebuild();
    }
    const ValueIndex::Ends* e = index_.find(value);
    if (!e) return std::nullopt;
    return e->newest;
}

void LivePool::remove(std::size_t position) {
    if (!alive(position)) return;
    words_[position / block] &= ~(std::uint64_t(1) << (position % block));
    --blocks_[position / block];
    --spans_[position / span];
    --groups_[position / group];
    --live_;
    if (position < edge_) return;  // older than the window: the index is as it was
    unindex(position);
    if (live_ >= window_) {  // the newest value older than the window moves into it
        edge_ = prev_alive(edge_);
        index_at(edge_, false);
    } else if (position == edge_) {
        edge_ = live_ == 0 ? none : next_alive(position);
    }
}

// `position` joins the index as the newest indexed copy of its value (a
// value added, or the window rebuilt from its oldest up) or as the oldest
// (a value the window reaches now).
void LivePool::index_at(std::size_t position, bool newest) const {
    const auto p = static_cast<std::uint32_t>(position);
    const auto [ends, added] = index_.try_emplace(values_[position], {p, p});
    if (added) return;
    std::uint32_t& end = newest ? ends->newest : ends->oldest;
    (newest ? older_ : newer_)[position] = end;
    (newest ? newer_ : older_)[end] = p;
    end = p;
}

void LivePool::unindex(std::size_t position) const {
    const std::uint32_t older = older_[position], newer = newer_[position];
    older_[position] = newer_[position] = unlinked;
    if (older == unlinked && newer == unlinked) {
        index_.erase(values_[position]);
        return;
    }
    ValueIndex::Ends& ends = *index_.find(values_[position]);
    (newer == unlinked ? ends.newest : older_[newer]) = older;
    (older == unlinked ? ends.oldest : newer_[older]) = newer;
}

// The index again, for the newest window_ live values, oldest first.
void LivePool::rebuild() const {
    index_.clear();
    std::fill(older_.begin(), older_.end(), unlinked);
    std::fill(newer_.begin(), newer_.end(), unlinked);
    edge_ = live_ == 0 ? none : *at_back(std::min(live_, window_) - 1);
    if (edge_ == none) return;
    for (std::size_t p = edge_; p < values_.size(); ++p) {
        if (alive(p)) index_at(p, true);
    }
}

void LivePool::compact() {
    std::size_t n = 0;
    for (std::size_t p = 0; p < values_.size(); ++p) {
        if (alive(p)) values_[n++] = values_[p];
    }
    values_.resize(n);
    older_.resize(n);
    newer_.resize(n);
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
    rebuild();
}

std::optional<std::uint64_t> LivePools::value_back(std::uint8_t pool, std::uint64_t back) const {
    const auto p = at(pool).at_back(back);
    return p ? std::optional<std::uint64_t>(at(pool).value(*p)) : std::nullopt;
}

std::optional<LivePools::Found> LivePools::find(std::uint8_t pool, std::uint64_t value, std::uint64_t reach) const {
    const auto p = at(pool).find(value, reach);
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
        if (values_.size() + block > values_.capacity()) values_.reserve(next_room(values_.capacity()));
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
