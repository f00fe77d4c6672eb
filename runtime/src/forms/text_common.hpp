// The helpers that reading and writing text forms share (text.cpp,
// text_writer.cpp): what a field's or a record's text form says.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "metatf/core/descriptor.hpp"
#include "metatf/core/error.hpp"
#include "metatf/core/format.hpp"

namespace metatf::rt::text_detail {

inline constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A text of a field's text form that may be unset.
inline std::string_view text_of(const char* s) { return s ? s : ""; }

// Whether a blank separator would lose string `s` of a field with text
// form `t`, so that the line would not read back as itself: an empty one
// that no text of the field's own marks, or one with a blank at an end
// (after its own `before` text a `line` keeps the blanks it starts with).
// The writer refuses such a value and the reader a token that reads as one.
inline bool lost_to_blanks(const TextFieldDesc& t, std::string_view s) {
    if (s.empty()) return !t.before && text_of(t.after).empty();
    const bool front_kept = t.format == TextFormat::line && t.before;
    return (is_blank(s.front()) && !front_kept) || is_blank(s.back());
}

// The texts a record sets before and after its fields: each ends the token
// before it, as the separator does.
inline std::vector<std::string> stops_of(const RecordDesc& r, const TextRecordDesc& t) {
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
inline std::string line_prefix(const TextFormDesc& form, const TextRecordDesc& t) {
    // A record told apart by its shape alone: its fields follow the head.
    if (form.head != 0 && *t.mnemonic == '\0' && !t.fields[0].before) return std::string(text_of(t.fields[0].after));
    const char* before = t.fields[0].before ? t.fields[0].before : form.head != 0 ? form.separator : "";
    return std::string(before) + t.mnemonic + std::string(text_of(t.fields[0].after));
}

// Whether a record's mnemonic, which `rest` follows, ends where a token may end.
inline bool mnemonic_ends(const TextFormDesc& form, const TextRecordDesc& t, const std::vector<std::string>& stops, std::string_view rest) {
    const std::string_view sep = form.separator;
    return *t.mnemonic == '\0' || rest.empty() || !text_of(t.fields[0].after).empty() || rest.starts_with(sep) || (sep == " " && is_blank(rest.front())) ||
           std::any_of(stops.begin(), stops.end(), [&](const std::string& s) { return rest.starts_with(s); });
}

// Where a record's mnemonic, with the text around it (`prefix`), ends in
// `line` when it follows the head at `at`; none when it is not there. Under
// a blank separator any run of blanks stands for blanks before the mnemonic.
inline std::size_t after_mnemonic(const TextFormDesc& form, const TextRecordDesc& t, const std::string& prefix,
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
inline std::string excerpt(std::string_view s) { return quote(s.size() > 20 ? std::string(s.substr(0, 20)) + "..." : s); }

inline const TextFormDesc& text_form_of(const DtdDesc& dtd) {
    if (!dtd.text_form) throw TraceError(ErrorKind::usage, "the DTD '" + std::string(dtd.name) + "' has no text form");
    return *dtd.text_form;
}


}  // namespace metatf::rt::text_detail
