#include "metatf/analysis/rules.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <map>
#include <span>
#include <string_view>

#include "metatf/core/error.hpp"
#include "metatf/core/format.hpp"

namespace metatf::rt {

namespace {

constexpr std::uint32_t unordered = UINT32_MAX;

// `a` below `b` as the field's type compares them.
bool below(const FieldDesc& f, std::uint64_t a, std::uint64_t b) {
    return f.type == Type::signed_int ? static_cast<std::int64_t>(a) < static_cast<std::int64_t>(b) : a < b;
}

std::string hex(std::uint64_t v) {
    std::string out = "0x";
    append_digits(out, v, 16);
    return out;
}

// A value as messages show it: as the DTD's text form `text` (or nullptr)
// writes the field, in hex or with the fraction digits it shows at least.
std::string number(const FieldDesc& f, std::uint64_t v, const TextFieldDesc* text) {
    if (text && text->format == TextFormat::hex) return hex(v);
    std::string out;
    append_fixed(out, v, f.type == Type::signed_int, f.scale, text ? text->digits : 0);
    return out;
}

// The field's text form, if its record has one.
const TextFieldDesc* written_as(const DtdDesc& dtd, std::uint32_t slot, std::uint32_t field) {
    const TextFormDesc* form = dtd.text_form;
    return form && form->records[slot].mnemonic ? &form->records[slot].fields[field] : nullptr;
}

// The bits of `value` that its set flags (all of whose bits it sets) cover;
// every bit a part holds.
std::uint64_t covered(const FieldRules& r, std::uint64_t value) {
    std::uint64_t bits = 0;
    for (std::uint32_t i = 0; i < r.name_count; ++i) {
        if (r.naming == Naming::parts || (value & r.names[i].value) == r.names[i].value) bits |= r.names[i].value;
    }
    return bits;
}

// Whether all of `s` is one number in `base`, which goes to `out`.
bool whole_number(std::string_view s, int base, std::uint64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
    return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
}

std::uint64_t low_bits(unsigned n) { return n >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << n) - 1; }

// The parts' bits and, for a big-endian compiler's allocation in `bytes`
// bytes, how far each part's bit 0 moves up from Meta-TF's place for it.
struct PartSpan {
    unsigned shift, width;
};
PartSpan span_of(std::uint64_t mask) {
    return {static_cast<unsigned>(std::countr_zero(mask)), static_cast<unsigned>(std::popcount(mask))};
}


}  // namespace

RuleChecker::RuleChecker(const DtdDesc& dtd) : dtd_(dtd), sequence_(dtd.record_count) {
    std::map<std::string_view, std::uint32_t> shared;  // a global order's field kind: its entry
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const RecordDesc& r = dtd.records[slot];
        sequence_[slot].assign(r.field_count, unordered);
        for (std::uint32_t i = 0; i < r.field_count; ++i) {
            const FieldRules* rules = r.fields[i].rules;
            if (!rules) continue;
            any_ = true;
            if (rules->dense) dense_.push_back({slot, i, {}});
            if (rules->order == Order::none) continue;
            if (!rules->global) {
                sequence_[slot][i] = static_cast<std::uint32_t>(last_.size());
                last_.emplace_back();
                continue;
            }
            auto [at, added] = shared.emplace(rules->global, static_cast<std::uint32_t>(last_.size()));
            if (added) last_.emplace_back();
            sequence_[slot][i] = at->second;
        }
    }
}

