// The parser of one line of a text form (docs/dtd-language.md, "Text forms"),
// which the reader uses and the writer uses to read back what it wrote.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metatf/core/layout.hpp"
#include "metatf/forms/text.hpp"
#include "metatf/io/generic.hpp"
#include "text_common.hpp"

namespace metatf::rt {

using namespace text_detail;

namespace detail {

// Parses one line into a record's values, in layout order.
class LineParser {
public:
    // `last` and `pending` are the caller's, reused from line to line.
    // `line` is without the blanks that end it under a blank separator; `raw`
    // with them (the same bytes, longer), for values that may end in blanks.
    LineParser(const TextFormDesc& form, std::string_view line, std::string_view raw, std::uint64_t line_number,
               std::vector<std::uint64_t>& last, std::vector<std::size_t>& pending)
        : form_(form),
          line_(line),
          raw_(raw),
          line_number_(line_number),
          space_(std::string_view(form.separator) == " "),
          last_(last),
          pending_(pending) {}

    // `start`: where the fields start, past the mnemonic and the text around it.
    void parse(const RecordDesc& r, const TextRecordDesc& text, const std::vector<std::string>& stops, std::size_t start,
               GenericRecord& out) {
        begin(r, text, stops, out);
        pos_ = start;
        rest(0);
    }

    // With a head (TextFormDesc::head): its fields, which every record
    // shares, read as record `r`'s; returns where the mnemonic should start.
    std::size_t head(const RecordDesc& r, const TextRecordDesc& text, const std::vector<std::string>& stops, GenericRecord& out) {
        begin(r, text, stops, out);
        detail::walk_steps(r, 0, form_.head, *this);
        return pos_;
    }

    // The rest of the line, from `start` past the mnemonic, as record `r`'s,
    // after head() read the head as another record's (the same fields).
    void after_head(const RecordDesc& r, const TextRecordDesc& text, const std::vector<std::string>& stops, std::size_t start) {
        record_ = &r;
        text_ = &text;
        stops_ = &stops;
        last_.resize(r.field_count, 0);
        pending_.resize(r.field_count, none);
        pos_ = start;
        padded_ = false;
        rest(form_.head);
    }

    // The first token (the mnemonic) and where the next one starts.
    std::string_view mnemonic() {
        const std::size_t end = token_end(0);
        pos_ = end;
        return line_.substr(0, end);
    }

    [[noreturn]] void fail(std::size_t at, const std::string& message) const { throw TextError(line_number_, at + 1, message); }

    // The token at `at` (a word that names no record), for a message.
    std::string_view token_at(std::size_t at) {
        while (space_ && at < line_.size() && is_blank(line_[at])) ++at;
        pos_ = at;
        return line_.substr(at, token_end(at) - at);
    }

private:
    void begin(const RecordDesc& r, const TextRecordDesc& text, const std::vector<std::string>& stops, GenericRecord& out) {
        record_ = &r;
        text_ = &text;
        stops_ = &stops;
        out_ = &out.values;
        pos_ = 0;
        first_ = *text.mnemonic == '\0' || form_.head != 0;  // a head starts the line
        last_.assign(r.field_count, 0);
        pending_.assign(r.field_count, none);
    }

    // The `before` text of the first field of the group at layout step `step`
    // when the group does not end the record: what starts each element. "":
    // the group ends the record and takes the rest of the line.
    std::string_view group_marker(std::uint32_t step) const {
        if (detail::layout_end(*record_, step) + 1 >= record_->layout_count) return {};
        const LayoutStep& first = record_->layout[step + 1];
        return first.op == LayoutStep::field ? text_of(text_->fields[first.index].before) : std::string_view();
    }

