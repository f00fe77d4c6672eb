#include "metatf/text.hpp"

#include <algorithm>
#include <charconv>
#include <ios>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <streambuf>

#include "metatf/error.hpp"
#include "metatf/format.hpp"
#include "metatf/layout.hpp"
#include "metatf/predefined.hpp"

namespace metatf::rt {

namespace {

constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A text of a field's text form that may be unset.
std::string_view text_of(const char* s) { return s ? s : ""; }

// Whether a blank separator would lose string `s` of a field with text
// form `t`, so that the line would not read back as itself: an empty one
// that no text of the field's own marks, or one with a blank at an end
// (after its own `before` text a `line` keeps the blanks it starts with).
// The writer refuses such a value and the reader a token that reads as one.
bool lost_to_blanks(const TextFieldDesc& t, std::string_view s) {
    if (s.empty()) return !t.before && text_of(t.after).empty();
    const bool front_kept = t.format == TextFormat::line && t.before;
    return (is_blank(s.front()) && !front_kept) || is_blank(s.back());
}

// The texts a record sets before and after its fields: each ends the token
// before it, as the separator does.
std::vector<std::string> stops_of(const RecordDesc& r, const TextRecordDesc& t) {
    std::vector<std::string> out;
    for (std::uint32_t i = 1; i < r.field_count; ++i) {
        for (std::string_view s : {text_of(t.fields[i].before), text_of(t.fields[i].after)}) {
            if (!s.empty()) out.emplace_back(s);
        }
    }
    return out;
}

// What starts a record's line: its mnemonic, with the text the tag sets
// before and after it. After a head (TextFormDesc::head) the mnemonic is a
// value like the others: the tag's `before` text, or the separator, goes first.
std::string line_prefix(const TextFormDesc& form, const TextRecordDesc& t) {
    // A record told apart by its shape alone: its fields follow the head.
    if (form.head != 0 && *t.mnemonic == '\0' && !t.fields[0].before) return std::string(text_of(t.fields[0].after));
    const char* before = t.fields[0].before ? t.fields[0].before : form.head != 0 ? form.separator : "";
    return std::string(before) + t.mnemonic + std::string(text_of(t.fields[0].after));
}

// Whether a record's mnemonic, which `rest` follows, ends where a token may end.
bool mnemonic_ends(const TextFormDesc& form, const TextRecordDesc& t, const std::vector<std::string>& stops, std::string_view rest) {
    const std::string_view sep = form.separator;
    return *t.mnemonic == '\0' || rest.empty() || !text_of(t.fields[0].after).empty() || rest.starts_with(sep) || (sep == " " && is_blank(rest.front())) ||
           std::any_of(stops.begin(), stops.end(), [&](const std::string& s) { return rest.starts_with(s); });
}

// Where a record's mnemonic, with the text around it (`prefix`), ends in
// `line` when it follows the head at `at`; none when it is not there. Under
// a blank separator any run of blanks stands for blanks before the mnemonic.
std::size_t after_mnemonic(const TextFormDesc& form, const TextRecordDesc& t, const std::string& prefix,
                           const std::vector<std::string>& stops, std::string_view line, std::size_t at) {
    std::string_view want = prefix;
    if (std::string_view(form.separator) == " " && !want.empty() && is_blank(want.front())) {
        if (at == line.size() || !is_blank(line[at])) return none;
        while (at < line.size() && is_blank(line[at])) ++at;
        while (!want.empty() && is_blank(want.front())) want.remove_prefix(1);
    }
    if (line.compare(at, want.size(), want) != 0) return none;
    at += want.size();
    return mnemonic_ends(form, t, stops, line.substr(at)) ? at : none;
}

// Shows a piece of a line in a message, cut short.
std::string excerpt(std::string_view s) { return quote(s.size() > 20 ? std::string(s.substr(0, 20)) + "..." : s); }

const TextFormDesc& text_form_of(const DtdDesc& dtd) {
    if (!dtd.text_form) throw TraceError(ErrorKind::usage, "the DTD '" + std::string(dtd.name) + "' has no text form");
    return *dtd.text_form;
}

}  // namespace

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

TextError::TextError(std::uint64_t l, std::uint64_t c, std::string m)
    : std::runtime_error("line " + std::to_string(l) + (c ? ", column " + std::to_string(c) : std::string()) + ": " + m),
      line(l),
      column(c),
      message(std::move(m)) {}

// ---- reading ----------------------------------------------------------------------

TextReader::TextReader(std::istream& in, const DtdDesc& dtd, TextReadOptions options)
    : in_(in), dtd_(dtd), form_(text_form_of(dtd)), options_(options) {
    prefixes_.resize(dtd.record_count);
    stops_.resize(dtd.record_count);
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const TextRecordDesc& t = form_.records[slot];
        if (!t.mnemonic) continue;
        if (*t.mnemonic == '\0') only_slot_ = static_cast<std::int32_t>(slot);
        if (head_slot_ < 0) head_slot_ = static_cast<std::int32_t>(slot);
        prefixes_[slot] = line_prefix(form_, t);
        stops_[slot] = stops_of(dtd.records[slot], t);
    }
    comment_slot_ = predefined_slot(dtd, Predefined::comment);
    const unsigned width = comment_length_width(dtd.records[comment_slot_]);
    newlines_.assign(width >= 2 ? 4096 : max_comment_bytes(width), '\n');
    if (*form_.begin == '\0') return;
    const bool read = read_line();
    if (read) check_length();
    if (!read || content() != form_.begin) {
        throw TextError(1, 1, "expected the begin line " + quote(form_.begin));
    }
    begin_as_read_ = line_ + std::string(line_break_);
}

