// Writes a Meta-TF trace of any length: records go to per-section buffers
// that are flushed together as a segment, and close() writes the end frame.
// A file is written under a temporary name until then, so a writer that dies
// leaves no file that looks complete; a pipe or FIFO gets the trace as a
// stream, which readers refuse as incomplete without its end frame.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatf/container/codec.hpp"
#include "metatf/container/container.hpp"
#include "metatf/container/output.hpp"
#include "metatf/container/split.hpp"
#include "metatf/core/byte_buffer.hpp"
#include "metatf/core/descriptor.hpp"
#include "metatf/core/error.hpp"
#include "metatf/encoding/field_state.hpp"
#include "metatf/encoding/history.hpp"
#include "metatf/encoding/live_pool.hpp"
#include "metatf/encoding/predefined.hpp"
#include "metatf/encoding/string_table.hpp"

namespace metatf::rt {

struct WriterOptions {
    Class cls = Class::bits64;
    ByteOrder order = ByteOrder::little;
    std::size_t chunk_bytes = std::size_t(1) << 20;  // a section's buffer is flushed past this size
    OutputOptions output;  // whether an existing file may be replaced, and which files it may not be
    // 5 (the default) is 4 with the DTD text compressed where the chunks
    // are (compress), and 4 when they are not; 4 is 3 with a checksum over
    // every segment's bytes and over the header, which readers verify; 3 streams segments that each
    // decode alone; 2 streams segments that
    // depend on the ones before (and keeps live values from one to the next);
    // 1 is the oldest layout (index at the end), for older readers; it needs a file.
    std::uint8_t version = container_version;
    // A value its field cannot hold under its current encoding is not
    // refused: metadata before its record widens the field to the bytes
    // the value needs (under none, baseOffset, delta, sectionOffset), or
    // turns a default the value differs from, or a stride it breaks, into
    // none. The new encoding stays for the records that follow. strict: such
    // a value is a TraceError instead, as a fixed layout wants. Generated
    // writers and encode_generic() (and so mtf) do this alike.
    bool strict = false;
    // N > 0 makes widths follow the data in generated writers: a field is
    // also narrowed to the widest of its last N values once N values in a
    // row fit in fewer bytes (the writer checks the integer fields of every
    // record for this). A metadata record costs about as much as N/2 to N
    // bytes of narrower fields, so 8-32 suits most traces. 0: widths only
    // grow. Ignored when strict.
    std::uint32_t narrow_after = 0;
    // N > 0: generated writers choose each field's encoding from the data,
    // N records at a time (AutoEncoder, auto_encoder.hpp; mtf uses 16384):
    // records are held back until their window is full or the writer closes,
    // so write() returns 0, not the record's offset, and a DTD with tables
    // (sectionOffset fields, which need the offsets) is refused. 0: off.
    // Not with strict.
    std::size_t auto_window = 0;
    // 1-22: every chunk is compressed with zstd at this level, and stored as
    // it is where that would not make it smaller. 0 (the default): chunks
    // are stored. Needs version 2 or later.
    int compress = 0;
    // With compress: segments are compressed at this stronger level until
    // `bytes` bytes of records have been, then at `compress`. A short trace
    // gets the stronger level's size, and the extra time stays bounded
    // whatever the trace's length (the heap tracer's default). Level 0: off.
    struct First {
        int level = 0;
        std::uint64_t bytes = 0;
    } compress_first{};
    // Split streams: each field named "record.field" (its path, as in the
    // DTD) stores its values in a value section of its own, which the writer
    // adds to the embedded DTD; a sectionStride metadata record before the
    // first record routes the field there (docs/trace-format.md, 5.2). An
    // entry "a.x+b.y" gives its fields one section. The trace keeps the
    // DTD's fingerprint, so the DTD's readers read it.
    std::vector<std::string> split{};
    // Segments (versions 2 and later) are compressed and written on a
    // thread of the writer's own, one segment at a time while the caller
    // encodes the next: compression costs the caller about nothing where a
    // core is free. At most two segments' bytes wait. An output error then
    // surfaces at a later write() or at close(). thread_start (may be null)
    // runs first on that thread: a preloaded tracer marks it as its own.
    bool background = false;
    void (*thread_start)() = nullptr;
};

namespace detail {
class SegmentThread;
}

class TraceWriter {
public:
    // `path` "-" is standard output. The output rules are OutputFile's
    // (output.hpp): an existing file is replaced only with options.output.replace.
    TraceWriter(const std::string& path, const DtdDesc& dtd, WriterOptions options = {});
    // Without close(), removes the temporary file: nothing is left at `path`.
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    const DtdDesc& dtd() const { return dtd_; }
    FieldState* states(std::uint32_t slot) { return states_[slot].data(); }

