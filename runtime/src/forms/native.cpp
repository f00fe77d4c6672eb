#include "metatf/forms/native.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <ios>
#include <istream>
#include <optional>
#include <ostream>
#include <streambuf>

#include "metatf/analysis/rules.hpp"
#include "metatf/core/format.hpp"
#include "metatf/core/layout.hpp"
#include "metatf/encoding/predefined.hpp"

namespace metatf::rt {

namespace {

std::string form_name(const DtdDesc& dtd, const NativeFormDesc& form) {
    return *form.name ? "the native form " + quote(form.name) + " of " + quote(dtd.name) : "the native form of " + quote(dtd.name);
}

std::string describe(const RecordDesc& r, const FieldDesc& f) { return "field " + quote(f.path) + " of record " + quote(r.name); }

std::uint64_t pad_to(std::uint64_t at, unsigned align) { return (align - at % align) % align; }

std::string hex_bytes(const std::uint8_t* p, std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::size_t k = 0; k < n; ++k) {
        if (k) out += ' ';
        out += digits[p[k] >> 4];
        out += digits[p[k] & 15];
    }
    return out;
}

// The values a record may hold beyond one per byte it takes (empty bytes
// values of elements that read no bytes): enough for any sensible record,
// and a bound on what a few bytes claiming a huge count can cost.
constexpr std::size_t spare_values = 4096;

// Where a record of a form stands while it is read or written: the padding
// C puts before a field, around a group's elements and at the end.
class Padding {
public:
    Padding(const NativeLayout& layout, std::uint32_t slot, const RecordDesc& r) : layout_(layout), slot_(slot), r_(r) {}

    // The bytes of padding before field `index`, at `at` bytes into the record.
    std::uint64_t before_field(std::uint32_t index, std::uint64_t at) const { return pad_to(at, layout_.align(slot_, index)); }
    // Before and after each element of the group at `step`, and before the first.
    std::uint64_t around_element(std::uint32_t step, std::uint64_t at) {
        const std::uint64_t pad = pad_to(at, layout_.element_align(slot_, step));
        if (!trailing_at_ && layout_.trailing_stride(slot_) != 0 && detail::layout_end(r_, step) + 1 == r_.layout_count) trailing_at_ = at + pad;
        return pad;
    }
    // After the last field: up to the record's alignment, or for a record
    // ending in fixed-size elements, as C sizes `T items[1]` grown to n items.
    std::uint64_t at_end(std::uint64_t at) const {
        const unsigned align = layout_.record_align(slot_);
        const std::uint64_t stride = layout_.trailing_stride(slot_);
        if (stride == 0 || !trailing_at_) return pad_to(at, align);
        return pad_to(*trailing_at_ + stride, align);
    }

private:
    const NativeLayout& layout_;
    std::uint32_t slot_;
    const RecordDesc& r_;
    std::optional<std::uint64_t> trailing_at_;  // where the trailing group's first element starts
};

// Reads a record's fields, in layout order, from what `take` hands out;
// `last` and `spans` are the reader's, reused from record to record.
template <typename Take>
class FieldReader {
public:
    FieldReader(const RecordDesc& r, const NativeRecordDesc& n, const NativeLayout& layout, std::uint32_t slot, const NativeFormDesc& form,
                std::vector<GenericValue>& values, Take& take, std::vector<std::uint64_t>& last,
                std::vector<std::pair<std::size_t, std::size_t>>& spans)
        : r_(r), n_(n), padding_(layout, slot, r), packed_(layout.packed()), order_(form.order), high_bits_(form.high_bits_first), values_(values), take_(take), last_(last),
          spans_(spans) {
        last_.assign(r.field_count, 0);
        spans_.clear();
    }

    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint64_t n = last_[r_.layout[step].index];
        if (!packed_) take_.skip(padding_.around_element(step, take_.taken()));
        for (std::uint64_t k = 0; k < n; ++k) {
            const std::size_t values = values_.size();
            const std::uint64_t taken = take_.taken();
            element();
            if (!packed_) take_.skip(padding_.around_element(step, take_.taken()));
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
        const NativeFieldDesc& nf = n_.fields[index];
        GenericValue& v = values_.emplace_back();
        v.field = index;
        if (nf.kind == NativeKind::implied) return;  // set by the chars field it measures
        if (!packed_) take_.skip(padding_.before_field(index, take_.taken()));
        if (nf.kind == NativeKind::chars) return chars(f, nf.width);
        if (f.type == Type::bytes) {
            const std::uint64_t n = f.width_from == no_field ? nf.width : last_[static_cast<std::uint32_t>(f.width_from)];
            spans_.emplace_back(values_.size() - 1, take_.bytes(n));
            return;
        }
        const unsigned w = nf.width;
        const std::uint64_t raw = load_uint(take_.word(w), w, order_);
        if (f.type == Type::floating) {
            v.real = float_from_bits(raw, w);
        } else {
            v.integer = f.type == Type::signed_int ? sign_extend(raw, w) : high_bits_ && f.rules ? parts_from_high(*f.rules, raw, w) : raw;
            if (f.breaks_fixed(v.integer)) take_.fail(not_fixed_message(r_, f, v.integer));
        }
        last_[index] = v.integer;
    }

