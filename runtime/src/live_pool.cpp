#include "metatf/live_pool.hpp"

#include <bit>

namespace metatf::rt {

// Positions grow with every add() and are reclaimed by compact() once most of
// them are dead; tree_ counts the live ones so that rank and position convert
// in O(log n).

void LivePool::add(std::uint64_t value) {
    const std::size_t i = values_.size() + 1;  // the new node, 1-based
    values_.push_back(value);
    alive_.push_back(1);
    const std::size_t low = i & (~i + 1);
    tree_.push_back(static_cast<std::uint32_t>(1 + prefix(i - 1) - prefix(i - low)));
    ++live_;
    if (indexed_) index(i - 1);
    if (live_ > max_live) remove(position_of(1));
    if (values_.size() > 2 * live_ + 4096) compact();
}

std::optional<std::size_t> LivePool::at_back(std::uint64_t back) const {
    if (back >= live_) return std::nullopt;
    return position_of(live_ - back);
}

std::optional<std::size_t> LivePool::find(std::uint64_t value) const {
    const auto it = newest_.find(value);
    if (it == newest_.end()) return std::nullopt;
    return it->second;
}

std::uint64_t LivePool::prefix(std::size_t n) const {
    std::uint64_t live = 0;
    for (std::size_t i = n; i > 0; i -= i & (~i + 1)) live += tree_[i - 1];
    return live;
}

std::size_t LivePool::position_of(std::uint64_t rank) const {
    std::size_t pos = 0;
    for (std::size_t step = std::bit_floor(tree_.size()); step > 0; step >>= 1) {
        if (pos + step <= tree_.size() && tree_[pos + step - 1] < rank) {
            pos += step;
            rank -= tree_[pos - 1];
        }
    }
    return pos;
}

void LivePool::remove(std::size_t position) {
    if (!alive_[position]) return;
    alive_[position] = 0;
    for (std::size_t i = position + 1; i <= tree_.size(); i += i & (~i + 1)) --tree_[i - 1];
    --live_;
    if (!indexed_) return;
    // The newest copy left: an older live copy of the same value, if any.
    const auto it = newest_.find(values_[position]);
    if (it == newest_.end() || it->second != position) return;
    std::size_t p = same_before_[position];
    while (p != none && !alive_[p]) p = same_before_[p];
    if (p == none) {
        newest_.erase(it);
    } else {
        it->second = p;
    }
}

void LivePool::index(std::size_t position) {
    const auto [it, added] = newest_.try_emplace(values_[position], position);
    same_before_.push_back(added ? none : it->second);
    it->second = position;
}

void LivePool::compact() {
    std::size_t n = 0;
    for (std::size_t p = 0; p < values_.size(); ++p) {
        if (alive_[p]) values_[n++] = values_[p];
    }
    values_.resize(n);
    alive_.assign(n, 1);
    tree_.assign(n, 1);
    for (std::size_t i = 1; i <= n; ++i) {
        const std::size_t parent = i + (i & (~i + 1));
        if (parent <= n) tree_[parent - 1] += tree_[i - 1];
    }
    if (!indexed_) return;
    newest_.clear();
    same_before_.clear();
    for (std::size_t p = 0; p < n; ++p) index(p);
}

std::optional<std::uint64_t> LivePools::refer_back(std::uint8_t pool, std::uint64_t back) {
    const auto p = at(pool).at_back(back);
    if (!p) return std::nullopt;
    referred_.emplace_back(pool, *p);
    return at(pool).value(*p);
}

std::optional<std::uint64_t> LivePools::value_back(std::uint8_t pool, std::uint64_t back) const {
    const auto p = at(pool).at_back(back);
    return p ? std::optional<std::uint64_t>(at(pool).value(*p)) : std::nullopt;
}

std::optional<std::uint64_t> LivePools::back_of(std::uint8_t pool, std::uint64_t value) const {
    const auto p = at(pool).find(value);
    if (!p) return std::nullopt;
    return at(pool).back_of(*p);
}

void LivePools::refer(std::uint8_t pool, std::uint64_t value) {
    if (const auto p = at(pool).find(value)) referred_.emplace_back(pool, *p);
}

void LivePools::end_record() {
    for (const auto& [pool, position] : referred_) at(pool).remove(position);
    for (const auto& [pool, value] : fed_) at(pool).add(value);
    referred_.clear();
    fed_.clear();
}

}  // namespace metatf::rt