// Reads a line without its line break ("\n", "\r\n" or "\r") into line_; false at
// the end of the input. A line longer than the limit is cut there and marked
// too long: the reader stops at the limit, or with skip_bad drops the rest of
// the line, so that the next one can be read.
bool TextReader::read_line() {
    std::streambuf* in = in_.rdbuf();
    if (!in) throw TraceError(ErrorKind::io, "cannot read the text input");
    constexpr int eof = std::char_traits<char>::eof();
    const std::size_t limit = options_.max_line_length;
    line_.clear();
    line_break_ = "";
    too_long_ = false;
    try {
        int c = in->sbumpc();
        if (c == eof) return false;
        for (; c != eof && c != '\n'; c = in->sbumpc()) {
            ++bytes_read_;
            if (c == '\r') {  // "\r\n", or a lone "\r" as old Mac files (and PTF's report) end lines
                line_break_ = "\r";
                if (in->sgetc() == '\n') {
                    bytes_read_ += in->sbumpc() == '\n';
                    line_break_ = "\r\n";
                }
                break;
            }
            if (line_.size() >= limit) {
                too_long_ = true;
                if (options_.skip_bad) drop_rest_of_line(*in);
                break;
            }
            line_ += static_cast<char>(c);
        }
        if (c == '\n') {
            ++bytes_read_;
            line_break_ = "\n";
        }
    } catch (const std::ios_base::failure&) {
        // A stream buffer reports a failed read by throwing (std::filebuf does).
        throw TraceError(ErrorKind::io, "cannot read the text input");
    }
    ++line_number_;
    end_column_ = line_.size() + 1;
    content_size_ = line_.size();
    if (std::string_view(form_.separator) == " ") {
        while (content_size_ > 0 && is_blank(line_[content_size_ - 1])) --content_size_;
    }
    return true;
}

// Reads up to the next line break, keeping nothing.
void TextReader::drop_rest_of_line(std::streambuf& in) {
    constexpr int eof = std::char_traits<char>::eof();
    for (int c = in.sbumpc(); c != eof; c = in.sbumpc()) {
        ++bytes_read_;
        if (c == '\n') return;
        if (c == '\r') {
            if (in.sgetc() == '\n') bytes_read_ += in.sbumpc() == '\n';
            return;
        }
    }
}

void TextReader::check_length() const {
    if (too_long_) {
        throw TextError(line_number_, options_.max_line_length + 1,
                        "the line is longer than " + std::to_string(options_.max_line_length) + " bytes, the limit for one line");
    }
}

bool TextReader::next(GenericRecord& out) {
    while (true) {
        if (blank_lines_ != 0) {
            blank_comment(out);
            return true;
        }
        if (!held_ && (ended_ || !read_line())) {
            if (!ended_ && *form_.end != '\0') {
                // The end of the input is where the last line stops.
                throw TextError(std::max<std::uint64_t>(line_number_, 1), line_number_ ? end_column_ : 1,
                                "the text ends without the end line " + quote(form_.end));
            }
            return false;
        }
        held_ = false;
        if (*form_.end != '\0' && content() == form_.end && !too_long_) {
            ended_ = true;
            end_as_read_ = line_ + std::string(line_break_);
            if (read_line() && !(blank() && read_blank_lines())) throw TextError(line_number_, 1, "text after the end line " + quote(form_.end));
            continue;
        }
        if (blank()) {  // no record: a writer would not write one as a blank line
            const std::uint64_t first = line_number_;
            if (!read_blank_lines()) skip_blank_lines(first, line_number_ - first);
            continue;
        }
        try {
            check_length();
            return parse(out);
        } catch (const TextError& e) {
            if (!options_.skip_bad) throw;
            if (skipped_++ == 0) first_skipped_ = e.what();
        }
    }
}