    void end() {
        if (!packed_) take_.skip(padding_.at_end(take_.taken()));
    }

private:
    // A C char array: the text up to the first NUL, whose length is the value of the field that measures it.
    void chars(const FieldDesc& f, std::uint32_t width) {
        const std::size_t at = take_.bytes(width);
        const std::size_t length = take_.text_length(at, width);
        take_.drop_after(at + length);
        spans_.emplace_back(values_.size() - 1, at);
        const auto measured = static_cast<std::uint32_t>(f.width_from);
        const FieldDesc& m = r_.fields[measured];
        if (m.breaks_fixed(length)) take_.fail(not_fixed_message(r_, m, length));
        last_[measured] = length;
        for (std::size_t k = values_.size(); k-- > 0;) {
            if (values_[k].field == measured) {
                values_[k].integer = length;
                break;
            }
        }
    }

    const RecordDesc& r_;
    const NativeRecordDesc& n_;
    Padding padding_;
    bool packed_;
    ByteOrder order_;
    bool high_bits_;  // parts allocated from the most significant bit
    std::vector<GenericValue>& values_;
    Take& take_;
    std::vector<std::uint64_t>& last_;  // per field: its value, for counts and lengths
    std::vector<std::pair<std::size_t, std::size_t>>& spans_;  // per bytes value: its index and where its bytes start
};

unsigned number_align(const NativeFormDesc& form, const FieldDesc& f, const NativeFieldDesc& n) {
    if (form.align == 0 || n.kind != NativeKind::value || f.type == Type::bytes) return 1;
    return std::min<unsigned>(std::bit_ceil(std::max<std::uint32_t>(n.width, 1)), form.align);
}

}  // namespace

const NativeFormDesc& native_form(const DtdDesc& dtd, std::string_view name) {
    std::string names;
    for (std::uint32_t k = 0; k < dtd.native_form_count; ++k) {
        const NativeFormDesc& form = dtd.native_forms[k];
        if (form.name == name || (name.empty() && dtd.native_form_count == 1)) return form;
        names += (names.empty() ? "" : ", ") + std::string(form.name);
    }
    if (dtd.native_form_count == 0) throw TraceError(ErrorKind::usage, "the DTD " + quote(dtd.name) + " describes no native binary form");
    if (names.empty()) names = "one unnamed form";
    if (name.empty()) throw TraceError(ErrorKind::usage, "the DTD " + quote(dtd.name) + " describes several native binary forms; name one of " + names);
    throw TraceError(ErrorKind::usage, "the DTD " + quote(dtd.name) + " describes no native binary form " + quote(name) + " (it has " + names + ")");
}

// ---- layout ---------------------------------------------------------------------

NativeLayout::NativeLayout(const DtdDesc& dtd, const NativeFormDesc& form) : dtd_(dtd), form_(form) {
    if (form.align == 0) return;
    plans_.reserve(dtd.record_count);
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        const bool laid_out = dtd.records[slot].predefined == Predefined::none && (form.records[slot].held || slot == form.header_slot);
        plans_.push_back(laid_out ? plan(slot) : Plan{});
    }
}

unsigned NativeLayout::align(std::uint32_t slot, std::uint32_t index) const {
    return number_align(form_, dtd_.records[slot].fields[index], form_.records[slot].fields[index]);
}

