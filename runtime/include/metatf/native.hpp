// The native binary form of a DTD (docs/dtd-language.md, "Native binary
// forms"): a format's own binary file, such as PTF's, read into and written
// from generic records. An optional ASCII header, then records, each a type
// code and its fields' values in the form's byte order, with no framing.
// Both the DTD-driven tool and generated code use this one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "descriptor.hpp"
#include "error.hpp"
#include "generic.hpp"

namespace metatf::rt {

class NativeReader {
public:
    // Reads the ASCII header, if the DTD's native form has one; the DTD must
    // have a native form. A header longer than `max_header` bytes is an error.
    NativeReader(std::istream& in, const DtdDesc& dtd, std::size_t max_header = std::size_t(1) << 20);

    // Reads the next record; false at the end of the input. With a header,
    // the first record is a comment holding it: its lines, each with its line
    // break, without the end line. Bytes values view this reader's buffer
    // until the next call. Malformed input is a TraceError at its byte offset.
    bool next(GenericRecord& out);

    std::uint64_t offset() const { return offset_; }  // the bytes read so far
    // The ASCII header's lines, without the end line ("" when the form has none).
    const std::string& header() const { return header_; }

private:
    void read_header();
    bool refill();
    // `n` bytes of the input, in the buffer; the file must hold them.
    const char* take(std::size_t n) {
        if (buffer_.size() - pos_ < n) return take_more(n);
        const char* p = buffer_.data() + pos_;
        pos_ += n;
        offset_ += n;
        return p;
    }
    const char* take_more(std::size_t n);
    void read_exactly(std::uint64_t n, std::string& into);
    std::uint32_t slot_of(std::uint64_t code) const;
    [[noreturn]] void fail(ErrorKind kind, const std::string& message, std::uint64_t at) const;

    std::istream& in_;
    const DtdDesc& dtd_;
    const NativeFormDesc& form_;
    std::size_t max_header_;
    std::string buffer_;        // input read ahead; buffer_[pos_] is the next byte
    std::size_t pos_ = 0;
    std::uint64_t offset_ = 0;  // the bytes consumed
    std::uint64_t record_ = 0;  // records read, the header's comment included
    std::string header_;
    bool header_pending_ = false;
    std::string bytes_;  // the current record's bytes values
    std::uint32_t comment_slot_ = 0;
    std::vector<std::uint32_t> by_code_;  // slot per type code, when the codes are small
    std::vector<std::uint64_t> last_;     // scratch of the record being read, kept to save allocations
    std::vector<std::pair<std::size_t, std::size_t>> spans_;
};

class NativeWriter {
public:
    // The DTD must have a native form.
    NativeWriter(std::ostream& out, const DtdDesc& dtd);

    // Writes one record (to a buffer that close() flushes). With a header, a comment as the first record is the
    // header (its text must be whole lines, none of them the end line); a
    // trace that starts otherwise gets an empty header. Other comments, and
    // metadata and section records, have no native form: TraceError (usage).
    // A value the native form cannot hold (wider than its field, a float
    // that a 4-byte field would round, a length that disagrees with its
    // bytes) is a TraceError (bad_value) at the record's offset in the
    // output; nothing of that record is written.
    void write(const GenericRecord& record);
    // Writes the ASCII header's lines (`text` ends with a line break, or is
    // empty) and its end line; only before any record, in a form with a header.
    void header(std::string_view text);
    // Writes the header if no record did, and flushes.
    void close();

private:
    void write_header(std::string_view text);
    void flush();

    std::ostream& out_;
    const DtdDesc& dtd_;
    const NativeFormDesc& form_;
    std::string buffer_;  // whole records not yet handed to out_
    std::uint64_t flushed_ = 0;  // the bytes handed to out_, for the offset of a refusal
    std::vector<std::uint64_t> last_;  // scratch of the record being written, kept to save allocations
    std::uint64_t records_ = 0;
    bool header_written_ = false;
};

}  // namespace metatf::rt
