#include "metatf/forms/text.hpp"

#include <charconv>
#include <ostream>

#include "metatf/core/error.hpp"
#include "metatf/core/format.hpp"
#include "metatf/core/layout.hpp"
#include "metatf/encoding/predefined.hpp"
#include "text_common.hpp"
#include "text_parser.hpp"

namespace metatf::rt {

using namespace text_detail;

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