    // ---- the fast path of generated code (see TraceReader::initial())
    bool initial(std::uint32_t slot) const { return initial_[slot] != 0; }
    // Begins a record of `slot`, which is initial() or in a variant(), and returns room for its n
    // bytes after the tag, written in one piece: one capacity test for the
    // whole record. `offset` gets the record's offset within its section.
    // TagWidth is the DTD's tag width.
    template <unsigned TagWidth>
    METATF_INLINE std::byte* reserve_record(std::uint32_t slot, std::size_t n, std::uint64_t& offset) {
        const RecordDesc& r = open_record(slot);
        offset = flushed_ + buffer_->size();
        std::byte* p = buffer_->extend(TagWidth + n);
        store_native<TagWidth>(p, r.tag);  // initial() and variant() imply the machine's byte order
        return p + TagWidth;
    }
    // A changed record type whose layout is fixed (see RecordPlan): like
    // reserve_record(), with 8 bytes of slack for the planned path's 8-byte stores.
    const RecordPlan& plan(std::uint32_t slot) const { return plans_[slot]; }
    // The variant (RecordDesc::variants) a record type's encodings are now,
    // written like an initial record with reserve_record(); -1 for none.
    int variant(std::uint32_t slot) const { return variants_[slot]; }
    template <unsigned TagWidth>
    METATF_INLINE std::byte* reserve_planned(std::uint32_t slot, std::size_t n, std::uint64_t& offset) {
        const RecordDesc& r = open_record(slot);
        offset = flushed_ + buffer_->size();
        std::byte* p = buffer_->extend(TagWidth + n, 8);
        store_native<TagWidth>(p, r.tag);
        return p + TagWidth;
    }
    int current_section() const { return current_; }
    std::uint64_t record_count() const { return record_count_; }

    // ---- one record: begin, its fields in layout order, end
    // Returns the record's byte offset within its section (what a sectionOffset field stores).
    std::uint64_t begin_record(std::uint32_t slot) {
        const RecordDesc& r = open_record(slot);
        const std::uint64_t offset = flushed_ + buffer_->size();
        append_raw(r.tag, dtd_.tag_width);
        return offset;
    }
    METATF_INLINE void write_int(FieldState& s, std::uint64_t value) {
        if (s.shared) [[unlikely]] return write_shared(s, value);
        write_own(s, value);
    }
    void write_float(FieldState& s, double value);
    // A bytes field; its width is fixed, or `data.size()` must equal the length field's value.
    void write_bytes(FieldState& s, std::span<const std::byte> data, std::uint64_t length);
    // A repeated group: the count field's value must match the elements given.
    void check_count(const FieldState& count_field, std::uint64_t count, std::size_t elements);
    void end_record() {
        close_record();
        if (buffer_->size() >= options_.chunk_bytes || segment_due_) flush(static_cast<std::uint8_t>(current_));
    }

    // ---- the predefined records
    void comment(std::string_view text);
    void section(std::uint8_t number);
    // Changes a field's width or interpretation from here on, and records the change.
    void metadata(std::uint32_t slot, std::uint32_t field, MetaOp op, std::uint64_t a = 0, std::uint64_t b = 0);
    const WriterOptions& options() const { return options_; }
    // The shared histories as the next record sees them (history.hpp).
    const Histories& histories() const { return histories_; }
    // The strings an intern field's table holds now (string_table.hpp), or nullptr for none.
    const StringTable* strings(std::uint32_t slot, std::uint32_t field) const { return strings_.find(slot, field); }
    // The pools of live values as the next record sees them (live_pool.hpp).
    const LivePools& pools() const { return pools_; }