// Reads on from the blank line just read. True when blank lines alone follow
// to the end of the input: they are kept (blank_lines_). False when a line
// that is not blank follows: it waits in line_.
bool TextReader::read_blank_lines() {
    std::uint64_t count = 0;
    RespelledBlanks respelled;
    bool more;
    do {
        ++count;
        if (line_ != "" || line_break_ != "\n") {
            if (respelled.count++ == 0) respelled = {1, line_number_, line_ + std::string(line_break_)};
        }
    } while ((more = read_line()) && blank());
    if (more) {
        held_ = true;
        return false;
    }
    blank_lines_ = count;
    respelled_ = respelled;
    return true;
}

// Blank lines before a line that is not blank: an error at the first of them.
void TextReader::skip_blank_lines(std::uint64_t first, std::uint64_t count) {
    const TextError e(first, 1, "empty line");
    if (!options_.skip_bad) throw e;
    if (skipped_ == 0) first_skipped_ = e.what();
    skipped_ += count;
}

// A comment of blank lines that end the text, as many as it can hold.
void TextReader::blank_comment(GenericRecord& out) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(blank_lines_, newlines_.size()));
    blank_lines_ -= n;
    out.slot = comment_slot_;
    out.values.clear();
    out.values.push_back({1, n, 0, {}});
    out.values.push_back({2, 0, 0, as_bytes(std::string_view(newlines_).substr(0, n))});
}

bool TextReader::parse(GenericRecord& out) {
    detail::LineParser p(form_, content(), line_, line_number_, last_, pending_);
    out.values.clear();
    std::size_t at = 0;
    if (form_.head != 0) {
        const auto first = static_cast<std::uint32_t>(head_slot_);
        at = p.head(dtd_.records[first], form_.records[first], stops_[first], out);
    }
    candidates(at);
    if (candidates_.empty()) no_record(p, at);
    if (candidates_.size() == 1) {
        read_as(p, candidates_.front(), out);
        return true;
    }
    // Shapes tried in order: the first record whose fields read the whole line.
    // Each try starts from the head's state (copied into kept scratch: no allocation per line).
    const std::size_t kept = out.values.size();
    tried_last_ = last_;
    tried_pending_ = pending_;
    std::optional<TextError> furthest;
    for (const Candidate& c : candidates_) {
        try {
            read_as(p, c, out);
            return true;
        } catch (const TextError& e) {
            if (!furthest || e.column > furthest->column) furthest = e;
            out.values.resize(kept);
            last_ = tried_last_;
            pending_ = tried_pending_;
        }
    }
    throw *furthest;
}

void TextReader::read_as(detail::LineParser& p, const Candidate& c, GenericRecord& out) const {
    out.slot = c.slot;
    if (form_.head != 0) {
        p.after_head(dtd_.records[c.slot], form_.records[c.slot], stops_[c.slot], c.end);
    } else {
        p.parse(dtd_.records[c.slot], form_.records[c.slot], stops_[c.slot], c.end, out);
    }
}

// The records whose mnemonic, with the text around it, stands at `at` (the
// line's start, or where the head ends) and ends where a token may end: the
// longest first, then in the DTD's order.
void TextReader::candidates(std::size_t at) {
    candidates_.clear();
    for (std::uint32_t slot = 0; slot < dtd_.record_count; ++slot) {
        const TextRecordDesc& t = form_.records[slot];
        if (!t.mnemonic) continue;
        std::size_t end = none;
        if (form_.head != 0) {
            end = after_mnemonic(form_, t, prefixes_[slot], stops_[slot], content(), at);
        } else if (content().starts_with(prefixes_[slot]) &&
                   mnemonic_ends(form_, t, stops_[slot], content().substr(prefixes_[slot].size()))) {
            end = prefixes_[slot].size();
        }
        if (end != none) candidates_.push_back({slot, end});
    }
    std::stable_sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) { return a.end > b.end; });
}