    // The layout from step `from` to the end of the record, which must end the line.
    void rest(std::uint32_t from) {
        detail::walk_steps(*record_, from, record_->layout_count, *this);
        if (pos_ != line_.size()) {
            fail(pos_, "unexpected text after the last field of record " + quote(record_->name) + ": " + excerpt(line_.substr(pos_)));
        }
    }

public:
    // ---- the layout walk's visitor
    // A group whose count is not written has one element per remaining piece of the line.
    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint32_t count = record_->layout[step].index;
        if (pending_[count] == none) {
            const std::uint64_t n = last_[count];
            if (n > line_.size() - pos_ + 1) {
                fail(pos_, "the count " + std::to_string(n) + " of " + describe(count) + " is more than the rest of the line can hold");
            }
            for (std::uint64_t k = 0; k < n; ++k) element();
            return;
        }
        const std::size_t slot = pending_[count], start = pos_;
        std::uint64_t n = 0;
        if (const std::string_view marker = group_marker(step); !marker.empty()) {
            // Before the record's end: an element wherever the line goes on with the group's marker.
            for (; line_.compare(pos_, marker.size(), marker) == 0; ++n) element();
        } else {
            for (; pos_ < line_.size(); ++n) element();
        }
        check_fixed(count, n, start);
        (*out_)[slot].integer = n;
        last_[count] = n;
        pending_[count] = none;
    }

    void field(std::uint32_t index) {
        const FieldDesc& f = record_->fields[index];
        const TextFieldDesc& t = text_->fields[index];
        GenericValue v;
        v.field = index;
        after_ = text_of(t.after);
        column_ = t.column;
        left_ = t.left;
        std::size_t start = pos_;
        if (t.tab != 0) tab(index, t.tab);
        switch (t.format) {
            case TextFormat::omit:
                pending_[index] = out_->size();
                out_->push_back(v);
                return;
            case TextFormat::decimal:
            case TextFormat::hex:
            case TextFormat::chars:
            case TextFormat::enumeration:
            case TextFormat::clock:
                // A number, a character or a word: blanks may stand before it.
                before(index, true);
                pad_before();
                start = pos_;
                if (f.type == Type::floating) {
                    v.real = real(index);
                } else {
                    v.integer = number(index, t);
                }
                break;
            case TextFormat::string:
                if (const auto n = known_length(f); n && exact(index)) {
                    v.bytes = as_bytes(exact_value(index, *n));
                    break;
                }
                before(index, false);
                pad_before();
                start = pos_;
                v.bytes = as_bytes(string(index));
                if (space_ && lost_to_blanks(t, as_text(v.bytes))) fail(start, describe(index) + " is empty or starts or ends with a blank, which a blank separator would lose");
                break;
            case TextFormat::line:
                if (exact(index)) {
                    v.bytes = as_bytes(exact_value(index, std::nullopt));
                    break;
                }
                before(index, false);
                v.bytes = as_bytes(line_.substr(pos_));
                pos_ = line_.size();
                break;
            case TextFormat::nested:
                before(index, false);
                start = pos_;
                v.bytes = as_bytes(nested(index));
                break;
        }
        if (f.type != Type::bytes) check_fixed(index, v.integer, start);
        pad_after(start);
        literal(text_of(t.after), "after", index);
        if (f.type == Type::bytes && f.width_from != no_field && pending_[static_cast<std::uint32_t>(f.width_from)] != none) {
            const auto length = static_cast<std::uint32_t>(f.width_from);
            check_fixed(length, v.bytes.size(), start);
            (*out_)[pending_[length]].integer = v.bytes.size();
            last_[length] = v.bytes.size();
            pending_[length] = none;
        }
        last_[index] = v.integer;
        out_->push_back(v);
    }

private:
    // A value the DTD fixes (FieldDesc::fixed), read or implied by the line, must be that value.
    void check_fixed(std::uint32_t index, std::uint64_t value, std::size_t at) const {
        const FieldDesc& f = record_->fields[index];
        if (f.breaks_fixed(value)) fail(at, not_fixed_message(*record_, f, value));
    }
    std::string describe(std::uint32_t index) const {
        return "field " + quote(record_->fields[index].path) + " of record " + quote(record_->name);
    }

