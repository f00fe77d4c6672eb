// The values `live` fields refer to: pools of values in the order fields
// that feed them added them. A reference stores how many live values of its
// pool were added after the one it names (0: the newest), so the free of a
// recently allocated block stores a small number however wide its address is.
//
// Within a record every reference sees the pool as it was before the record;
// at the record's end the values it referred to leave their pools, then the
// values its fields fed join them, in layout order. So a writer can size a
// reference before it writes the record, and a field that both refers and
// feeds moves its value to the front. Readers and writers keep the same
// pools in different structures (a writer looks a value up, a reader counts
// back to it): every change is deterministic, memory is bounded by max_live.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "metatf/core/big_memory.hpp"
#include "metatf/core/bytes.hpp"
#include "metatf/core/vocabulary.hpp"

namespace metatf::rt {

// At most this many values of a pool are live: adding one more drops the oldest.
inline constexpr std::uint64_t max_live = std::uint64_t(1) << 20;

// A writer's index from a value to the newest and the oldest position its
// indexed live copies hold: open addressing with linear probing, every key in one
// array. A writer looks up every value a pool field stores;
// std::unordered_map's node per entry cost a malloc at each add() and a
// cache miss at each look-up. Positions stay under 2^22 (LivePool::compact).
class ValueIndex {
public:
    static constexpr std::uint32_t none = ~std::uint32_t(0);
    struct Ends {
        std::uint32_t newest = none, oldest = none;  // newest none: an empty slot
    };
    // The entry of `key`, or null.
    const Ends* find(std::uint64_t key) const;
    Ends* find(std::uint64_t key) { return const_cast<Ends*>(std::as_const(*this).find(key)); }
    // The entry of `key`, added as `ends` when it is not there; whether it was added.
    std::pair<Ends*, bool> try_emplace(std::uint64_t key, Ends ends);
    // Takes out `key`, which is there.
    void erase(std::uint64_t key);
    // Starts loading the slot where a look-up of `key` begins (a hint only):
    // a large pool's index is far bigger than the caches.
    void prefetch(std::uint64_t key) const {
        if (!slots_.empty()) __builtin_prefetch(&slots_[home(key)]);
    }
    // Empties it, keeping its room: a pool compacts often when few values are live.
    void clear() {
        std::fill(slots_.begin(), slots_.end(), Slot{});
        size_ = 0;
    }

private:
    struct Slot {
        std::uint64_t key = 0;
        Ends ends;
    };
    static bool empty(const Slot& s) { return s.ends.newest == none; }
    std::size_t home(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15u) >> shift_); }
    std::size_t slot_of(std::uint64_t key) const;  // where key is, or the empty slot it would go in
    void grow();
    std::vector<Slot, detail::BigAllocator<Slot>> slots_;
    unsigned shift_ = 64;
    std::size_t size_ = 0;
};

// A writer's pool: values by position, with an index from value to position
// so that a writer finds how far back a value is.
class LivePool {
public:
    static constexpr std::size_t none = ~std::size_t(0);

    std::uint64_t live() const { return live_; }
    void add(std::uint64_t value);
    // Takes the value at `position` out (nothing if it is out already).
    void remove(std::size_t position);
    // The position of the live value with `back` live values after it, if there are that many.
    std::optional<std::size_t> at_back(std::uint64_t back) const;
    // How many live values come after the one at `position`.
    std::uint64_t back_of(std::size_t position) const;
    std::uint64_t value(std::size_t position) const { return values_[position]; }
    // The position of the newest live copy of `value` when fewer than
    // `reach` live values came after it; otherwise none, or an older copy.
    std::optional<std::size_t> find(std::uint64_t value, std::uint64_t reach = max_live) const;
    void prefetch(std::uint64_t value) const { index_.prefetch(value); }

private:
    // Positions in blocks of 64 (a word of alive bits and a count each),
    // blocks in spans of 64 and spans in groups of 64 (a count each): a
    // reference, mostly to a recent value, is found by summing counts back
    // from the newest, at most 9 groups (compaction keeps positions under
    // 2 max_live + 4096), 64 spans and 64 blocks however far back it is.
    static constexpr std::size_t block = 64, span = 64 * block, group = 64 * span;
    bool alive(std::size_t p) const { return (words_[p / block] >> (p % block) & 1) != 0; }
    std::size_t next_alive(std::size_t p) const;  // the first live position after p
    std::size_t prev_alive(std::size_t p) const;  // the last live position before p, or none
    void compact();

