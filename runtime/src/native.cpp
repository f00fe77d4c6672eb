#include "metatf/native.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <ios>
#include <istream>
#include <ostream>
#include <streambuf>

#include "metatf/format.hpp"
#include "metatf/layout.hpp"

namespace metatf::rt {

namespace {

const NativeFormDesc& native_form_of(const DtdDesc& dtd) {
    if (!dtd.native_form) throw TraceError(ErrorKind::usage, "the DTD '" + std::string(dtd.name) + "' has no native binary form");
    return *dtd.native_form;
}

// The bytes a field takes in the native form: its DTD width (bytes fields
// may take theirs from a length field instead).
unsigned native_width(const FieldDesc& f) { return f.initial.width != 0 ? f.initial.width : f.initial.restore; }

std::string describe(const RecordDesc& r, const FieldDesc& f) { return "field " + quote(f.path) + " of record " + quote(r.name); }

// The values a record may hold beyond one per byte it takes (empty bytes
// values of elements that read no bytes): enough for any sensible record,
// and a bound on what a few bytes claiming a huge count can cost.
constexpr std::size_t spare_values = 4096;

// Reads a record's fields, in layout order, from what `take` hands out;
// `last` and `spans` are the reader's, reused from record to record.
template <typename Take>
class FieldReader {
public:
    FieldReader(const RecordDesc& r, ByteOrder order, std::vector<GenericValue>& values, Take& take,
                std::vector<std::uint64_t>& last, std::vector<std::pair<std::size_t, std::size_t>>& spans)
        : r_(r), order_(order), values_(values), take_(take), last_(last), spans_(spans) {
        last_.assign(r.field_count, 0);
        spans_.clear();
    }

    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint64_t n = last_[r_.layout[step].index];
        for (std::uint64_t k = 0; k < n; ++k) {
            const std::size_t values = values_.size();
            const std::uint64_t taken = take_.taken();
            element();
            // An element that reads no bytes adds the same values each time: none (the rest add none either), or empty bytes values.
            if (take_.taken() == taken && values_.size() == values) return;
            if (values_.size() > spare_values + take_.taken()) {
                take_.fail("the count " + std::to_string(n) + " of " + describe(r_, r_.fields[r_.layout[step].index]) +
                           " is more than the record's bytes can hold");
            }
        }
    }

    void field(std::uint32_t index) {
        const FieldDesc& f = r_.fields[index];
        GenericValue& v = values_.emplace_back();
        v.field = index;
        if (f.type == Type::bytes) {
            const std::uint64_t n = f.width_from == no_field ? native_width(f) : last_[static_cast<std::uint32_t>(f.width_from)];
            spans_.emplace_back(values_.size() - 1, take_.bytes(n));
            return;
        }
        const unsigned w = native_width(f);
        const std::uint64_t raw = load_uint(take_.word(w), w, order_);
        if (f.type == Type::floating) {
            v.real = float_from_bits(raw, w);
        } else {
            v.integer = f.type == Type::signed_int ? sign_extend(raw, w) : raw;
        }
        last_[index] = v.integer;
    }

private:
    const RecordDesc& r_;
    ByteOrder order_;
    std::vector<GenericValue>& values_;
    Take& take_;
    std::vector<std::uint64_t>& last_;  // per field: its value, for counts and lengths
    std::vector<std::pair<std::size_t, std::size_t>>& spans_;  // per bytes value: its index and where its bytes start
};

}  // namespace

// ---- reading ----------------------------------------------------------------------

NativeReader::NativeReader(std::istream& in, const DtdDesc& dtd, std::size_t max_header)
    : in_(in), dtd_(dtd), form_(native_form_of(dtd)), max_header_(max_header) {
    std::uint64_t largest = 0;
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        if (dtd.records[slot].predefined == Predefined::comment) comment_slot_ = slot;
        if (dtd.records[slot].predefined == Predefined::none) largest = std::max(largest, form_.codes[slot]);
    }
    // A table from code to slot when the codes are small, as they are in real formats.
    if (largest < (1 << 16)) {
        by_code_.assign(static_cast<std::size_t>(largest) + 1, dtd.record_count);
        for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
            if (dtd.records[slot].predefined == Predefined::none) by_code_[static_cast<std::size_t>(form_.codes[slot])] = slot;
        }
    }
    if (form_.header_end) read_header();
}