    // Under a blank separator, a value whose end the line or its length gives
    // (a `line` field, a string of known length) follows exactly one blank:
    // blanks beyond it, and blanks at its end, are its own.
    bool exact(std::uint32_t index) const { return space_ && !first_ && !text_->fields[index].before; }

    // The length of a bytes field known before its text is read: fixed, or
    // a length field read earlier in the line.
    std::optional<std::uint64_t> known_length(const FieldDesc& f) const {
        if (f.width_from == no_field) return f.initial.width;
        if (pending_[static_cast<std::uint32_t>(f.width_from)] == none) return last_[static_cast<std::uint32_t>(f.width_from)];
        return std::nullopt;
    }

    // An exact value of `length` bytes, or the rest of the line when none; an
    // empty one at the very end of the line has no blank before it.
    std::string_view exact_value(std::uint32_t index, std::optional<std::uint64_t> length) {
        if (pos_ == raw_.size() && length.value_or(0) == 0) return {};
        if (pos_ == raw_.size()) fail(pos_, "the line ends before " + describe(index));
        if (!is_blank(raw_[pos_])) fail(pos_, "expected a blank before " + describe(index));
        ++pos_;
        const std::uint64_t n = length.value_or(raw_.size() - pos_);
        if (n > raw_.size() - pos_) {
            fail(pos_, describe(index) + " should have " + std::to_string(n) + " bytes, but the line has only " +
                           std::to_string(raw_.size() - pos_) + " left");
        }
        const std::string_view s = raw_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += s.size();
        if (pos_ > line_.size()) line_ = raw_.substr(0, pos_);  // the value took blanks from the line's end
        return s;
    }

    // `tab N`: blanks stand up to column N (counted from 0) unless the line is there already.
    void tab(std::uint32_t index, std::size_t column) {
        for (const std::size_t start = pos_; pos_ < column; ++pos_) {
            if (pos_ == line_.size() || line_[pos_] != ' ') {
                fail(start, "expected blanks up to column " + std::to_string(column + 1) + " before " + describe(index));
            }
        }
    }

    // The bytes up to the field's `after` text, which counts only outside
    // brackets ( ) [ ] { } and C strings "..." (a backslash escapes the byte
    // after it); a closing bracket with none open is a byte like any other.
    std::string_view nested(std::uint32_t index) {
        const std::size_t start = pos_;
        std::size_t depth = 0;
        for (std::size_t at = start; at < line_.size(); ++at) {
            if (depth == 0 && line_.compare(at, after_.size(), after_) == 0) {
                pos_ = at;
                return line_.substr(start, at - start);
            }
            const char c = line_[at];
            if (c == '"') {
                at = string_end(index, at);
            } else if (c == '(' || c == '[' || c == '{') {
                ++depth;
            } else if ((c == ')' || c == ']' || c == '}') && depth != 0) {
                --depth;
            }
        }
        fail(start, "expected " + quote(after_) + " after " + describe(index) + ", outside brackets and quotes");
    }

    // Where the C string opened at `open` closes.
    std::size_t string_end(std::uint32_t index, std::size_t open) const {
        for (std::size_t at = open + 1; at < line_.size(); ++at) {
            if (line_[at] == '\\') {
                ++at;
            } else if (line_[at] == '"') {
                return at;
            }
        }
        fail(open, "the quote in " + describe(index) + " is not closed");
    }

    // A right-aligned column: the blanks before the value pad it (at the
    // start of a line too, where no separator has taken them).
    void pad_before() {
        if (column_ == 0 || left_) return;
        while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
    }

    // A left-aligned column: the blanks after the value, from `start`, pad it.
    // Under a blank separator they pad it up to the column's width, and when
    // they end there they separate it from the next value too.
    void pad_after(std::size_t start) {
        padded_ = false;
        if (column_ == 0 || !left_) return;
        const std::size_t limit = space_ ? std::min(line_.size(), start + column_) : line_.size();
        const std::size_t from = pos_;
        while (pos_ < limit && is_blank(line_[pos_])) ++pos_;
        padded_ = pos_ != from && pos_ < line_.size() && !is_blank(line_[pos_]);
    }