void RuleChecker::check(const GenericRecord& record, std::uint64_t index, std::vector<RuleViolation>& out) {
    if (!any_ || record.slot >= dtd_.record_count) return;
    const RecordDesc& r = dtd_.records[record.slot];
    for (const GenericValue& v : record.values) {
        if (v.field >= r.field_count) continue;
        const FieldDesc& f = r.fields[v.field];
        if (!f.rules || !is_integer(f.type)) continue;
        const FieldRules& rules = *f.rules;
        const TextFieldDesc* text = written_as(dtd_, record.slot, v.field);
        if (rules.has_minimum && below(f, v.integer, rules.minimum)) {
            out.push_back({v.field, "is " + number(f, v.integer, text) + ", below the minimum " + number(f, rules.minimum, text)});
        }
        if (rules.has_maximum && below(f, rules.maximum, v.integer)) {
            out.push_back({v.field, "is " + number(f, v.integer, text) + ", above the maximum " + number(f, rules.maximum, text)});
        }
        if (rules.name_count && rules.naming != Naming::values) {
            if (const std::uint64_t stray = v.integer & ~covered(rules, v.integer)) {
                out.push_back({v.field, "is " + hex(v.integer) + ", whose bits " + hex(stray) +
                                            (rules.naming == Naming::flags ? " are no flag it names" : " are in none of its parts")});
            }
        } else if (rules.name_count && value_name(rules, v.integer).empty()) {
            out.push_back({v.field, "is " + number(f, v.integer, text) + ", which its enumeration does not name"});
        }
        if (rules.dense && v.integer < rules.dense_start) {
            out.push_back({v.field, "is " + number(f, v.integer, text) + ", below " + number(f, rules.dense_start, text) +
                                        ", where its dense range starts"});
        } else if (rules.dense) {
            note_dense(v, record.slot);
        }
        if (sequence_[record.slot][v.field] != unordered) check_order(f, v, text, last_[sequence_[record.slot][v.field]], index, out);
    }
}

void RuleChecker::check_order(const FieldDesc& f, const GenericValue& v, const TextFieldDesc* text, Last& last, std::uint64_t index,
                              std::vector<RuleViolation>& out) const {
    const bool increasing = f.rules->order == Order::increasing;
    if (last.seen && (below(f, v.integer, last.value) || (increasing && v.integer == last.value))) {
        out.push_back({v.field, "is " + number(f, v.integer, text) + (increasing ? ", not above " : ", below ") + number(f, last.value, text) +
                                    " of record " + std::to_string(last.record) + " (order: " + std::string(name(f.rules->order)) +
                                    (f.rules->global ? " across record types)" : ")")});
    }
    last = {true, v.integer, index};
}

void RuleChecker::note_dense(const GenericValue& v, std::uint32_t slot) {
    for (Dense& d : dense_) {
        if (d.slot != slot || d.field != v.field || d.overflow) continue;
        d.seen.insert(v.integer);
        if (d.seen.size() > max_dense_values) {
            d.overflow = true;
            d.seen = {};
        }
    }
}

void RuleChecker::finish(std::vector<RuleViolation>& out) const {
    for (const Dense& d : dense_) {
        const FieldDesc& f = dtd_.records[d.slot].fields[d.field];
        const std::uint64_t start = f.rules->dense_start;
        if (d.overflow) {
            out.push_back({d.field, "takes more than " + std::to_string(max_dense_values) + " values: whether they are dense is not checked", d.slot,
                           true});
            continue;
        }
        if (d.seen.empty()) continue;
        const std::uint64_t top = *std::max_element(d.seen.begin(), d.seen.end());
        // At most max_dense_values values are seen, so a dense range is no longer than that.
        const std::uint64_t missing = (top - start) - (d.seen.size() - 1);
        if (missing == 0) continue;
        const TextFieldDesc* text = written_as(dtd_, d.slot, d.field);
        std::string which;
        unsigned listed = 0;
        for (std::uint64_t v = start; v <= top && listed < 5; ++v) {
            if (!d.seen.count(v)) which += (listed++ ? ", " : "") + number(f, v, text);
        }
        out.push_back({d.field, "takes values from " + number(f, start, text) + " to " + number(f, top, text) + ", but not " + which +
                                    (missing > listed ? " (" + std::to_string(missing) + " missing)" : "") + " (dense from " +
                                    number(f, start, text) + ")",
                       d.slot});
    }
}

std::string value_name(const FieldRules& rules, std::uint64_t value) {
    const std::span names(rules.names, rules.name_count);
    if (rules.naming == Naming::values) {
        const auto at = std::ranges::lower_bound(names, value, {}, &NamedValue::value);
        return at != names.end() && at->value == value ? at->name : "";
    }
    if (names.empty()) return "";
    const bool parts = rules.naming == Naming::parts;
    if (value == 0 && !parts) return "0";
    std::string out;
    for (const NamedValue& n : names) {
        if (parts) {
            const PartSpan s = span_of(n.value);
            out += (out.empty() ? "" : ",") + std::string(n.name) + ":";
            append_digits(out, get_part(value, s.shift, s.width), 10);
        } else if ((value & n.value) == n.value) {
            out += (out.empty() ? "" : "|") + std::string(n.name);
        }
    }
    if (const std::uint64_t stray = value & ~covered(rules, value)) out += (out.empty() ? "" : parts ? "," : "|") + hex(stray);
    return out;
}