void NativeReader::fail(ErrorKind kind, const std::string& message, std::uint64_t at) const {
    throw TraceError(kind, message, at, -1, record_);
}

// Reads more of the input into the buffer, keeping what is not consumed; false at its end.
bool NativeReader::refill() {
    buffer_.erase(0, pos_);
    pos_ = 0;
    const std::size_t have = buffer_.size();
    buffer_.resize(have + (std::size_t(1) << 16));
    std::streamsize got = 0;
    try {
        got = in_.rdbuf()->sgetn(buffer_.data() + have, static_cast<std::streamsize>(buffer_.size() - have));
    } catch (const std::ios_base::failure&) {
        fail(ErrorKind::io, "cannot read the input", offset_);
    }
    buffer_.resize(have + static_cast<std::size_t>(got));
    return got > 0;
}

// The lines up to the end line, each with its "\n", kept for the first record.
void NativeReader::read_header() {
    const std::string_view end = form_.header_end;
    std::size_t line_start = 0;
    while (true) {
        if (pos_ == buffer_.size() && !refill()) {
            fail(ErrorKind::truncated, "the file ends before the header's end line " + quote(end), offset_);
        }
        if (header_.size() >= max_header_) {
            fail(ErrorKind::bad_header, "no end line " + quote(end) + " in the first " + std::to_string(max_header_) + " bytes of the header", offset_);
        }
        const char c = buffer_[pos_++];
        ++offset_;
        if (c != '\n') {
            header_ += c;
            continue;
        }
        if (std::string_view(header_).substr(line_start) == end) break;
        header_ += '\n';
        line_start = header_.size();
    }
    header_.resize(line_start);
    header_pending_ = true;
}

// take() when the buffer holds fewer than `n` bytes.
const char* NativeReader::take_more(std::size_t n) {
    while (buffer_.size() - pos_ < n) {
        if (!refill()) fail(ErrorKind::truncated, "the file ends inside record " + std::to_string(record_), offset_ + (buffer_.size() - pos_));
    }
    return take(n);
}

// Appends `n` bytes of the input to `into`, a piece at a time, so that a
// length larger than the file costs no more memory than the file.
void NativeReader::read_exactly(std::uint64_t n, std::string& into) {
    while (n > 0) {
        const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(n, 1 << 16));
        into.append(take(piece), piece);
        n -= piece;
    }
}

bool NativeReader::next(GenericRecord& out) {
    out.values.clear();
    if (header_pending_) {
        header_pending_ = false;
        out.slot = comment_slot_;
        out.values.push_back({1, header_.size(), 0, {}});
        out.values.push_back({2, 0, 0, as_bytes(header_)});
        ++record_;
        return true;
    }
    const std::uint64_t start = offset_;
    if (pos_ == buffer_.size() && !refill()) return false;
    if (buffer_.size() - pos_ < form_.code_width && !refill() && buffer_.size() - pos_ < form_.code_width) {
        fail(ErrorKind::truncated, "the file ends inside a record's type code", offset_ + (buffer_.size() - pos_));
    }
    const std::uint64_t code = load_uint(reinterpret_cast<const std::byte*>(take(form_.code_width)), form_.code_width, form_.order);
    out.slot = slot_of(code);
    if (out.slot == dtd_.record_count) fail(ErrorKind::unknown_tag, "no record has the type code " + std::to_string(code), start);
    const RecordDesc& r = dtd_.records[out.slot];
    bytes_.clear();
    struct Take {
        NativeReader& reader;
        std::uint64_t start;
        std::uint64_t taken() const { return reader.offset_ - start; }
        const std::byte* word(unsigned w) { return reinterpret_cast<const std::byte*>(reader.take(w)); }
        std::size_t bytes(std::uint64_t n) {
            const std::size_t at = reader.bytes_.size();
            reader.read_exactly(n, reader.bytes_);
            return at;
        }
        [[noreturn]] void fail(const std::string& message) { reader.fail(ErrorKind::bad_value, message, reader.offset_); }
    } take{*this, start};
    FieldReader<Take> fields(r, form_.order, out.values, take, last_, spans_);
    walk_layout(r, fields);
    // The bytes values view the buffer only now that it has stopped growing.
    const auto* base = reinterpret_cast<const std::byte*>(bytes_.data());
    for (std::size_t k = 0; k < spans_.size(); ++k) {
        const auto [value, at] = spans_[k];
        const std::size_t end = k + 1 < spans_.size() ? spans_[k + 1].second : bytes_.size();
        out.values[value].bytes = std::span<const std::byte>(base + at, end - at);
    }
    ++record_;
    return true;
}