    // Moves past the text before field `index`: its own `before` text, or the
    // separator. Blanks after either are accepted before a number or a character.
    void before(std::uint32_t index, bool skip_blanks) {
        const char* own = text_->fields[index].before;
        if (!own) return separator(index, skip_blanks);
        first_ = false;
        literal(own, "before", index);
        if (skip_blanks) {
            while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
        }
    }

    void literal(std::string_view text, const char* where, std::uint32_t index) {
        if (text.empty()) return;
        if (pos_ == line_.size() && where == std::string_view("before")) fail(pos_, "the line ends before " + describe(index));
        if (line_.compare(pos_, text.size(), text) != 0) fail(pos_, "expected " + quote(text) + " " + where + " " + describe(index));
        pos_ += text.size();
    }

    // Moves past the separator before field `index`; a blank separator is any run of blanks.
    void separator(std::uint32_t index, bool skip_blanks) {
        if (first_) {
            first_ = false;
            return;
        }
        const std::string_view sep = form_.separator;
        if (pos_ == line_.size()) fail(pos_, "the line ends before " + describe(index));
        if (space_) {
            if (padded_) return;  // the padding before was the separator
            if (!is_blank(line_[pos_])) fail(pos_, "expected a blank before " + describe(index));
            while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
            if (pos_ == line_.size()) fail(pos_, "the line ends before " + describe(index));
            return;
        }
        if (line_.compare(pos_, sep.size(), sep) != 0) fail(pos_, "expected " + quote(sep) + " before " + describe(index));
        pos_ += sep.size();
        if (skip_blanks) {
            while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
        }
    }

    // Where the token starting at `from` ends: at the separator or the end of
    // the line, and before that at the field's own `after` text when it has
    // one (so a value may hold a piece of another field's text, and "xRS"
    // is "x" then "RS" even when "S" is a text too), else at the first text
    // the record sets before or after a field.
    std::size_t token_end(std::size_t from) const {
        std::size_t end = from;
        if (space_) {
            while (end < line_.size() && !is_blank(line_[end])) ++end;
        } else {
            end = std::min(line_.find(form_.separator, from), line_.size());
        }
        const std::string_view token = line_.substr(0, end);
        if (!after_.empty()) {
            end = std::min(end, token.find(after_, from));
        } else {
            for (const std::string& stop : *stops_) end = std::min(end, token.find(stop, from));
        }
        if (column_ != 0 && left_) {  // the blanks that pad a left-aligned value end it
            while (end > from && is_blank(line_[end - 1])) --end;
        }
        return end;
    }

    // A number or character must fill its token.
    void end_of_token(std::uint32_t index) const {
        if (pos_ != token_end(pos_)) {
            fail(pos_, "unexpected " + excerpt(line_.substr(pos_, 1)) + " in " + describe(index));
        }
    }

    std::uint64_t digits(std::uint32_t index, unsigned base, std::size_t max_digits = 0, std::size_t* count = nullptr) {
        const std::size_t start = pos_;
        // A number ends where a text around the record's values starts ("5" in "50x1f" when "0x" is one).
        const std::size_t limit = stops_->empty() ? line_.size() : token_end(pos_);
        std::uint64_t v = 0;
        for (; pos_ < limit; ++pos_) {
            const char c = line_[pos_];
            unsigned d;
            if (c >= '0' && c <= '9') {
                d = unsigned(c - '0');
            } else if (base == 16 && ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')) {
                d = unsigned((c | 0x20) - 'a' + 10);
            } else {
                break;
            }
            if (max_digits != 0 && pos_ - start == max_digits) {
                fail(pos_, describe(index) + " has more than " + std::to_string(max_digits) +
                               " fraction digits; they would be lost");
            }
            if (v > (std::numeric_limits<std::uint64_t>::max() - d) / base) fail(start, describe(index) + " does not fit in 64 bits");
            v = v * base + d;
        }
        if (pos_ == start) {
            fail(start, std::string("expected ") + (base == 16 ? "a hexadecimal" : "a decimal") + " number for " + describe(index) +
                            (pos_ < line_.size() ? ", not " + excerpt(line_.substr(pos_, token_end(pos_) - pos_)) : std::string()));
        }
        if (count) *count = pos_ - start;
        return v;
    }

