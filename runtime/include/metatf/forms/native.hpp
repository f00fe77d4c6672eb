// The native binary forms of a DTD (docs/dtd-language.md, "Native binary
// forms"): a format's own binary files, such as PTF's or CHARISMA's, read
// into and written from generic records. Magic bytes and an ASCII header,
// each optional, then records: a type code (unless the form has none) and
// the fields' values in the form's byte order, packed or with C's alignment padding, with no framing.
// Both the DTD-driven tool and generated code use this one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metatf/core/descriptor.hpp"
#include "metatf/core/error.hpp"
#include "metatf/io/generic.hpp"

namespace metatf::rt {

// The DTD's native form named `name`; "" names its only form. TraceError
// (usage) when there is no such form.
const NativeFormDesc& native_form(const DtdDesc& dtd, std::string_view name = {});

// Lays out records in a native form: where C puts padding.
class NativeLayout {
public:
    NativeLayout(const DtdDesc& dtd, const NativeFormDesc& form);
    // The alignment of field `index` of the record in `slot` (1 when packed).
    unsigned align(std::uint32_t slot, std::uint32_t index) const;
    // The alignment of the elements of the group starting at layout step `step`.
    unsigned element_align(std::uint32_t slot, std::uint32_t step) const { return plans_[slot].step_align[step]; }
    // The record's alignment: its size is a multiple of it.
    unsigned record_align(std::uint32_t slot) const { return plans_[slot].align; }
    // The bytes of one element when the record ends in a group of fixed-size
    // elements (C's `T items[1]` idiom), else 0.
    std::uint64_t trailing_stride(std::uint32_t slot) const { return plans_[slot].trailing_stride; }
    bool packed() const { return form_.align == 0; }

private:
    struct Plan {
        std::vector<std::uint8_t> step_align;  // per layout step: a group's element alignment
        std::uint8_t align = 1;
        std::uint64_t trailing_stride = 0;
    };
    Plan plan(std::uint32_t slot) const;

    const DtdDesc& dtd_;
    const NativeFormDesc& form_;
    std::vector<Plan> plans_;  // per slot
};

class NativeReader {
public:
    // Reads the magic bytes and the ASCII header, where the form has them.
    // A header longer than `max_header` bytes is an error.
    NativeReader(std::istream& in, const DtdDesc& dtd, const NativeFormDesc& form, std::size_t max_header = std::size_t(1) << 20);
    // The DTD's only native form or, when it has several, the one whose magic
    // bytes start the input (TraceError bad_header when none does).
    NativeReader(std::istream& in, const DtdDesc& dtd);

    // Reads the next record; false at the end of the input. With an ASCII
    // header, the first record is a comment holding it: its lines, each with
    // its line break, without the end line. With a header record, the first
    // record is that one (the file must hold it). Bytes values view this reader's buffer
    // until the next call. Malformed input is a TraceError at its byte offset.
    bool next(GenericRecord& out);

    std::uint64_t offset() const { return offset_; }  // the bytes read so far
    // The ASCII header's lines, without the end line ("" when the form has none).
    const std::string& header() const { return header_; }
    const NativeFormDesc& form() const { return *form_; }

private:
    const NativeFormDesc& detect();
    void start();
    void read_magic();
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
    bool in_body(std::uint32_t slot) const;
    std::uint32_t read_code(std::uint64_t start);
    std::uint32_t slot_of(std::uint64_t code) const;
    [[noreturn]] void fail(ErrorKind kind, const std::string& message, std::uint64_t at) const;

    std::istream& in_;
    const DtdDesc& dtd_;
    std::string buffer_;        // input read ahead; buffer_[pos_] is the next byte
    std::size_t pos_ = 0;
    std::uint64_t offset_ = 0;  // the bytes consumed
    std::uint64_t record_ = 0;  // records read, the header's comment included
    const NativeFormDesc* form_;
    std::size_t max_header_;
    NativeLayout layout_;
    std::string header_;
    bool header_pending_ = false;
    bool header_record_pending_ = false;  // the form's header record is still to read
    std::string bytes_;  // the current record's bytes values
    std::uint32_t comment_slot_ = 0;
    std::uint32_t only_slot_ = 0;  // the form's one record, when records carry no type code
    std::vector<std::uint32_t> by_code_;  // slot per type code, when the codes are small
    std::vector<std::uint64_t> last_;     // scratch of the record being read, kept to save allocations
    std::vector<std::pair<std::size_t, std::size_t>> spans_;
};

class NativeWriter {
public:
    NativeWriter(std::ostream& out, const DtdDesc& dtd, const NativeFormDesc& form);
    // The DTD's only native form.
    NativeWriter(std::ostream& out, const DtdDesc& dtd) : NativeWriter(out, dtd, native_form(dtd)) {}

    // Writes one record (to a buffer that close() flushes). With a header, a comment as the first record is the
    // header (its text must be whole lines, none of them the end line); a
    // trace that starts otherwise gets an empty header. With a header record,
    // the first record must be that one, and no other may be (TraceError
    // usage; close() too when none was written). Other comments, and
    // metadata and section records, and records the form does not hold
    // ('tag.code = none'), have no native form: TraceError (usage).
    // A value the native form cannot hold (wider than its field, a float
    // that a 4-byte field would round, a length that disagrees with its
    // bytes) is a TraceError (bad_value) at the record's offset in the
    // output; nothing of that record is written.
    void write(const GenericRecord& record);
    // Writes the ASCII header's lines (`text` ends with a line break, or is
    // empty) and its end line; only before any record, in a form with a header.
    void header(std::string_view text);
    // Writes the magic and header if no record did, and flushes.
    void close();

private:
    void write_magic();
    void write_header(std::string_view text);
    [[noreturn]] void refuse_header(const RecordDesc& r, bool again) const;
    void flush();

    std::ostream& out_;
    const DtdDesc& dtd_;
    const NativeFormDesc& form_;
    NativeLayout layout_;
    std::string buffer_;  // whole records not yet handed to out_
    std::uint64_t flushed_ = 0;  // the bytes handed to out_, for the offset of a refusal
    std::vector<std::uint64_t> last_;  // scratch of the record being written, kept to save allocations
    std::uint64_t records_ = 0;
    bool magic_written_ = false;
    bool header_written_ = false;  // the ASCII header or the header record
};

}  // namespace metatf::rt