// Each group's element alignment (its widest member's), the record's, and
// the size of a trailing group's element when every field in it is fixed.
NativeLayout::Plan NativeLayout::plan(std::uint32_t slot) const {
    const RecordDesc& r = dtd_.records[slot];
    const NativeRecordDesc& n = form_.records[slot];
    Plan p;
    p.step_align.assign(r.layout_count, 1);
    const unsigned code_width = slot == form_.header_slot ? 0 : form_.code_width;
    p.align = static_cast<std::uint8_t>(std::clamp<unsigned>(code_width, 1, form_.align));  // the type code has no layout step
    std::vector<std::uint32_t> open;  // the repeat steps around the current step
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        const LayoutStep& s = r.layout[i];
        if (s.op == LayoutStep::repeat) open.push_back(i);
        if (s.op == LayoutStep::end) open.pop_back();
        if (s.op != LayoutStep::field) continue;
        const auto a = static_cast<std::uint8_t>(number_align(form_, r.fields[s.index], n.fields[s.index]));
        p.align = std::max(p.align, a);
        for (std::uint32_t g : open) p.step_align[g] = std::max(p.step_align[g], a);
    }
    if (r.layout_count == 0 || r.layout[r.layout_count - 1].op != LayoutStep::end) return p;
    std::uint32_t first = r.layout_count - 1;
    while (first > 0 && detail::layout_end(r, first) != r.layout_count - 1) --first;
    std::uint64_t size = 0;
    for (std::uint32_t i = first + 1; i + 1 < r.layout_count; ++i) {
        const LayoutStep& s = r.layout[i];
        const FieldDesc& f = r.fields[s.index];
        const NativeFieldDesc& nf = n.fields[s.index];
        if (s.op != LayoutStep::field || (nf.kind == NativeKind::value && f.type == Type::bytes && f.width_from != no_field)) return p;
        if (nf.kind == NativeKind::implied) continue;
        size += pad_to(size, align(slot, s.index)) + nf.width;
    }
    p.trailing_stride = size + pad_to(size, p.step_align[first]);
    return p;
}

// ---- reading ----------------------------------------------------------------------

NativeReader::NativeReader(std::istream& in, const DtdDesc& dtd, const NativeFormDesc& form, std::size_t max_header)
    : in_(in), dtd_(dtd), form_(&form), max_header_(max_header), layout_(dtd, form) {
    start();
}

NativeReader::NativeReader(std::istream& in, const DtdDesc& dtd)
    : in_(in), dtd_(dtd), form_(&detect()), max_header_(std::size_t(1) << 20), layout_(dtd, *form_) {
    start();
}

// The only form, or the first whose magic bytes start the input.
const NativeFormDesc& NativeReader::detect() {
    if (dtd_.native_form_count == 1) return dtd_.native_forms[0];
    if (dtd_.native_form_count == 0) native_form(dtd_);  // throws
    std::string names;
    std::size_t longest = 0;
    for (std::uint32_t k = 0; k < dtd_.native_form_count; ++k) {
        const NativeFormDesc& form = dtd_.native_forms[k];
        names += (k ? ", " : "") + std::string(form.name) + (form.magic_size ? " " + hex_bytes(form.magic, form.magic_size) : "");
        longest = std::max<std::size_t>(longest, form.magic_size);
        while (buffer_.size() < form.magic_size && refill()) {
        }
        if (form.magic_size > 0 && buffer_.size() >= form.magic_size && std::memcmp(buffer_.data(), form.magic, form.magic_size) == 0) return form;
    }
    const std::size_t have = std::min(longest, buffer_.size());
    const std::string starts = have ? hex_bytes(reinterpret_cast<const std::uint8_t*>(buffer_.data()), have) : "with nothing";
    fail(ErrorKind::bad_header, "the file starts with the magic bytes of none of the native forms of " + quote(dtd_.name) + " (" + names + ")" +
                                    (longest ? "; it starts " + starts : ""), 0);
}