// The slot of the record with type code `code`, or record_count.
std::uint32_t NativeReader::slot_of(std::uint64_t code) const {
    if (!by_code_.empty()) return code < by_code_.size() ? by_code_[static_cast<std::size_t>(code)] : dtd_.record_count;
    for (std::uint32_t slot = 0; slot < dtd_.record_count; ++slot) {
        if (dtd_.records[slot].predefined == Predefined::none && form_.codes[slot] == code) return slot;
    }
    return dtd_.record_count;
}

// ---- writing ------------------------------------------------------------------------

namespace {

// Appends a record's values in the native form, refusing what it cannot hold.
class FieldWriter {
public:
    // `last` is the writer's, reused from record to record.
    // `offset` and `record`: where the record starts in the output, and its index, for a refusal.
    FieldWriter(const RecordDesc& r, ByteOrder order, const std::vector<GenericValue>& values, std::string& out,
                std::uint64_t offset, std::uint64_t record, std::vector<std::uint64_t>& last)
        : r_(r), order_(order), values_(values), out_(out), offset_(offset), record_(record), last_(last) {
        last_.assign(r.field_count, 0);
    }

    // A group's elements must be as many as its count, already written, says.
    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint32_t count = r_.layout[step].index;
        const auto n = walk_written_group(
            r_, step, last_[count], [&] { return next_; },
            [&] { return next_ < values_.size() ? std::int64_t(values_[next_].field) : -1; }, element);
        if (n != last_[count]) {
            refuse(describe(r_, r_.fields[count]) + " counts " + std::to_string(last_[count]) + " elements, but the record has " +
                   std::to_string(n));
        }
    }

    void field(std::uint32_t index) {
        if (next_ == values_.size() || values_[next_].field != index) refuse("a record's values do not follow its layout");
        const GenericValue& v = values_[next_++];
        const FieldDesc& f = r_.fields[index];
        last_[index] = v.integer;
        const unsigned w = native_width(f);
        if (f.type == Type::bytes) return bytes(f, v);
        std::uint64_t raw = v.integer;
        if (f.type == Type::floating) {
            const auto narrow = static_cast<float>(v.real);
            if (w == 4 && double(narrow) != v.real && v.real == v.real) {
                refuse(describe(r_, f) + " holds " + std::to_string(v.real) + ", which its 4 bytes would round");
            }
            raw = float_to_bits(v.real, w);
        } else if (f.type == Type::signed_int ? !fits_signed(raw, w) : !fits_unsigned(raw, w)) {
            const std::string value = f.type == Type::signed_int ? std::to_string(static_cast<std::int64_t>(raw)) : std::to_string(raw);
            refuse(describe(r_, f) + " holds " + value + ", more than its " + std::to_string(w) + " bytes can");
        }
        std::byte buf[8];
        store_uint(buf, raw, w, order_);
        out_.append(reinterpret_cast<const char*>(buf), w);
    }

