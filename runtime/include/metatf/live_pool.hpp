// The values `live` fields refer to: pools of values in the order fields
// that feed them added them. A reference stores how many live values of its
// pool were added after the one it names (0: the newest), so the free of a
// recently allocated block stores a small number however wide its address is.
//
// Within a record every reference sees the pool as it was before the record;
// at the record's end the values it referred to leave their pools, then the
// values its fields fed join them, in layout order. So a writer can size a
// reference before it writes the record, and a field that both refers and
// feeds moves its value to the front. Readers and writers keep identical
// pools: every change is deterministic, memory is bounded by max_live.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vocabulary.hpp"

namespace metatf::rt {

class LivePool {
public:
    // At most this many values are live: adding one more drops the oldest.
    static constexpr std::uint64_t max_live = std::uint64_t(1) << 20;
    static constexpr std::size_t none = ~std::size_t(0);

    // `indexed`: keep a value -> position index for find() (writers).
    explicit LivePool(bool indexed = false) : indexed_(indexed) {}

    std::uint64_t live() const { return live_; }
    void add(std::uint64_t value);
    // Takes the value at `position` out (nothing if it is out already).
    void remove(std::size_t position);
    // The position of the live value with `back` live values after it, if there are that many.
    std::optional<std::size_t> at_back(std::uint64_t back) const;
    // How many live values come after the one at `position`.
    std::uint64_t back_of(std::size_t position) const;
    std::uint64_t value(std::size_t position) const { return values_[position]; }
    // The position of the newest live copy of `value`, if any (indexed pools only).
    std::optional<std::size_t> find(std::uint64_t value) const;

private:
    // Positions in blocks of 64 (a word of alive bits and a count each),
    // blocks in spans of 64 and spans in groups of 64 (a count each): a
    // reference, mostly to a recent value, is found by summing counts back
    // from the newest, at most 9 groups (compaction keeps positions under
    // 2 max_live + 4096), 64 spans and 64 blocks however far back it is.
    static constexpr std::size_t block = 64, span = 64 * block, group = 64 * span;
    bool alive(std::size_t p) const { return (words_[p / block] >> (p % block) & 1) != 0; }
    void compact();

    bool indexed_;
    std::uint64_t live_ = 0;
    std::vector<std::uint64_t> values_;  // by position: the order of add()
    std::vector<std::uint64_t> words_;   // alive bits by position
    std::vector<std::uint8_t> blocks_;   // live values of each block
    std::vector<std::uint32_t> spans_;   // live values of each span
    std::vector<std::uint32_t> groups_;  // live values of each group
    // Indexed: value -> its newest live position, and by position the one before it with the same value.
    std::unordered_map<std::uint64_t, std::size_t> newest_;
    std::vector<std::size_t> same_before_;
    void index(std::size_t position);
};

// The pools of a reader or writer (numbered 1 to max_pool), with the changes
// the current record makes to them at its end.
class LivePools {
public:
    explicit LivePools(bool indexed) : pools_{LivePool(indexed), LivePool(indexed), LivePool(indexed), LivePool(indexed)} {}

    // Reading: the value `back` places from the newest of `pool`, which leaves it at the record's end.
    std::optional<std::uint64_t> refer_back(std::uint8_t pool, std::uint64_t back);
    // Writing: how far back `value` is in `pool`, if it is live there.
    std::optional<std::uint64_t> back_of(std::uint8_t pool, std::uint64_t value) const;
    // The value `back` places from the newest of `pool`, if there are that many (the pool unchanged).
    std::optional<std::uint64_t> value_back(std::uint8_t pool, std::uint64_t back) const;
    // Writing: `value`, which back_of() found, leaves `pool` at the record's end.
    void refer(std::uint8_t pool, std::uint64_t value);
    // `value` joins `pool` at the record's end.
    void feed(std::uint8_t pool, std::uint64_t value) { fed_.emplace_back(pool, value); }
    std::uint64_t live(std::uint8_t pool) const { return at(pool).live(); }
    bool pending() const { return !referred_.empty() || !fed_.empty(); }
    void end_record();

private:
    LivePool& at(std::uint8_t pool) { return pools_[pool - 1]; }
    const LivePool& at(std::uint8_t pool) const { return pools_[pool - 1]; }

    std::array<LivePool, max_pool> pools_;
    std::vector<std::pair<std::uint8_t, std::size_t>> referred_;  // pool, position
    std::vector<std::pair<std::uint8_t, std::uint64_t>> fed_;     // pool, value
};

}  // namespace metatf::rt