// No record's mnemonic fits the line: say what stands there.
void TextReader::no_record(detail::LineParser& p, std::size_t at) const {
    if (form_.head != 0) {
        const std::string_view m = p.token_at(at);
        const RecordDesc& r = dtd_.records[head_slot_];
        if (m.empty()) p.fail(at, "expected a record mnemonic after field " + quote(r.fields[r.layout[form_.head - 1].index].path));
        p.fail(static_cast<std::size_t>(m.data() - content().data()), "unknown record " + excerpt(m));
    }
    if (only_slot_ >= 0) p.fail(0, "expected " + quote(prefixes_[only_slot_]) + " at the start of the line");
    const std::string_view m = p.mnemonic();
    p.fail(0, m.empty() ? "expected a record mnemonic at the start of the line" : "unknown record " + excerpt(m));
}

// ---- writing ------------------------------------------------------------------------

namespace {

// Formats one record's values; refuses what would not read back the same.
class LineFormatter {
public:
    // `last` is the caller's, reused from record to record.
    LineFormatter(const TextFormDesc& form, std::string& out, std::uint64_t line_number, std::vector<std::uint64_t>& last)
        : form_(form), out_(out), line_number_(line_number), space_(std::string_view(form.separator) == " "), last_(last) {}

    // `prefix`: the record's line_prefix(), written first or after the head.
    void format(const RecordDesc& r, const TextRecordDesc& text, const std::string& prefix, const GenericRecord& g) {
        out_.clear();
        record_ = &r;
        text_ = &text;
        values_ = &g.values;
        prefix_ = &prefix;
        next_ = 0;
        last_.assign(r.field_count, 0);
        first_ = *text.mnemonic == '\0' || form_.head != 0;
        if (form_.head == 0) out_ += prefix;
        walk_layout(r, *this);
        if (next_ != values_->size()) refuse("a record's values do not follow its layout");
        out_ += '\n';
    }

    [[noreturn]] void refuse(const std::string& why) const { throw TextError(line_number_, 0, why); }

    // ---- the layout walk's visitor
    // A group's elements must be as many as its count says, whether the count
    // is written or not.
    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint32_t count = record_->layout[step].index;
        const auto n = walk_written_group(
            *record_, step, last_[count], [&] { return next_; },
            [&] { return next_ < values_->size() ? std::int64_t((*values_)[next_].field) : -1; }, element);
        if (n != last_[count]) {
            refuse(describe(record_->fields[count]) + " counts " + std::to_string(last_[count]) + " elements, but the record has " +
                   std::to_string(n));
        }
    }

    void field(std::uint32_t index) {
        if (next_ == values_->size() || (*values_)[next_].field != index) refuse("a record's values do not follow its layout");
        const GenericValue& v = (*values_)[next_++];
        last_[index] = v.integer;
        const TextFieldDesc& t = text_->fields[index];
        const FieldDesc& f = record_->fields[index];
        if (f.breaks_fixed(v.integer)) refuse(not_fixed_message(*record_, f, v.integer));
        if (t.format == TextFormat::omit) return;
        exact_ = space_ && !first_ && !t.before && exact_format(f, t);
        if (t.tab > out_.size()) out_.append(t.tab - out_.size(), ' ');
        const bool ends_line = record_->layout[record_->layout_count - 1].op == LayoutStep::field &&
                               record_->layout[record_->layout_count - 1].index == index && text_of(t.after).empty();
        if (t.before) {
            out_ += t.before;
        } else if (!first_ && !(exact_ && ends_line && v.bytes.empty())) {
            out_ += form_.separator;  // an empty exact value ending the line goes without
        }
        first_ = false;
        const std::size_t at = out_.size();
        value(f, t, v);
        pad(f, t, at);
        out_ += text_of(t.after);
        if (next_ == form_.head) out_ += *prefix_;  // the head ends: the mnemonic follows
    }

private:
    std::string describe(const FieldDesc& f) const {
        return "field " + quote(f.path) + " of record " + quote(record_->name);
    }

    // A `line` field, or a string whose length the line gives before it: the
    // reader takes its bytes exactly (LineParser::exact).
    bool exact_format(const FieldDesc& f, const TextFieldDesc& t) const {
        return t.format == TextFormat::line || (t.format == TextFormat::string && (f.width_from == no_field || length_written(f)));
    }