void NativeReader::start() {
    std::uint64_t largest = 0;
    comment_slot_ = predefined_slot(dtd_, Predefined::comment);
    for (std::uint32_t slot = 0; slot < dtd_.record_count; ++slot) {
        if (!in_body(slot)) continue;
        largest = std::max(largest, form_->records[slot].code);
        only_slot_ = slot;  // the record of a form without type codes, which holds one
    }
    // A table from code to slot when the codes are small, as they are in real formats.
    if (largest < (1 << 16)) {
        by_code_.assign(static_cast<std::size_t>(largest) + 1, dtd_.record_count);
        for (std::uint32_t slot = 0; slot < dtd_.record_count; ++slot) {
            if (in_body(slot)) {
                by_code_[static_cast<std::size_t>(form_->records[slot].code)] = slot;
            }
        }
    }
    if (form_->magic_size) read_magic();
    if (form_->header_end) read_header();
    header_record_pending_ = form_->header_slot != no_slot;
}

// Whether records after the file's header may be of the record in `slot`.
bool NativeReader::in_body(std::uint32_t slot) const {
    return dtd_.records[slot].predefined == Predefined::none && form_->records[slot].held && slot != form_->header_slot;
}

// Every error has its place, a record at byte 0 too, but a file whose magic
// bytes are wrong is wrong as a whole, and an I/O failure has none.
void NativeReader::fail(ErrorKind kind, const std::string& message, std::uint64_t at) const {
    const bool whole_file = kind == ErrorKind::io || (kind == ErrorKind::bad_header && at == 0);
    throw TraceError(kind, message, at, -1, record_, !whole_file);
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

void NativeReader::read_magic() {
    const std::size_t n = form_->magic_size;
    while (buffer_.size() - pos_ < n && refill()) {
    }
    const std::size_t have = std::min(n, buffer_.size() - pos_);
    const auto* got = reinterpret_cast<const std::uint8_t*>(buffer_.data() + pos_);
    if (have < n || std::memcmp(got, form_->magic, n) != 0) {
        fail(ErrorKind::bad_header, "the file does not start with the magic bytes " + hex_bytes(form_->magic, n) + " of " + form_name(dtd_, *form_) +
                                        " (it starts " + (have ? hex_bytes(got, have) : "with nothing") + ")", 0);
    }
    take(n);
}

// The lines up to the end line, each with its "\n", kept for the first record.
void NativeReader::read_header() {
    const std::string_view end = form_->header_end;
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
    if (header_record_pending_) {
        header_record_pending_ = false;
        out.slot = form_->header_slot;
    } else {
        if (pos_ == buffer_.size() && !refill()) return false;
        out.slot = form_->code_width == 0 ? only_slot_ : read_code(start);
    }
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
        void skip(std::uint64_t n) {
            if (n) reader.take(static_cast<std::size_t>(n));
        }
        std::size_t text_length(std::size_t at, std::size_t width) const {
            const void* nul = std::memchr(reader.bytes_.data() + at, 0, width);
            return nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - (reader.bytes_.data() + at)) : width;
        }
        void drop_after(std::size_t n) { reader.bytes_.resize(n); }
        [[noreturn]] void fail(const std::string& message) { reader.fail(ErrorKind::bad_value, message, reader.offset_); }
    } take{*this, start};
    FieldReader<Take> fields(r, form_->records[out.slot], layout_, out.slot, *form_, out.values, take, last_, spans_);
    walk_layout(r, fields);
    fields.end();
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

// The slot of the record whose type code comes next.
std::uint32_t NativeReader::read_code(std::uint64_t start) {
    const unsigned code_width = form_->code_width;
    if (buffer_.size() - pos_ < code_width && !refill() && buffer_.size() - pos_ < code_width) {
        fail(ErrorKind::truncated, "the file ends inside a record's type code", offset_ + (buffer_.size() - pos_));
    }
    const char* bytes = take(code_width);
    const std::uint64_t code = load_uint(reinterpret_cast<const std::byte*>(bytes), code_width, form_->order);
    const std::uint32_t slot = slot_of(code);
    if (slot == dtd_.record_count) {
        // The bytes as the file holds them too: a code read in the wrong byte order shows as such.
        fail(ErrorKind::unknown_tag, "no record has the type code " + std::to_string(code) + " (bytes " +
                                         hex_bytes(reinterpret_cast<const std::uint8_t*>(bytes), code_width) + ")", start);
    }
    return slot;
}