    // An integer, fixed point when the field has a scale.
    std::uint64_t decimal(std::uint32_t index) {
        const FieldDesc& f = record_->fields[index];
        const std::size_t start = pos_;
        const bool negative = pos_ < line_.size() && line_[pos_] == '-';
        if (negative && f.type != Type::signed_int) fail(pos_, describe(index) + " is unsigned and cannot be negative");
        if (negative) ++pos_;
        std::uint64_t v = digits(index, 10);
        if (f.scale != 0) v = with_fraction(index, v, start);
        end_of_token(index);
        if (f.type != Type::signed_int) return v;
        const std::uint64_t limit = std::uint64_t(1) << 63;
        if (v > limit || (!negative && v == limit)) fail(start, describe(index) + " does not fit in a signed 64-bit integer");
        return negative ? 0 - v : v;
    }

    // The integer of a field whose format spells a number.
    std::uint64_t number(std::uint32_t index, const TextFieldDesc& t) {
        switch (t.format) {
            case TextFormat::hex: return hex(index);
            case TextFormat::chars: return character(index, t);
            case TextFormat::enumeration: return word(index);
            case TextFormat::clock: return clock(index);
            default: return decimal(index);
        }
    }

    // A time of day, HH:MM:SS (hours of one digit or more), with a fraction when the field has a scale.
    std::uint64_t clock(std::uint32_t index) {
        const std::size_t start = pos_;
        const std::uint64_t hours = digits(index, 10);
        if (hours > std::numeric_limits<std::uint64_t>::max() / 3600 / power_of_ten(record_->fields[index].scale)) {
            fail(start, describe(index) + " does not fit in 64 bits");
        }
        std::uint64_t seconds = hours * 3600;
        for (const std::uint64_t unit : {std::uint64_t(60), std::uint64_t(1)}) {
            if (pos_ == line_.size() || line_[pos_] != ':') fail(pos_, "expected ':' in " + describe(index) + ", a time as HH:MM:SS");
            ++pos_;
            const auto digit = [&](std::size_t at) { return at < line_.size() && line_[at] >= '0' && line_[at] <= '9'; };
            const unsigned part = digit(pos_) && digit(pos_ + 1) ? unsigned(line_[pos_] - '0') * 10 + unsigned(line_[pos_ + 1] - '0') : 60;
            if (part > 59) fail(pos_, "expected two digits from 00 to 59 in " + describe(index) + ", a time as HH:MM:SS");
            pos_ += 2;
            seconds += part * unit;
        }
        const std::uint64_t v = record_->fields[index].scale != 0 ? with_fraction(index, seconds, start) : seconds;
        end_of_token(index);
        return v;
    }

    std::uint64_t with_fraction(std::uint32_t index, std::uint64_t whole, std::size_t start) {
        const unsigned scale = record_->fields[index].scale;
        if (pos_ == line_.size() || line_[pos_] != '.') {
            fail(pos_, describe(index) + " needs a fraction: '.' and up to " + std::to_string(scale) + " digits");
        }
        ++pos_;
        std::size_t count = 0;
        std::uint64_t fraction = digits(index, 10, scale, &count);
        for (; count < scale; ++count) fraction *= 10;
        const std::uint64_t unit = power_of_ten(scale);
        if (whole > (std::numeric_limits<std::uint64_t>::max() - fraction) / unit) fail(start, describe(index) + " does not fit in 64 bits");
        return whole * unit + fraction;
    }

    double real(std::uint32_t index) {
        const std::size_t end = token_end(pos_);
        double v = 0;
        const auto [at, ec] = std::from_chars(line_.data() + pos_, line_.data() + end, v);
        if (ec != std::errc() || at != line_.data() + end) {
            fail(pos_, "expected a number for " + describe(index) + ", not " + excerpt(line_.substr(pos_, end - pos_)));
        }
        pos_ = end;
        return v;
    }

