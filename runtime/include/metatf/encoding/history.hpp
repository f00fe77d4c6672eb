// Shared histories (docs/dtd-language.md, "Shared histories"): the previous
// values of fields whose `history` property keeps them across record types,
// one per table or one per value of a key field. Readers and writers hold
// the same tables, emptied at every segment start, so both sides agree.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "metatf/encoding/field_state.hpp"

namespace metatf::rt {

class Histories {
public:
    // `count` tables (history_count() of the DTD), all empty.
    void reset(std::uint32_t count) { tables_.assign(count, {}); }
    // Empties every table: an entry never set reads 0 (segments decode alone).
    void clear() {
        for (Table& t : tables_) t = {};
    }
    // The previous value table `table` holds for `key`.
    std::uint64_t previous(std::int32_t table, std::uint64_t key) const {
        const Table& t = tables_[static_cast<std::size_t>(table)];
        if (key < dense_keys) return key < t.dense.size() ? t.dense[key] : 0;
        const auto at = t.sparse.find(key);
        return at == t.sparse.end() ? 0 : at->second;
    }
    // Returns whether the entry is new in the hash map: a reader counts those
    // against its limits (ReaderLimits), as a crafted trace could make one per record.
    bool set(std::int32_t table, std::uint64_t key, std::uint64_t value) {
        Table& t = tables_[static_cast<std::size_t>(table)];
        if (key >= dense_keys) {
            return t.sparse.insert_or_assign(key, value).second;
        }
        if (key >= t.dense.size()) t.dense.resize(key + 1);
        t.dense[key] = value;
        return false;
    }
    // Field `s` of the record whose fields are `record` is about to be read
    // or written: its previous value becomes its table's entry.
    void load(FieldState& s, const FieldState* record) const { s.previous = previous(s.desc->history, key_of(s, record)); }
    // The key of field `d`'s entry in a record whose values so far are `values`, by field.
    static std::uint64_t key_in(const FieldDesc& d, const std::uint64_t* values) {
        return d.history_key == no_field ? 0 : values[d.history_key];
    }
    // The field took `value`: the entry's new previous value (see set()).
    bool store(const FieldState& s, const FieldState* record, std::uint64_t value) { return set(s.desc->history, key_of(s, record), value); }

private:
    // Keys below this index a vector (CPUs, devices, small ids), at most 2 KiB
    // a table; others a hash map.
    static constexpr std::uint64_t dense_keys = 256;
    struct Table {
        std::vector<std::uint64_t> dense;
        std::unordered_map<std::uint64_t, std::uint64_t> sparse;
    };
    // A key field keeps its value in `previous` (FieldDesc::keys_history).
    static std::uint64_t key_of(const FieldState& s, const FieldState* record) {
        return s.desc->history_key == no_field ? 0 : record[s.desc->history_key].previous;
    }
    std::vector<Table> tables_;
};

}  // namespace metatf::rt