std::optional<std::uint64_t> named_value(const FieldRules& rules, std::string_view text) {
    const std::span names(rules.names, rules.name_count);
    if (names.empty()) return std::nullopt;
    if (rules.naming == Naming::values) {
        const auto at = std::ranges::find_if(names, [&](const NamedValue& n) { return text == n.name; });
        return at == names.end() ? std::nullopt : std::optional(at->value);
    }
    const bool parts = rules.naming == Naming::parts;
    if (text == "0" && !parts) return 0;
    std::uint64_t value = 0;
    std::size_t next = 0;  // parts: the one expected next, since value_name writes them all in order
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t bar = std::min(text.find(parts ? ',' : '|', start), text.size());
        const std::string_view item = text.substr(start, bar - start);
        start = bar + 1;
        if (parts && next < names.size()) {
            const std::string_view name = names[next].name;
            if (!item.starts_with(name) || item.size() <= name.size() + 1 || item[name.size()] != ':') return std::nullopt;
            std::uint64_t part = 0;
            if (!whole_number(item.substr(name.size() + 1), 10, part)) return std::nullopt;
            const PartSpan s = span_of(names[next++].value);
            if (get_part(part, 0, s.width) != part) return std::nullopt;
            value |= part << s.shift;
            continue;
        }
        const auto at = std::ranges::find_if(names, [&](const NamedValue& n) { return item == n.name; });
        if (!parts && at != names.end()) {
            value |= at->value;
            continue;
        }
        // Hex is for bits no name holds.
        std::uint64_t bits = 0;
        if (!item.starts_with("0x") || !whole_number(item.substr(2), 16, bits) || bits == 0 || (bits & covered(rules, bits)) != 0) return std::nullopt;
        value |= bits;
    }
    return parts && next < names.size() ? std::nullopt : std::optional(value);
}

std::uint64_t with_part(std::uint64_t value, unsigned shift, unsigned width, std::uint64_t part, const char* name) {
    if (get_part(part, 0, width) != part) {
        throw TraceError(ErrorKind::bad_value, "part '" + std::string(name) + "' is " + std::to_string(width) + " bits wide; " +
                                                   std::to_string(part) + " does not fit");
    }
    return (value & ~(low_bits(width) << shift)) | (part << shift);
}

// Part k of n bits in Meta-TF at [s, s + n) sits at [8 * bytes - s - n, ...)
// in the big-endian allocation; the t = (bits of all parts) bits above the
// parts in Meta-TF sit below them, at [0, 8 * bytes - t).
std::uint64_t parts_from_high(const FieldRules& rules, std::uint64_t native, unsigned bytes) {
    if (rules.naming != Naming::parts || rules.name_count == 0) return native;
    const unsigned total = std::bit_width(rules.names[rules.name_count - 1].value), size = 8 * bytes;
    std::uint64_t value = total >= 64 ? 0 : (native & low_bits(size - total)) << total;
    for (const NamedValue& n : std::span(rules.names, rules.name_count)) {
        const PartSpan s = span_of(n.value);
        value |= get_part(native, size - s.shift - s.width, s.width) << s.shift;
    }
    return value;
}

std::uint64_t parts_to_high(const FieldRules& rules, std::uint64_t value, unsigned bytes) {
    if (rules.naming != Naming::parts || rules.name_count == 0) return value;
    const unsigned total = std::bit_width(rules.names[rules.name_count - 1].value), size = 8 * bytes;
    std::uint64_t native = total >= 64 ? 0 : value >> total;
    for (const NamedValue& n : std::span(rules.names, rules.name_count)) {
        const PartSpan s = span_of(n.value);
        native |= get_part(value, s.shift, s.width) << (size - s.shift - s.width);
    }
    return native;
}

}  // namespace metatf::rt