// The slot of the record with type code `code`, or record_count.
std::uint32_t NativeReader::slot_of(std::uint64_t code) const {
    if (!by_code_.empty()) return code < by_code_.size() ? by_code_[static_cast<std::size_t>(code)] : dtd_.record_count;
    for (std::uint32_t slot = 0; slot < dtd_.record_count; ++slot) {
        if (in_body(slot) && form_->records[slot].code == code) return slot;
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
    // `start`: where the record begins in `out`.
    FieldWriter(const RecordDesc& r, const NativeRecordDesc& n, const NativeLayout& layout, std::uint32_t slot, const NativeFormDesc& form,
                const std::vector<GenericValue>& values, std::string& out, std::size_t start, std::uint64_t offset, std::uint64_t record,
                std::vector<std::uint64_t>& last)
        : r_(r), n_(n), padding_(layout, slot, r), packed_(layout.packed()), order_(form.order), high_bits_(form.high_bits_first), values_(values), out_(out), start_(start),
          offset_(offset), record_(record), last_(last) {
        last_.assign(r.field_count, 0);
    }

    // A group's elements must be as many as its count, already written, says.
    template <typename Element>
    void group(std::uint32_t step, Element&& element) {
        const std::uint32_t count = r_.layout[step].index;
        if (!packed_) zeros(padding_.around_element(step, written()));
        const auto padded = [&] {
            element();
            if (!packed_) zeros(padding_.around_element(step, written()));
        };
        const auto n = walk_written_group(
            r_, step, last_[count], [&] { return next_; },
            [&] { return next_ < values_.size() ? std::int64_t(values_[next_].field) : -1; }, padded);
        if (n != last_[count]) {
            refuse(describe(r_, r_.fields[count]) + " counts " + std::to_string(last_[count]) + " elements, but the record has " +
                   std::to_string(n));
        }
    }

    void field(std::uint32_t index) {
        if (next_ == values_.size() || values_[next_].field != index) refuse("a record's values do not follow its layout");
        const GenericValue& v = values_[next_++];
        const FieldDesc& f = r_.fields[index];
        const NativeFieldDesc& nf = n_.fields[index];
        last_[index] = v.integer;
        if (f.breaks_fixed(v.integer)) refuse(not_fixed_message(r_, f, v.integer));
        if (nf.kind == NativeKind::implied) return;  // the chars field it measures says it
        if (!packed_) zeros(padding_.before_field(index, written()));
        const unsigned w = nf.width;
        if (nf.kind == NativeKind::chars) return chars(f, v, w);
        if (f.type == Type::bytes) return bytes(f, v, w);
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
        if (high_bits_ && f.rules && f.type == Type::unsigned_int) raw = parts_to_high(*f.rules, raw, w);
        std::byte buf[8];
        store_uint(buf, raw, w, order_);
        out_.append(reinterpret_cast<const char*>(buf), w);
    }

    void end() {
        if (!packed_) zeros(padding_.at_end(written()));
    }
    bool done() const { return next_ == values_.size(); }
    [[noreturn]] void refuse(const std::string& why) const { throw TraceError(ErrorKind::bad_value, why, offset_, -1, record_); }

private:
    std::uint64_t written() const { return out_.size() - start_; }
    void zeros(std::uint64_t n) { out_.append(static_cast<std::size_t>(n), '\0'); }

    // A C char array: the text, then NULs; a text with a NUL would read back cut short there.
    void chars(const FieldDesc& f, const GenericValue& v, unsigned width) {
        const std::uint64_t want = last_[static_cast<std::uint32_t>(f.width_from)];
        if (v.bytes.size() != want) refuse(describe(r_, f) + " has " + std::to_string(v.bytes.size()) + " bytes, but its length says " + std::to_string(want));
        if (v.bytes.size() > width) refuse(describe(r_, f) + " has " + std::to_string(v.bytes.size()) + " bytes, more than its " + std::to_string(width) + " chars can hold");
        if (std::find(v.bytes.begin(), v.bytes.end(), std::byte{0}) != v.bytes.end()) refuse(describe(r_, f) + " holds a NUL byte, where its C string would end");
        out_.append(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
        zeros(width - v.bytes.size());
    }

    void bytes(const FieldDesc& f, const GenericValue& v, unsigned width) {
        const std::uint64_t want = f.width_from == no_field ? width : last_[static_cast<std::uint32_t>(f.width_from)];
        if (v.bytes.size() != want) {
            refuse(describe(r_, f) + " has " + std::to_string(v.bytes.size()) + " bytes, but " +
                   (f.width_from == no_field ? "its width is " : "its length says ") + std::to_string(want));
        }
        out_.append(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
    }

    const RecordDesc& r_;
    const NativeRecordDesc& n_;
    Padding padding_;
    bool packed_;
    ByteOrder order_;
    bool high_bits_;  // parts allocated from the most significant bit
    const std::vector<GenericValue>& values_;
    std::string& out_;
    std::size_t start_;
    std::uint64_t offset_;
    std::uint64_t record_;
    std::vector<std::uint64_t>& last_;  // per field: its value, for counts and lengths
    std::size_t next_ = 0;              // the next value to write
};

}  // namespace

NativeWriter::NativeWriter(std::ostream& out, const DtdDesc& dtd, const NativeFormDesc& form)
    : out_(out), dtd_(dtd), form_(form), layout_(dtd, form) {}

void NativeWriter::write(const GenericRecord& record) {
    if (record.slot >= dtd_.record_count) throw TraceError(ErrorKind::usage, "no record type has slot " + std::to_string(record.slot));
    const RecordDesc& r = dtd_.records[record.slot];
    write_magic();
    if (r.predefined == Predefined::comment && form_.header_end && !header_written_ && records_ == 0 && record.values.size() == 2 &&
        record.values[0].integer == record.values[1].bytes.size()) {
        write_header(comment_text(record));
        ++records_;
        return;
    }
    if (r.predefined != Predefined::none) {
        throw TraceError(ErrorKind::usage,
                         "a " + std::string(r.name) + " record, which " + form_name(dtd_, form_) + " cannot hold" +
                             (r.predefined == Predefined::comment && form_.header_end ? " (a comment is its header only as the first record)" : ""),
                         flushed_ + buffer_.size(), -1, records_);
    }
    const NativeRecordDesc& n = form_.records[record.slot];
    const bool is_header = record.slot == form_.header_slot;
    if (form_.header_slot != no_slot && is_header == header_written_) refuse_header(r, is_header);
    if (!n.held && !is_header) {
        throw TraceError(ErrorKind::usage, "record " + quote(r.name) + " has no type code in " + form_name(dtd_, form_) + " ('tag.code = none')",
                         flushed_ + buffer_.size(), -1, records_);
    }
    if (form_.header_end && !header_written_) write_header("");
    // The record goes to the buffer whole or not at all.
    const std::size_t start = buffer_.size();
    if (!is_header) {
        std::byte code[8];
        store_uint(code, n.code, form_.code_width, form_.order);
        buffer_.append(reinterpret_cast<const char*>(code), form_.code_width);
    }
    try {
        FieldWriter fields(r, n, layout_, record.slot, form_, record.values, buffer_, start, flushed_ + start, records_, last_);
        walk_layout(r, fields);
        if (!fields.done()) fields.refuse("a record's values do not follow its layout");
        fields.end();
    } catch (...) {
        buffer_.resize(start);
        throw;
    }
    if (buffer_.size() >= (std::size_t(1) << 16)) flush();
    header_written_ = header_written_ || is_header;
    ++records_;
}

// A form whose file starts with a record takes it first, and once.
void NativeWriter::refuse_header(const RecordDesc& r, bool again) const {
    const std::string header = quote(dtd_.records[form_.header_slot].name);
    throw TraceError(ErrorKind::usage,
                     again ? "a second " + header + " record, which " + form_name(dtd_, form_) + " holds once, as the file's header"
                           : form_name(dtd_, form_) + " starts with a " + header + " record, its header, and this record is a " + quote(r.name),
                     flushed_ + buffer_.size(), -1, records_);
}

void NativeWriter::write_magic() {
    if (magic_written_) return;
    buffer_.append(reinterpret_cast<const char*>(form_.magic), form_.magic_size);
    magic_written_ = true;
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
        throw TraceError(ErrorKind::usage, form_.header_end ? "the header is already written" : form_name(dtd_, form_) + " has no header");
    }
    write_magic();
    write_header(text);
}

void NativeWriter::close() {
    write_magic();
    if (form_.header_slot != no_slot && !header_written_) {
        throw TraceError(ErrorKind::usage, "no " + quote(dtd_.records[form_.header_slot].name) + " record to write as the header of " + form_name(dtd_, form_),
                         flushed_ + buffer_.size(), -1, records_);
    }
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
