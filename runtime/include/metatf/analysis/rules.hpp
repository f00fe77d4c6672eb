// The rules a DTD states about its fields' values (docs/dtd-language.md,
// "Rules"): ranges, enumerations, flag sets and orders. Reading never checks
// them, since a trace that breaks one is still well formed; `mtf check` and
// any reader that asks check them record by record with a RuleChecker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "metatf/core/descriptor.hpp"
#include "metatf/io/generic.hpp"

namespace metatf::rt {

struct RuleViolation {
    std::uint32_t field;  // the field's index in its record
    std::string message;  // what is wrong, as "is 16, above the maximum 15"
    std::uint32_t slot = 0;  // the record type (finish() only: check() gives its record's)
    bool unchecked = false;  // not a violation: a rule that could not be checked (finish() only)
};

class RuleChecker {
public:
    explicit RuleChecker(const DtdDesc& dtd);

    // Whether the DTD states any rule at all.
    bool any() const { return any_; }

    // Checks record `index` of the trace (its values in layout order, as
    // decode_generic() gives them), after the records before it: orders
    // compare with the values seen last. Appends each broken rule to `out`.
    void check(const GenericRecord& record, std::uint64_t index, std::vector<RuleViolation>& out);

    // After the last record: the rules about the whole trace (`dense`).
    void finish(std::vector<RuleViolation>& out) const;

    // A dense field keeps the distinct values it has seen, up to this many;
    // past them its rule is reported as not checked.
    static constexpr std::size_t max_dense_values = std::size_t(1) << 20;

private:
    struct Last {
        bool seen = false;
        std::uint64_t value = 0;
        std::uint64_t record = 0;
    };
    void check_order(const FieldDesc& f, const GenericValue& v, const TextFieldDesc* text, Last& last, std::uint64_t index,
                     std::vector<RuleViolation>& out) const;

    struct Dense {
        std::uint32_t slot, field;
        std::unordered_set<std::uint64_t> seen;  // from the start of the range up
        bool overflow = false;
    };
    void note_dense(const GenericValue& v, std::uint32_t slot);

    const DtdDesc& dtd_;
    bool any_ = false;
    std::vector<Dense> dense_;
    std::vector<std::vector<std::uint32_t>> sequence_;  // per slot, per field: its entry in last_ (ordered fields only)
    std::vector<Last> last_;
};

// The name the field's enumeration gives `value` ("write"), the names of
// the flags it sets ("read|write", with "|0x40" for bits that are no whole
// flag; "0" for none), or its parts ("fd:5,index:1", with ",0xc0" for bits
// no part holds); "" when the field has no names, or its enumeration not this value.
std::string value_name(const FieldRules& rules, std::uint64_t value);

// The value `text` names as value_name() writes it (a set of flags in any
// order), or nullopt.
std::optional<std::uint64_t> named_value(const FieldRules& rules, std::string_view text);

// ---- parts: bit fields packed in one unsigned value ('bits')

// The part `width` bits wide that starts at bit `shift` of `value`.
constexpr std::uint64_t get_part(std::uint64_t value, unsigned shift, unsigned width) {
    return (value >> shift) & (width >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << width) - 1);
}

// `value` with that part replaced by `part`; a part too wide for it is a
// TraceError (bad_value) naming the part `name`, since dropping its high
// bits would lose it in silence.
std::uint64_t with_part(std::uint64_t value, unsigned shift, unsigned width, std::uint64_t part, const char* name);

// Meta-TF packs a field's parts from its least significant bit up. A C
// compiler for a big-endian machine allocates them from the most significant
// bit of the field's `bytes` bytes down; these convert between the two.
// The bits no part holds move as a block too, so each undoes the other.
std::uint64_t parts_from_high(const FieldRules& rules, std::uint64_t native, unsigned bytes);
std::uint64_t parts_to_high(const FieldRules& rules, std::uint64_t value, unsigned bytes);

}  // namespace metatf::rt