    bool done() const { return next_ == values_.size(); }
    [[noreturn]] void refuse(const std::string& why) const { throw TraceError(ErrorKind::bad_value, why, offset_, -1, record_); }

private:
    void bytes(const FieldDesc& f, const GenericValue& v) {
        const std::uint64_t want = f.width_from == no_field ? native_width(f) : last_[static_cast<std::uint32_t>(f.width_from)];
        if (v.bytes.size() != want) {
            refuse(describe(r_, f) + " has " + std::to_string(v.bytes.size()) + " bytes, but " +
                   (f.width_from == no_field ? "its width is " : "its length says ") + std::to_string(want));
        }
        out_.append(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
    }

    const RecordDesc& r_;
    ByteOrder order_;
    const std::vector<GenericValue>& values_;
    std::string& out_;
    std::uint64_t offset_;
    std::uint64_t record_;
    std::vector<std::uint64_t>& last_;  // per field: its value, for counts and lengths
    std::size_t next_ = 0;              // the next value to write
};

}  // namespace

NativeWriter::NativeWriter(std::ostream& out, const DtdDesc& dtd) : out_(out), dtd_(dtd), form_(native_form_of(dtd)) {}

void NativeWriter::write(const GenericRecord& record) {
    if (record.slot >= dtd_.record_count) throw TraceError(ErrorKind::usage, "no record type has slot " + std::to_string(record.slot));
    const RecordDesc& r = dtd_.records[record.slot];
    if (r.predefined == Predefined::comment && form_.header_end && !header_written_ && records_ == 0 && record.values.size() == 2 &&
        record.values[0].integer == record.values[1].bytes.size()) {
        const auto text = record.values[1].bytes;
        write_header(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
        ++records_;
        return;
    }
    if (r.predefined != Predefined::none) {
        throw TraceError(ErrorKind::usage,
                         "a " + std::string(r.name) + " record, which the native form of '" + dtd_.name + "' cannot hold" +
                             (r.predefined == Predefined::comment && form_.header_end ? " (a comment is its header only as the first record)" : ""),
                         flushed_ + buffer_.size(), -1, records_);
    }
    if (form_.header_end && !header_written_) write_header("");
    // The record goes to the buffer whole or not at all.
    const std::size_t start = buffer_.size();
    std::byte code[8];
    store_uint(code, form_.codes[record.slot], form_.code_width, form_.order);
    buffer_.append(reinterpret_cast<const char*>(code), form_.code_width);
    try {
        FieldWriter fields(r, form_.order, record.values, buffer_, flushed_ + start, records_, last_);
        walk_layout(r, fields);
        if (!fields.done()) fields.refuse("a record's values do not follow its layout");
    } catch (...) {
        buffer_.resize(start);
        throw;
    }
    if (buffer_.size() >= (std::size_t(1) << 16)) flush();
    ++records_;
}

// The header's text, then its end line. The text must read back the same:
// whole lines, none of them the end line.
void NativeWriter::write_header(std::string_view text) {
    const std::string_view end = form_.header_end;
    if (!text.empty() && text.back() != '\n') {
        throw TraceError(ErrorKind::bad_value, "the header (the first comment) must end with a line break", flushed_ + buffer_.size(), -1, records_);
    }
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t eol = text.find('\n', at);
        if (text.substr(at, eol - at) == end) {
            throw TraceError(ErrorKind::bad_value, "the header (the first comment) holds its end line " + quote(end), flushed_ + buffer_.size(), -1, records_);
        }
        at = eol + 1;
    }
    buffer_.append(text);
    buffer_.append(end);
    buffer_ += '\n';
    header_written_ = true;
}

void NativeWriter::header(std::string_view text) {
    if (!form_.header_end || header_written_) {
        throw TraceError(ErrorKind::usage, form_.header_end ? "the header is already written" : "the native form of '" + std::string(dtd_.name) + "' has no header");
    }
    write_header(text);
}

void NativeWriter::close() {
    if (form_.header_end && !header_written_) write_header("");
    flush();
    out_.flush();
    if (!out_) throw TraceError(ErrorKind::io, "cannot write the native output");
}

void NativeWriter::flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    flushed_ += buffer_.size();
    buffer_.clear();
    if (!out_) throw TraceError(ErrorKind::io, "cannot write the native output");
}

}  // namespace metatf::rt
