// Interned strings (docs/dtd-language.md, "Interned strings"): the strings
// that the length field of a string under `intern` has named so far in the
// segment, each by its place in the table. A reader and a writer fill their
// tables alike, from the strings stored after the escape, and empty them at
// every segment start, so that a segment decodes alone.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace metatf::rt {

class StringTable {
public:
    std::size_t size() const { return strings_.size(); }
    // The string of code `code` (below size()); its bytes stay put until clear().
    std::span<const std::byte> at(std::uint64_t code) const { return std::as_bytes(std::span(*strings_[code])); }
    // The code of `s`, when the table holds it.
    std::optional<std::uint64_t> find(std::span<const std::byte> s) const {
        const auto at = codes_.find(view(s));
        return at == codes_.end() ? std::nullopt : std::optional(at->second);
    }
    // Adds `s` under the next code while the table holds fewer than `escape`
    // strings (the codes below the escape); returns whether it did. Only a
    // writer looks strings up (find()): a reader's table is not `indexed`.
    bool add(std::span<const std::byte> s, std::uint64_t escape, bool indexed) {
        if (strings_.size() >= escape) return false;
        strings_.push_back(std::make_unique<std::string>(view(s)));
        if (indexed) codes_.emplace(*strings_.back(), strings_.size() - 1);
        return true;
    }
    void clear() {
        codes_.clear();
        strings_.clear();
    }

private:
    static std::string_view view(std::span<const std::byte> s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }
    std::vector<std::unique_ptr<std::string>> strings_;  // owned apart, so a code's bytes never move
    std::unordered_map<std::string_view, std::uint64_t> codes_;
};

// The tables of a reader or a writer, one per interned field of each record
// type, made when first used.
class StringTables {
public:
    void reset(std::size_t records) {
        tables_.clear();
        tables_.resize(records);
    }
    StringTable& of(std::uint32_t slot, std::uint32_t field, std::uint32_t field_count) {
        auto& record = tables_[slot];
        if (record.empty()) record.resize(field_count);
        return record[field];
    }
    // The table, or nullptr while it was never used.
    const StringTable* find(std::uint32_t slot, std::uint32_t field) const {
        return field < tables_[slot].size() ? &tables_[slot][field] : nullptr;
    }
    void clear() {
        for (auto& record : tables_) {
            for (StringTable& t : record) t.clear();
        }
    }

private:
    std::vector<std::vector<StringTable>> tables_;
};

}  // namespace metatf::rt