    std::uint64_t hex(std::uint32_t index) {
        const std::uint64_t v = digits(index, 16);
        end_of_token(index);
        return v;
    }

    std::uint64_t character(std::uint32_t index, const TextFieldDesc& t) {
        const std::string_view chars = t.chars;
        if (pos_ < line_.size()) {
            for (std::size_t i = 0; i < chars.size(); ++i) {
                const char c = line_[pos_], want = chars[i];
                const bool same = t.ignore_case ? std::tolower(static_cast<unsigned char>(c)) == std::tolower(static_cast<unsigned char>(want)) : c == want;
                if (!same) continue;
                ++pos_;
                end_of_token(index);
                return i;
            }
        }
        fail(pos_, "expected one of the characters \"" + std::string(chars) + "\"" + (t.ignore_case ? " (either case)" : "") +
                       " for " + describe(index));
    }

    // A name of the field's enum: the whole token.
    std::uint64_t word(std::uint32_t index) {
        const FieldRules& rules = *record_->fields[index].rules;
        const std::size_t end = token_end(pos_);
        const std::string_view token = line_.substr(pos_, end - pos_);
        const auto names = std::span(rules.names, rules.name_count);
        const auto it = std::find_if(names.begin(), names.end(), [&](const NamedValue& n) { return token == n.name; });
        if (it == names.end()) {
            fail(pos_, "expected one of the names " + listed(names) + " for " + describe(index) +
                           (token.empty() ? std::string() : ", not " + excerpt(token)));
        }
        pos_ = end;
        return it->value;
    }

    // The first few names of an enum, for a message.
    static std::string listed(std::span<const NamedValue> names) {
        std::string out;
        for (std::size_t i = 0; i < names.size() && i < 8; ++i) out += (i ? ", " : "") + std::string(names[i].name);
        return "(" + out + (names.size() > 8 ? ", ... " + std::to_string(names.size()) + " in all" : "") + ")";
    }

    // A bytes field: exactly its width when the line gives it, else the token.
    std::string_view string(std::uint32_t index) {
        const FieldDesc& f = record_->fields[index];
        std::size_t n;
        if (f.width_from == no_field) {
            n = f.initial.width;
        } else if (pending_[static_cast<std::uint32_t>(f.width_from)] == none) {
            const std::uint64_t want = last_[static_cast<std::uint32_t>(f.width_from)];
            if (want > line_.size() - pos_) {
                fail(pos_, describe(index) + " should have " + std::to_string(want) + " bytes, but the line has only " +
                               std::to_string(line_.size() - pos_) + " left");
            }
            n = static_cast<std::size_t>(want);
        } else {
            n = token_end(pos_) - pos_;
        }
        if (n > line_.size() - pos_) fail(pos_, describe(index) + " should have " + std::to_string(n) + " bytes");
        const std::string_view s = line_.substr(pos_, n);
        pos_ += n;
        return s;
    }

    const TextFormDesc& form_;
    std::string_view line_;
    std::string_view raw_;
    std::uint64_t line_number_;
    bool space_;
    const RecordDesc* record_ = nullptr;
    const TextRecordDesc* text_ = nullptr;
    const std::vector<std::string>* stops_ = &no_stops;
    std::string_view after_;  // the `after` text of the field being read
    std::uint8_t column_ = 0;  // its column's width, or 0
    bool left_ = false;        // its column is left-aligned
    bool padded_ = false;      // blanks that padded the value before ran up to the next one
    std::vector<GenericValue>* out_ = nullptr;
    std::size_t pos_ = 0;
    bool first_ = true;
    std::vector<std::uint64_t>& last_;    // per field: its latest value (counts and lengths)
    static inline const std::vector<std::string> no_stops;
    std::vector<std::size_t>& pending_;   // per field: where its omitted value waits in out_, or none
};

}  // namespace detail

}  // namespace metatf::rt