    std::uint64_t live_ = 0;
    std::vector<std::uint64_t, detail::BigAllocator<std::uint64_t>> values_;  // by position: the order of add()
    std::vector<std::uint64_t> words_;   // alive bits by position
    std::vector<std::uint8_t> blocks_;   // live values of each block
    std::vector<std::uint32_t> spans_;   // live values of each span
    std::vector<std::uint32_t> groups_;  // live values of each group

    // The index covers only the newest `window_` live values (all of them
    // when fewer are live): a writer whose references reach a few hundred
    // values back keeps an index that fits the caches however many values
    // are live (the freed blocks of a long heap trace: up to max_live).
    // find() widens it to the reach asked for. It is a cache of what the
    // positions hold, so a const find() may rebuild it: const calls are not
    // safe from several threads at once.
    static constexpr std::uint32_t unlinked = ValueIndex::none;
    void index_at(std::size_t position, bool newest) const;  // as its value's newest or oldest indexed copy
    void unindex(std::size_t position) const;       // a value that leaves the window or the pool
    void rebuild() const;
    mutable std::uint64_t window_ = 256;
    mutable std::size_t edge_ = none;  // the oldest position the index covers; none: no value is live
    // Value -> its newest and oldest indexed positions, and by position the
    // next older and newer indexed copy of the same value.
    mutable ValueIndex index_;
    mutable std::vector<std::uint32_t> older_, newer_;
};

// The pools of a writer (numbered 1 to max_pool), with the changes the
// current record makes to them at its end.
class LivePools {
public:
    // Where the newest live copy of a value is, and how many live values came after it.
    struct Found {
        std::size_t position;
        std::uint64_t back;
    };
    // The newest live copy of `value` if fewer than `reach` live values came after it (otherwise none, or an older copy).
    std::optional<Found> find(std::uint8_t pool, std::uint64_t value, std::uint64_t reach = max_live) const;
    // How far back `value` is in `pool`, if it is live there.
    std::optional<std::uint64_t> back_of(std::uint8_t pool, std::uint64_t value) const {
        const auto f = find(pool, value);
        return f ? std::optional<std::uint64_t>(f->back) : std::nullopt;
    }
    bool holds(std::uint8_t pool, std::uint64_t value) const { return at(pool).find(value).has_value(); }
    // A hint that `value` will be looked up in the pools soon: a writer that
    // sees its values coming starts the cache misses of their look-ups early.
    void prefetch(std::uint64_t value) const {
        for (const LivePool& p : pools_) p.prefetch(value);
    }
    // The value `back` places from the newest of `pool`, if there are that many (the pool unchanged).
    std::optional<std::uint64_t> value_back(std::uint8_t pool, std::uint64_t back) const;
    // The value find() found leaves `pool` at the record's end.
    void refer(std::uint8_t pool, const Found& found) { referred_.emplace_back(pool, found.position); }
    // `value` joins `pool` at the record's end.
    void feed(std::uint8_t pool, std::uint64_t value) { fed_.emplace_back(pool, value); }
    std::uint64_t live(std::uint8_t pool) const { return at(pool).live(); }
    bool pending() const { return !referred_.empty() || !fed_.empty(); }
    void end_record();
    // Empties every pool, as a version-3 segment starts (between records).
    void clear() { pools_ = {}; }

private:
    LivePool& at(std::uint8_t pool) { return pools_[pool - 1]; }
    const LivePool& at(std::uint8_t pool) const { return pools_[pool - 1]; }

    std::array<LivePool, max_pool> pools_;
    std::vector<std::pair<std::uint8_t, std::size_t>> referred_;  // pool, position
    std::vector<std::pair<std::uint8_t, std::uint64_t>> fed_;     // pool, value
};

// A reader's pool: the live values themselves, oldest first, in blocks of
// 64 that keep their values together, so a reference is a subtraction when
// it names one of the newest 64 and taking a value out moves at most 63.
// Counts per block, per span of 64 blocks and per group of 64 spans find
// older ones. When a block opens and more than half the room is empty the
// values are packed again, so the blocks stay under 2 L / 64 + 65 for the
// most values L the pool has held, itself at most max_live.
class ReadPool {
public:
    ReadPool() : values_(block), counts_(1), spans_(1), groups_(1) {}

