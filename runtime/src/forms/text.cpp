#include "metatf/forms/text.hpp"

#include <algorithm>
#include <charconv>
#include <ios>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <streambuf>

#include "metatf/core/error.hpp"
#include "metatf/core/format.hpp"
#include "metatf/core/layout.hpp"
#include "metatf/encoding/predefined.hpp"

#include "text_common.hpp"
#include "text_parser.hpp"

namespace metatf::rt {

using namespace text_detail;


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

}  // namespace metatf::rt
