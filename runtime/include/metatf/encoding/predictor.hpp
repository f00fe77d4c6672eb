// Value prediction for `predict` fields (docs/trace-format.md, section 5.3).
// A `predict` field stores a code: which of seven predictors guessed its
// value, or (with a pool) how far back the value is among the live ones, or
// an escape followed by the difference from its last escaped value. The
// predictors look at the field's own last values (its history, kept in its
// FieldState) and at four tables of what followed a context before. Readers
// and writers update both alike after every value, so they predict alike.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "metatf/core/big_memory.hpp"

namespace metatf::rt {

// Seven predictors, numbered 0-6 in the order a writer tries them. A field
// uses a set of them (bit i: predictor i); its codes 0 to k - 1 name the k
// it uses, in that order.
inline constexpr unsigned predictor_count = 7;
inline constexpr std::uint64_t all_predictors = (1u << predictor_count) - 1;

// What a field's predictions start from: all 0 when its interpretation is
// set and as a segment starts.
struct PredictHistory {
    std::array<std::uint64_t, 4> last{};  // the field's last four values, newest first
    // The last value stored after an escape, which the next escaped
    // difference is from: misses follow misses (a heap's new addresses
    // climb while the values between them are reused ones).
    std::uint64_t missed = 0;

    // The stored form of `value` after an escape, and back.
    std::uint64_t escape(std::uint64_t value) {
        const std::uint64_t z = zigzag(value - missed);
        missed = value;
        return z;
    }
    std::uint64_t unescape(std::uint64_t z) { return missed += unzigzag(z); }

private:
    static constexpr std::uint64_t zigzag(std::uint64_t d) { return d << 1 ^ (0 - (d >> 63)); }
    static constexpr std::uint64_t unzigzag(std::uint64_t z) { return z >> 1 ^ (0 - (z & 1)); }
};

// The context tables shared by every `predict` field of a trace, each of
// 2^16 words (4 MiB in all, with their generations), so a trace cannot make
// a reader hold more whatever metadata it writes; a field's salt (its record's tag and its index) keeps the fields
// apart in them. Allocated at the first prediction. (The encoder estimates
// with smaller ones: `bits` below 16 guesses worse, never differently in kind.)
class PredictTables {
public:
    static constexpr unsigned trace_bits = 16;
    explicit PredictTables(unsigned bits = trace_bits) : bits_(bits) {}

    // The value code `code` (below std::popcount(set)) names, for history `h` of the field with `salt`.
    std::uint64_t named(std::uint64_t set, std::uint64_t code, std::uint64_t salt, const PredictHistory& h);
    // The code of the first predictor of `set` that guesses `value`, if one does.
    std::optional<std::uint64_t> code_of(std::uint64_t set, std::uint64_t value, std::uint64_t salt, const PredictHistory& h);
    // Makes `value` the newest of `h`, and records it as what followed the
    // contexts of `h` in the tables of `set`'s context predictors, only
    // theirs: a field that uses none costs no table traffic.
    void update(std::uint64_t set, std::uint64_t salt, PredictHistory& h, std::uint64_t value) {
        if (set >> 3 != 0) learn(set, salt, h, value);
        h.last = {value, h.last[0], h.last[1], h.last[2]};
    }
    // Forgets every context, as a segment starts: in constant time, so that
    // a trace of many small segments costs no more than its size.
    void clear();

private:
    enum Table : unsigned { fcm1, fcm3, dfcm1, dfcm3 };
    std::uint64_t prediction(unsigned which, std::uint64_t salt, const PredictHistory& h);
    void learn(std::uint64_t set, std::uint64_t salt, const PredictHistory& h, std::uint64_t value);
    std::uint64_t& slot(Table t, std::uint64_t context, std::uint64_t salt);
    // A word with the clear() it was last written after (older ones read as
    // 0): one cache line a look-up.
    struct Slot {
        std::uint64_t word;
        std::uint32_t written;
    };
    unsigned bits_;
    std::vector<Slot, detail::BigAllocator<Slot>> slots_;  // the four tables, one after the other
    std::uint32_t generation_ = 1;
};

// A field's salt: the tag of its record and its index there.
constexpr std::uint64_t predict_salt(std::uint64_t tag, std::uint32_t field) { return tag << 16 | field; }

// An escaped value is stored as its difference from the last escaped one,
// zigzag-mapped (small negatives small: 0, -1, 1, -2 as 0, 1, 2, 3) in
// LEB128 bytes, at most 10.
inline constexpr unsigned max_varint_bytes = 10;
// Writes `v` at `out` in LEB128 bytes; returns how many.
inline std::size_t put_varint(std::byte* out, std::uint64_t v) {
    std::size_t n = 0;
    for (; v >= 0x80; v >>= 7) out[n++] = static_cast<std::byte>(v | 0x80);
    out[n++] = static_cast<std::byte>(v);
    return n;
}

}  // namespace metatf::rt