    std::uint64_t live() const { return live_; }
    METATF_INLINE void add(std::uint64_t value) {
        if (counts_[last_] == block || live_ == max_live) [[unlikely]] return add_slow(value);
        values_[block * last_ + counts_[last_]] = value;
        count(last_, 1);
    }
    // Where the value with `back` live values after it is (back < live()).
    METATF_INLINE std::size_t at_back(std::uint64_t back) const {
        if (back < counts_[last_]) return block * last_ + counts_[last_] - 1 - back;
        return far_back(back);
    }
    std::uint64_t value(std::size_t slot) const { return values_[slot]; }
    // The value `back` places from the newest (back < live()), taken out now.
    METATF_INLINE std::uint64_t take(std::uint64_t back) {
        const std::size_t slot = at_back(back);
        const std::uint64_t v = values_[slot];
        remove(slot);
        return v;
    }
    // Takes out the value at `slot`. Values after it in its block move down,
    // so several slots of one record are removed from the highest.
    METATF_INLINE void remove(std::size_t slot) {
        const std::size_t b = slot / block, end = block * b + counts_[b];
        for (std::size_t i = slot; i + 1 < end; ++i) values_[i] = values_[i + 1];
        count(b, -1);
    }

private:
    static constexpr std::size_t block = 64, span = 64, group = 64 * span;  // span, group: in blocks
    void add_slow(std::uint64_t value);
    std::size_t far_back(std::uint64_t back) const;
    METATF_INLINE void count(std::size_t b, int change) {
        const auto by = static_cast<std::uint32_t>(change);
        counts_[b] += by;
        spans_[b / span] += by;
        groups_[b / group] += by;
        live_ += static_cast<std::uint64_t>(change);
    }
    void compact();

    std::uint64_t live_ = 0;
    std::size_t last_ = 0;               // the block values go into
    std::size_t first_ = 0;              // no live value before this block
    std::vector<std::uint64_t, detail::BigAllocator<std::uint64_t>> values_;  // block b: values_[64 b] to values_[64 b + counts_[b] - 1]
    std::vector<std::uint32_t> counts_;  // live values of each block (not a char type, which aliases everything)
    std::vector<std::uint32_t> spans_;   // live values of each span
    std::vector<std::uint32_t> groups_;  // live values of each group
};

// The pools of a reader, with the changes the current record makes at its end.
class ReadPools {
public:
    // The value `back` places from the newest of `pool`, which leaves it at
    // the record's end; nothing if the pool holds no more than `back`.
    METATF_INLINE std::optional<std::uint64_t> refer_back(std::uint8_t pool, std::uint64_t back) {
        if (back >= live(pool)) return std::nullopt;
        return refer_back_live(pool, back);
    }
    // The same for a `back` known to be below live(pool).
    METATF_INLINE std::uint64_t refer_back_live(std::uint8_t pool, std::uint64_t back) {
        ReadPool& p = pools_[pool - 1];
        const std::size_t slot = p.at_back(back);
        referred_.push({pool, slot});
        return p.value(slot);
    }
    METATF_INLINE void feed(std::uint8_t pool, std::uint64_t value) { fed_.push({pool, value}); }
    // A record whose changes may be made as its fields are read
    // (RecordPlan::immediate) uses the pool itself.
    ReadPool& now(std::uint8_t pool) { return pools_[pool - 1]; }
    std::uint64_t live(std::uint8_t pool) const { return pools_[pool - 1].live(); }
    METATF_INLINE void end_record() {
        if (referred_.size() == 1) {
            pools_[referred_[0].pool - 1].remove(referred_[0].value);
        } else if (referred_.size() != 0) {
            remove_referred();
        }
        for (std::size_t i = 0; i < fed_.size(); ++i) pools_[fed_[i].pool - 1].add(fed_[i].value);
        referred_.clear();
        fed_.clear();
    }
    bool pending() const { return referred_.size() != 0 || fed_.size() != 0; }
    // Empties every pool, as a version-3 segment starts (between records).
    void clear() { pools_ = {}; }

private:
    struct Change {
        std::uint8_t pool;
        std::uint64_t value;  // referred_: a slot; fed_: a value
        auto operator<=>(const Change&) const = default;
    };
    // A list that keeps its memory from record to record.
    class Changes {
    public:
        METATF_INLINE void push(Change c) {
            if (size_ == items_.size()) [[unlikely]] items_.resize(std::max<std::size_t>(8, 2 * size_));
            items_[size_++] = c;
        }
        std::size_t size() const { return size_; }
        const Change& operator[](std::size_t i) const { return items_[i]; }
        Change* begin() { return items_.data(); }
        Change* end() { return items_.data() + size_; }
        void clear() { size_ = 0; }

    private:
        std::vector<Change> items_;
        std::size_t size_ = 0;
    };
    void remove_referred();

    std::array<ReadPool, max_pool> pools_;
    Changes referred_, fed_;
};

}  // namespace metatf::rt