    // Flushes everything, writes the section index and header, and renames
    // the file into place. The writer cannot be used afterwards.
    void close();

private:
    void compress_dtd_text();
    void compress_state(std::vector<std::byte>& state);
    struct SectionOut;
    bool set_width_quickly(std::uint32_t slot, std::uint32_t field, std::uint64_t w);
    void changed_by(std::uint32_t slot, std::uint32_t field, MetaOp op, std::uint64_t a, std::uint64_t b, std::uint32_t old_width);
    // write_int() of a field's own encoding.
    METATF_INLINE void write_own(FieldState& s, std::uint64_t value) {
        if (s.desc->breaks_fixed(value)) [[unlikely]] not_fixed(s, value);
        switch (s.kind) {
            case Interp::none: put_units(s, value, value, s.desc->type == Type::signed_int); break;
            case Interp::default_value:
                if (value != s.value) reject(s, value, "differs from the field's default");
                break;
            case Interp::base_offset: put_units(s, value, value - s.value, true); break;
            case Interp::delta:
                put_units(s, value, value - s.previous, true);
                s.previous = value;
                break;
            case Interp::stride:
                if (value != s.previous + static_cast<std::uint64_t>(s.stride)) reject(s, value, "breaks the stride");
                s.previous = value;
                break;
            case Interp::section_offset: put(s, value, fits_unsigned(value, s.width)); break;
            case Interp::section_stride: put_strided(s, value); break;
            case Interp::live: put_live(s, value); break;
            case Interp::predict: put_predicted(s, value); break;
            case Interp::intern:
                // The length waits for its string (write_bytes()), which decides what the two store.
                if (!fits_unsigned(value, s.width)) reject(s, value, "does not fit in " + std::to_string(s.width) + " bytes");
                s.previous = value;
                break;
        }
        if (s.feed != 0) [[unlikely]] pools_.feed(s.feed, value);
    }
    // write_int() of a field with a shared history or a key of one (Histories).
    void write_shared(FieldState& s, std::uint64_t value);
    // Checks that a record of `slot` may begin here, and begins it.
    METATF_INLINE const RecordDesc& open_record(std::uint32_t slot) {
        const RecordDesc& r = dtd_.records[slot];
        if (closed_ || failed_ || (r.section != 0 && r.section != current_)) refuse_record(r);
        in_record_ = true;
        slot_ = slot;
        return r;
    }
    // Stores `difference` (the value, or what it adds to a base or to the
    // previous value) in the field's units; `sign`: whether it is signed.
    METATF_INLINE void put_units(FieldState& s, std::uint64_t value, std::uint64_t difference, bool sign) {
        if (s.unit == 1) [[likely]] return put(s, difference, sign ? fits_signed(difference, s.width) : fits_unsigned(difference, s.width));
        put_scaled(s, value, difference, sign);
    }
    void put(FieldState& s, std::uint64_t raw, bool fits) {
        if (!fits) reject(s, raw, "does not fit in " + std::to_string(s.width) + " bytes");
        append_raw(raw, s.width);
    }
    void append_raw(std::uint64_t value, unsigned width) { store_uint(buffer_->extend(width), value, width, options_.order); }
    [[noreturn]] void refuse_record(const RecordDesc& r);
    void put_scaled(FieldState& s, std::uint64_t value, std::uint64_t difference, bool sign);
    void put_strided(FieldState& s, std::uint64_t value);
    void put_live(FieldState& s, std::uint64_t value);
    void put_predicted(FieldState& s, std::uint64_t value);
    void put_interned(FieldState& length, std::span<const std::byte> data);
    [[noreturn]] void reject(const FieldState& s, std::uint64_t value, const std::string& why);
    [[noreturn]] void not_fixed(const FieldState& s, std::uint64_t value);
    [[noreturn]] void fail(ErrorKind kind, const std::string& message);
    void check_usable() const;
    // end_record() without its flush: a metadata record never ends a segment,
    // because the record it announces was fitted to the state before it.
    void close_record() {
        if (pools_.pending()) pools_.end_record();
        in_record_ = false;
        ++record_count_;
    }
    void flush(std::uint8_t section);
    void flush_segment();
    void write_segment(Segment seg, std::vector<std::span<const std::byte>> raw);
    void finish_segments();
    void start_keyframe();
    void emit(const std::vector<std::byte>& bytes) { emit(bytes.data(), bytes.size()); }
    void emit(const std::byte* data, std::size_t n);

    std::unique_ptr<OutputFile> out_;
    std::unique_ptr<Compressor> compressor_;             // with WriterOptions::compress
    std::unique_ptr<Compressor> first_compressor_;       // with WriterOptions::compress_first
    std::uint64_t first_bytes_left_ = 0;                 // of records it compresses yet
    std::vector<std::vector<std::byte>> packed_;         // a segment's compressed chunks, by chunk
    std::vector<std::byte> packed_state_;                // its state block, compressed (version 6)
    std::vector<Segment> segments_;                      // versions 2 and later: the segments written
    std::unique_ptr<detail::SegmentThread> thread_;      // WriterOptions::background: writes segments
    std::vector<std::byte> next_state_;                  // version 3: the next segment's state block
    std::uint64_t segment_first_record_ = 0;             // versions 2 and later: the first record not yet in a segment
    std::uint8_t segment_section_ = 0;                   // versions 2 and later: the section current at that record
    std::vector<SplitField> splits_;                     // WriterOptions::split, resolved
    std::unique_ptr<DtdWithSections> split_dtd_;         // with splits: the DTD and its added sections
    const DtdDesc& dtd_;
    WriterOptions options_;
    Header header_;
    std::vector<std::vector<FieldState>> states_;
    LivePools pools_;
    PredictTables predictions_;  // the context tables of predict fields
    Histories histories_;        // the previous values of fields with a shared history
    StringTables strings_;       // the strings of intern fields
    std::uint32_t slot_ = 0;     // the record begun last
    std::vector<char> initial_;  // per slot: see initial()
    std::vector<RecordPlan> plans_;  // per slot: see plan()
    std::vector<int> variants_;      // per slot: see variant()
    std::vector<VariantMatch> matches_;  // per slot: what variants_ is kept from
    std::uint32_t predefined_slot_[4] = {};  // by Predefined: the slots of comment, section, metadata
    std::vector<std::unique_ptr<SectionOut>> sections_;  // per section number
    ByteBuffer* buffer_ = nullptr;                       // the current section's buffer
    std::uint64_t flushed_ = 0;                          // the current section's bytes already in chunks
    int current_ = 0;
    std::uint64_t record_count_ = 0;
    bool in_record_ = false, failed_ = false, closed_ = false;
    bool segment_due_ = false;  // versions 2 and later: a value section's buffer is full
};

// Views text as bytes, for bytes fields.
inline std::span<const std::byte> as_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }
// And back: a bytes field as text (generated structs' NAME_text() accessors).
inline std::string_view as_text(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

}  // namespace metatf::rt
