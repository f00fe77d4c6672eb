// The native text form of a DTD (docs/dtd-language.md, "Text forms"): one
// line per record, read into and written from generic records. Both the
// DTD-driven tool and generated code use this one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metatf/core/descriptor.hpp"
#include "metatf/io/generic.hpp"

namespace metatf::rt {

namespace detail {
class LineParser;
}

// A line of text that is not a record of the DTD, or a record a writer
// refuses. `line` counts from 1; `column` counts bytes from 1, and is 0 only
// for a writer's refusal (which is about a record, not a place in a line).
struct TextError : std::runtime_error {
    TextError(std::uint64_t line, std::uint64_t column, std::string message);

    std::uint64_t line;
    std::uint64_t column;
    std::string message;  // without the position
};

struct TextReadOptions {
    // Skip lines that are not records and count them, instead of failing at
    // the first. The begin and end lines are never skipped.
    bool skip_bad = false;
    // The longest line read, in bytes without its line break. A longer line
    // is a TextError at the column past the limit, found while reading it, so
    // a reader never holds more than this much of a line. The default is far
    // above any real line of the shipped formats (their longest field, a PTF
    // class name, is at most 65,535 bytes), and bounds what one line can cost:
    // parsed into values, a line of SPC optional fields takes up to 80 times
    // its length.
    std::size_t max_line_length = std::size_t(1) << 20;
};

class TextReader {
public:
    // Reads the begin line, if the DTD's text form has one. The DTD must have
    // a text form. The reader reads `in` through its stream buffer, a byte at
    // a time, and leaves the stream's state alone.
    TextReader(std::istream& in, const DtdDesc& dtd, TextReadOptions options = {});

    // Reads the next record; false after the last one (and the end line).
    // Bytes values view this reader's line buffer until the next call.
    // Blank lines (empty, or blanks alone under a blank separator) that end
    // the text, after the end line if the form has one, come last as
    // `comment` records holding one "\n" per line, as many lines a record as
    // the comment's length allows; a blank line before a line that is not is
    // an error ("empty line") at the blank line.
    bool next(GenericRecord& out);

    // The lines read so far (the number of the last one).
    std::uint64_t line() const { return line_number_; }
    // The bytes read so far, line breaks included.
    std::uint64_t bytes_read() const { return bytes_read_; }
    std::uint64_t skipped() const { return skipped_; }
    // The first error skipped under skip_bad, for a report.
    const std::string& first_skipped() const { return first_skipped_; }
    // The line of the record read last, as the input spells it, and the
    // line break that ended it: "\n", "\r\n", "\r", or "" at the end of the input.
    std::string_view record_line() const { return line_; }
    std::string_view line_break() const { return line_break_; }
    // The begin and end lines as read, line breaks included ("" when the
    // form has none, or the end line is not read yet).
    const std::string& begin_as_read() const { return begin_as_read_; }
    const std::string& end_as_read() const { return end_as_read_; }
    // Of the blank lines that end the text: how many are spelled otherwise
    // than "\n" ("\r\n", blanks), and the first of those, its number and its
    // bytes as read (line break included).
    struct RespelledBlanks {
        std::uint64_t count = 0, first_line = 0;
        std::string first;
    };
    const RespelledBlanks& respelled_blank_lines() const { return respelled_; }

private:
    bool read_line();
    bool blank() const { return content().empty() && !too_long_; }
    bool read_blank_lines();
    void skip_blank_lines(std::uint64_t first, std::uint64_t count);
    void blank_comment(GenericRecord& out);
    void drop_rest_of_line(std::streambuf& in);
    void check_length() const;
    bool parse(GenericRecord& out);
    // A record whose mnemonic fits the line, and where its fields start.
    struct Candidate {
        std::uint32_t slot;
        std::size_t end;
    };
    void candidates(std::size_t at);
    void read_as(detail::LineParser& p, const Candidate& c, GenericRecord& out) const;
    [[noreturn]] void no_record(detail::LineParser& p, std::size_t at) const;

    std::istream& in_;
    const DtdDesc& dtd_;
    const TextFormDesc& form_;
    TextReadOptions options_;
    std::string line_;
    std::string_view line_break_;
    std::string begin_as_read_, end_as_read_;
    std::size_t content_size_ = 0;  // line_ without the blanks that end it, under a blank separator
    std::string_view content() const { return std::string_view(line_).substr(0, content_size_); }
    std::uint64_t line_number_ = 0;
    std::uint64_t bytes_read_ = 0;
    std::uint64_t end_column_ = 1;  // on the last line read: the column of its line break, or past its last byte
    bool too_long_ = false;         // the line read is longer than the limit; line_ holds its start
    std::uint64_t skipped_ = 0;
    std::string first_skipped_;
    std::vector<std::uint64_t> last_;  // scratch of the line being parsed, kept to save allocations
    std::vector<std::size_t> pending_;
    std::vector<std::uint64_t> tried_last_;  // the head's state, while shapes are tried
    std::vector<std::size_t> tried_pending_;
    std::vector<Candidate> candidates_;
    std::int32_t only_slot_ = -1;  // the record of an empty mnemonic
    std::int32_t head_slot_ = -1;  // the first record with a text form: a head is read as its fields
    std::vector<std::string> prefixes_;             // per slot: the mnemonic with the text before and after it
    std::vector<std::vector<std::string>> stops_;  // per slot: the texts around its fields, which end tokens
    bool ended_ = false;
    bool held_ = false;              // line_ holds a line read ahead, not yet handled
    std::uint64_t blank_lines_ = 0;  // blank lines ending the text, not yet handed out as comments
    std::uint32_t comment_slot_ = 0;
    std::string newlines_;           // the most "\n" one comment holds
    RespelledBlanks respelled_;
};

class TextWriter {
public:
    // Writes the begin line, if any. The DTD must have a text form.
    TextWriter(std::ostream& out, const DtdDesc& dtd);

    // Writes one record as a line. Throws TextError (the output line, column
    // 0) when the record has no text form or a value cannot be written as text
    // without loss (a token holding the separator, a line break, a character
    // index past the field's characters, a count or length that disagrees
    // with what it counts), or follows blank lines; TraceError (io) when the
    // stream fails. A comment of blank lines (blank_lines_in()) is blank_lines().
    void write(const GenericRecord& record);
    // Blank lines that end the text: written by close(), after the end line.
    void blank_lines(std::uint64_t count) { blank_lines_ += count; }
    // Writes the end line, if any, and the blank lines, and flushes.
    void close();

    // The lines of a comment that holds blank lines ("\n" alone, as
    // TextReader makes them), or 0 for any other record.
    static std::uint64_t blank_lines_in(const DtdDesc& dtd, const GenericRecord& record);

private:
    std::ostream& out_;
    const DtdDesc& dtd_;
    const TextFormDesc& form_;
    void check_reads_back(const GenericRecord& record);

    std::string line_;
    std::vector<std::uint64_t> last_;  // scratch of the line being written, kept to save allocations
    std::vector<std::string> prefixes_;            // per slot: what starts its lines
    std::vector<std::vector<std::string>> stops_;  // per slot: the texts around its fields, which end tokens
    std::vector<std::uint64_t> check_last_;        // scratch of check_reads_back()
    std::vector<std::size_t> check_pending_;
    std::uint64_t lines_ = 0;  // lines written, for messages
    std::uint64_t blank_lines_ = 0;
};

}  // namespace metatf::rt