    // Blanks up to the column's width, before the value written from `at` or
    // after it (a wider value widens the column, as printf does). A string's
    // own blank on that side would be read as padding.
    void pad(const FieldDesc& f, const TextFieldDesc& t, std::size_t at) {
        if (t.column == 0) return;
        const std::size_t n = out_.size() - at;
        if (f.type == Type::bytes && n != 0 && is_blank(t.left ? out_.back() : out_[at])) {
            refuse(describe(f) + (t.left ? " ends" : " starts") + " with a blank, which its column's padding would take");
        }
        if (n < t.column) out_.insert(t.left ? out_.size() : at, t.column - n, ' ');
    }

    void value(const FieldDesc& f, const TextFieldDesc& t, const GenericValue& v) {
        switch (t.format) {
            case TextFormat::decimal:
                if (f.type == Type::floating) {
                    number(v.real);
                } else if (t.digits != 0 && f.scale == 0) {
                    const bool negative = f.type == Type::signed_int && static_cast<std::int64_t>(v.integer) < 0;
                    if (negative) out_ += '-';
                    append_digits(out_, negative ? 0 - v.integer : v.integer, 10, t.digits);
                } else {
                    append_fixed(out_, v.integer, f.type == Type::signed_int, f.scale, t.digits);
                }
                return;
            case TextFormat::hex: append_digits(out_, v.integer, 16, t.digits, t.upper); return;
            case TextFormat::chars:
                if (v.integer >= std::string_view(t.chars).size()) {
                    refuse(describe(f) + " has value " + std::to_string(v.integer) + ", which names none of the characters \"" + t.chars + "\"");
                }
                out_ += t.chars[v.integer];
                return;
            case TextFormat::string:
            case TextFormat::line:
            case TextFormat::nested: bytes(f, t, v.bytes); return;
            case TextFormat::omit: return;
            case TextFormat::enumeration: out_ += name_of(f, v.integer); return;
            case TextFormat::clock: append_clock(out_, v.integer, f.scale, t.digits); return;
        }
    }

    // The name the field's enum gives `value` (its names sorted by value).
    std::string_view name_of(const FieldDesc& f, std::uint64_t value) const {
        const auto names = std::span(f.rules->names, f.rules->name_count);
        const auto it = std::ranges::lower_bound(names, value, {}, &NamedValue::value);
        if (it == names.end() || it->value != value) {
            refuse(describe(f) + " has value " + (f.type == Type::signed_int ? std::to_string(static_cast<std::int64_t>(value)) : std::to_string(value)) +
                   ", which its enum names none of");
        }
        return it->name;
    }

    // The shortest form that reads back to the same double.
    void number(double v) {
        char buf[64];
        out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    }

    void bytes(const FieldDesc& f, const TextFieldDesc& t, std::span<const std::byte> data) {
        const std::string_view s = as_text(data);
        if (s.find_first_of("\r\n") != std::string_view::npos) refuse(describe(f) + " holds a line break");
        if (f.width_from == no_field && s.size() != f.initial.width) {
            refuse(describe(f) + " has " + std::to_string(s.size()) + " bytes; its text form has " + std::to_string(f.initial.width));
        }
        if (f.width_from != no_field) {
            const auto length = static_cast<std::uint32_t>(f.width_from);
            if (s.size() != last_[length]) {
                refuse(describe(f) + " has " + std::to_string(s.size()) + " bytes, but its length " +
                       quote(record_->fields[length].path) + " says " + std::to_string(last_[length]));
            }
        }
        const bool token = t.format == TextFormat::string && f.width_from != no_field && !length_written(f);
        if (token && (space_ ? s.find_first_of(" \t") : s.find(form_.separator)) != std::string_view::npos) {
            refuse(describe(f) + " holds the separator " + quote(form_.separator) + ": " + excerpt(s));
        }

        // A nested value ends at its `after` text; an exact form writes what it reads.
        if (space_ && !exact_ && t.format != TextFormat::nested && lost_to_blanks(t, s)) {
            refuse(describe(f) + " is empty or starts or ends with a blank, which a blank separator would lose");
        }
        out_ += s;
    }

    bool length_written(const FieldDesc& f) const {
        return text_->fields[static_cast<std::uint32_t>(f.width_from)].format != TextFormat::omit;
    }

    const TextFormDesc& form_;
    std::string& out_;
    std::uint64_t line_number_;
    bool space_;
    const RecordDesc* record_ = nullptr;
    const TextRecordDesc* text_ = nullptr;
    const std::vector<GenericValue>* values_ = nullptr;
    const std::string* prefix_ = nullptr;  // the mnemonic with the text around it
    std::size_t next_ = 0;              // the next value to write
    std::vector<std::uint64_t>& last_;  // per field: its latest value (counts and lengths)
    bool first_ = true;
    bool exact_ = false;  // the field being written is read exactly (exact_format)
};

}  // namespace

TextWriter::TextWriter(std::ostream& out, const DtdDesc& dtd) : out_(out), dtd_(dtd), form_(text_form_of(dtd)) {
    prefixes_.resize(dtd.record_count);
    stops_.resize(dtd.record_count);
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        if (!form_.records[slot].mnemonic) continue;
        prefixes_[slot] = line_prefix(form_, form_.records[slot]);
        stops_[slot] = stops_of(dtd.records[slot], form_.records[slot]);
    }
    if (*form_.begin != '\0') out_ << form_.begin << '\n';
    lines_ = *form_.begin != '\0';
}

namespace {

bool same_value(const GenericValue& a, const GenericValue& b) {
    return a.field == b.field && a.integer == b.integer && (a.real == b.real || (a.real != a.real && b.real != b.real)) &&
           same_bytes(a.bytes, b.bytes);
}

}  // namespace

// A record whose text form sets text around its values can be written in a
// line that reads back otherwise (a value holding a piece of that text, a
// number running into it): such a line is read back here and refused.
void TextWriter::check_reads_back(const GenericRecord& record) {
    const TextRecordDesc& text = form_.records[record.slot];
    GenericRecord again;
    const std::string_view line = std::string_view(line_).substr(0, line_.size() - 1);
    std::string_view content = line;
    if (std::string_view(form_.separator) == " ") {
        while (!content.empty() && is_blank(content.back())) content.remove_suffix(1);
    }
    bool same = false;
    try {
        const RecordDesc& r = dtd_.records[record.slot];
        detail::LineParser p(form_, content, line, lines_, check_last_, check_pending_);
        if (form_.head == 0) {
            p.parse(r, text, stops_[record.slot], prefixes_[record.slot].size(), again);
        } else {
            const std::size_t at = p.head(r, text, stops_[record.slot], again);
            const std::size_t end = after_mnemonic(form_, text, prefixes_[record.slot], stops_[record.slot], content, at);
            if (end == none) throw TextError(lines_, 0, "");
            p.after_head(r, text, stops_[record.slot], end);
        }
        same = again.values.size() == record.values.size() &&
               std::equal(again.values.begin(), again.values.end(), record.values.begin(), same_value);
    } catch (const TextError&) {
    }
    if (!same) {
        throw TextError(lines_, 0, "record " + quote(dtd_.records[record.slot].name) + " would not read back the same from its line " +
                                       excerpt(line) + ": a value runs into the text around the values");
    }
}

std::uint64_t TextWriter::blank_lines_in(const DtdDesc& dtd, const GenericRecord& record) {
    if (record.slot >= dtd.record_count || dtd.records[record.slot].predefined != Predefined::comment || record.values.size() != 2) return 0;
    const std::span<const std::byte> text = record.values[1].bytes;
    const bool blank = std::all_of(text.begin(), text.end(), [](std::byte b) { return b == std::byte{'\n'}; });
    return blank ? text.size() : 0;
}

void TextWriter::write(const GenericRecord& record) {
    if (const std::uint64_t n = blank_lines_in(dtd_, record)) return blank_lines(n);
    ++lines_;
    if (blank_lines_ != 0) throw TextError(lines_, 0, "a record cannot follow the blank lines that end the text");
    if (record.slot >= dtd_.record_count || !form_.records[record.slot].mnemonic) {
        const std::string name = record.slot < dtd_.record_count ? dtd_.records[record.slot].name : "?";
        throw TextError(lines_, 0, "record '" + name + "' has no text form in the DTD '" + dtd_.name + "'");
    }
    LineFormatter(form_, line_, lines_, last_).format(dtd_.records[record.slot], form_.records[record.slot], prefixes_[record.slot], record);
    if (!stops_[record.slot].empty() || form_.head != 0) check_reads_back(record);
    out_ << line_;
    if (!out_) throw TraceError(ErrorKind::io, "cannot write the text output");
}

void TextWriter::close() {
    if (*form_.end != '\0') out_ << form_.end << '\n';
    for (; blank_lines_ != 0 && out_; --blank_lines_) out_.put('\n');
    out_.flush();
    if (!out_) throw TraceError(ErrorKind::io, "cannot write the text output");
}

}  // namespace metatf::rt
