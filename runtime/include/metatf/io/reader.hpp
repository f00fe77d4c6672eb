// Reads a Meta-TF trace record by record, in bounded memory.
//
// The reader owns the encoding state of every field and applies metadata,
// section and comment records itself; the code that decodes one record (the
// generated reader, or the generic decoder) calls its field primitives in the
// record's layout order.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatf/container/container.hpp"
#include "metatf/container/split.hpp"
#include "metatf/core/descriptor.hpp"
#include "metatf/core/error.hpp"
#include "metatf/encoding/field_state.hpp"
#include "metatf/encoding/history.hpp"
#include "metatf/encoding/live_pool.hpp"
#include "metatf/encoding/predefined.hpp"
#include "metatf/encoding/segment_state.hpp"
#include "metatf/encoding/string_table.hpp"

namespace metatf::rt {

// What a metadata record changed.
struct MetadataChange {
    std::uint32_t slot = 0;   // the record type changed
    std::uint32_t field = 0;  // its field index
    MetaOp op = MetaOp::width;
    std::uint64_t a = 0, b = 0;
    bool constants_kept = false;  // the record type's plan fixes the same fields to the same values as before
};

// Bounds the work a trace can ask for: its repeated groups may expand to at
// most elements_per_byte elements per byte of records read, plus
// elements_slack (a group that stores nothing costs time, not bytes).
struct ReaderLimits {
    std::uint64_t elements_per_byte = 4;
    std::uint64_t elements_slack = std::uint64_t(1) << 16;
};

class TraceReader {
public:
    // Opens a trace written with `dtd` ("-" is standard input, read as a
    // stream). The trace's DTD must lay out records as `dtd` does (the same
    // fingerprint); its name may differ.
    TraceReader(const std::string& path, const DtdDesc& dtd);
    // Opens a trace for a DTD-driven reader that takes the DTD from the trace:
    // `make_dtd` gets the header and returns the descriptor to read it with.
    template <typename MakeDtd>
    TraceReader(const std::string& path, MakeDtd&& make_dtd) : TraceReader(path) {
        attach(make_dtd(header_));
    }
    ~TraceReader();

    const Header& header() const { return header_; }
    // Starts reading at segment k of a file (0 to header().segments.size(),
    // the last being the end): record_index() is then that segment's first
    // record. Any segment of a version-3 trace; segment 0 of a version-2 one.
    void seek_segment(std::size_t k);
    // Counts the times the encodings were set afresh, at a segment of a
    // version-3 trace or by seek_segment(): code that keeps something derived
    // from them (generated readers' constants) derives it again when it changes.
    std::uint64_t segment_starts() const { return segment_starts_; }
    // For a read of a file that stops where segment `segment` starts
    // (record_index() is its first record): checks that no record of the
    // segments before it was left unread, which a frame counting too few
    // records would cause.
    void check_segment_end(std::size_t segment) const;
    // Whether the trace is read as a stream (a pipe): then header().record_count
    // grows as segments arrive and is final at the end.
    bool streaming() const { return streaming_; }
    void set_limits(const ReaderLimits& limits) { limits_ = limits; }
    // The size of the trace file; for a pipe, the bytes read so far.
    std::uint64_t input_bytes() const { return file_.seekable() ? file_.size() : file_.position(); }
    const DtdDesc& dtd() const { return *dtd_; }

    // Moves to the next record; false at the end of the trace. Then slot()
    // says which record type it is, and the field primitives read its fields.
    // Inline: this and the primitives are the whole per-record cost.
    bool begin_record() {
        if (pos_ == end_ && !next_chunk()) return false;
        // A byte is left here, so the common 1-byte tag needs no bounds check.
        const std::uint64_t tag = tag_width_ == 1 ? std::to_integer<std::uint64_t>(*pos_++) : take(tag_width_);
        if (tag >= tag_table_size_ || tag_table_[tag] < 0) return large_tag(tag);
        slot_ = static_cast<std::uint32_t>(tag_table_[tag]);
        return true;
    }
    std::uint32_t slot() const { return slot_; }
    std::uint64_t record_index() const { return record_index_; }
    int current_section() const { return current_; }
    // Counts the record just read.
    void end_record() {
        if (pools_.pending()) pools_.end_record();
        ++record_index_;
    }

    FieldState* states(std::uint32_t slot) { return states_[slot].data(); }
    // The pools of live values as the current record sees them (live_pool.hpp).
    ReadPools& pools() { return pools_; }
    const ReadPools& pools() const { return pools_; }

    // ---- planned records' codes (RecordPlan): a live count or a predict
    // code stored at `p`, which names a value without reading further when
    // it is answerable (not the escape, no reference past its pool).
    METATF_INLINE bool answerable(const FieldState& s, const std::byte* p) const {
        const std::uint64_t code = load_native<8>(p + s.offset) & s.mask;
        if (s.kind == Interp::predict && code < s.predictors) return true;
        return code != live_escape(s.width) && s.pool != 0 && code - s.predictors < pools_.live(s.pool);
    }
    // The value of an answerable predict code. Immediate (RecordPlan::immediate):
    // a referred value leaves its pool now, not at the record's end.
    template <bool Immediate>
    METATF_INLINE std::uint64_t planned_prediction(FieldState& s, const std::byte* p) {
        const std::uint64_t code = load_native<8>(p + s.offset) & s.mask;
        std::uint64_t value;
        if (code < s.predictors) {
            value = predictions_.named(s.value, code, s.salt, s.history);
        } else if constexpr (Immediate) {
            value = pools_.now(s.pool).take(code - s.predictors);
        } else {
            value = pools_.refer_back_live(s.pool, code - s.predictors);
        }
        predictions_.update(s.value, s.salt, s.history, value);
        return value;
    }

    // ---- the fast path of generated code
    // Whether a record type still has the DTD's initial encodings, in the
    // machine's byte order: then its layout is known when the code is generated.
    bool initial(std::uint32_t slot) const { return initial_[slot] != 0; }
    // The next n bytes of the record, checked once.
    METATF_INLINE const std::byte* fixed(std::size_t n) {
        if (static_cast<std::size_t>(end_ - pos_) < n) overrun(n);
        const std::byte* p = pos_;
        pos_ += n;
        return p;
    }

    // ---- the fast loops of generated code (next() and visit())
    // Generated code reads records of at most `bytes` bytes (tag included)
    // without a length test of its own while pos < Run::limit. Never, in a
    // trace whose tags are wider than a byte and not in the machine's order.
    void set_fast_window(std::size_t bytes);
    // The rest of the current chunk and what decoding it needs, copied out so
    // that a loop over many records keeps them in registers, not in members.
    struct Run {
        const std::byte* pos;      // the next record's tag
        const std::byte* limit;    // while pos < limit, the fast window fits in the chunk
        const std::byte* end;      // the end of the chunk
        const std::int32_t* tags;  // the current section's tag -> slot table, -1 if none
        std::size_t tag_count;
        std::uint64_t fast_tags;   // bit `tag` (below 64): see fast()
        std::uint64_t planned_tags;  // bit `tag` (below 64): see planned()
        std::uint64_t variant_tags;  // bit `tag` (below 64): see variant()

        // Whether the record at pos (before limit), whose tag is `tag` (below 64), can be
        // read in the DTD's initial layout: the tag names a user record of the
        // current section that metadata has not changed. The fast loops
        // find the record by the tag itself (typed.hpp's detail::by_tag), so
        // this is a single mask test.
        bool fast(std::uint64_t tag) const { return (fast_tags >> tag & 1) != 0; }
        // Whether the record at pos (before limit), whose tag is `tag` (below 64), can be
        // read with its RecordPlan: the tag names a user record of the current section
        // whose plan is usable and fits the fast window with the 8 bytes of slack
        // of plan_read()'s wide loads. (Generated code tests fast() first.)
        bool planned(std::uint64_t tag) const { return (planned_tags >> tag & 1) != 0; }
        // Whether that planned record's encodings are one of its DTD's
        // variants now (TraceReader::variant() says which).
        bool variant(std::uint64_t tag) const { return (variant_tags >> tag & 1) != 0; }
        // The slot of `tag` in the current section, -1 if none (or too large for the table).
        std::int64_t slot_of(std::uint64_t tag) const { return tag < tag_count ? tags[tag] : -1; }
    };
    Run run() const { return {pos_, limit_, end_, tag_table_, tag_table_size_, fast_tags_, planned_tags_, variant_tags_}; }
    // A record type whose layout is fixed now (see RecordPlan): a record of
    // it at run.pos is read with plan_read() when its size and the 8 bytes of
    // slack of plan_read()'s wide loads fit in the chunk.
    const RecordPlan& plan(std::uint32_t slot) const { return plans_[slot]; }
    // The variant (RecordDesc::variants) a record type's encodings are now,
    // if its plan is usable and has no pools; else -1.
    int variant(std::uint32_t slot) const { return variants_[slot]; }
    // Begins the record at run.pos, whose tag the caller has looked up with
    // run.slot_of(): `slot`. The field primitives then read its fields.
    void begin_record(const Run& run, std::uint32_t slot) {
        pos_ = run.pos + tag_width_;
        slot_ = slot;
    }
    // Hands back how far a loop over run() got: `records` whole records up to `pos`.
    void advance(const std::byte* pos, std::uint64_t records) {
        pos_ = pos;
        record_index_ += records;
    }

    // The strings intern field `s` of record type `slot` has named in this segment (StringTable).
    StringTable& table_of(std::uint32_t slot, const FieldState& s);
    // What a run of records whose sectionStride fields read `section`
    // (RecordPlan::strided) may take from it: the chunk loaded, with `at` set
    // to the cursor's place in it (at or past its end when the next element
    // is in a later chunk); empty where a field read would fail or must load
    // a chunk first. taken() then moves the cursor past what the run took.
    std::span<const std::byte> strided_chunk(std::uint8_t section, std::uint64_t& at) const;
    void taken(std::uint8_t section, std::uint64_t bytes);

    // ---- field primitives, in layout order
    METATF_INLINE std::uint64_t read_int(FieldState& s) {
        if (s.shared) [[unlikely]] return read_shared(s);
        return read_own(s);
    }
    double read_float(FieldState& s);
    // A bytes field: `length` is its width when the width comes from another field.
    std::span<const std::byte> read_bytes(FieldState& s, std::uint64_t length);
    // Refuses value `value` of field `s`, which the DTD fixes otherwise, stored at `at` in the chunk.
    [[noreturn]] void refuse_fixed(const FieldState& s, std::uint64_t value, const std::byte* at);
    // Checks a repeat count against what the record can still hold.
    std::uint64_t check_count(std::uint64_t count, const FieldState& count_field);

    // ---- the predefined records, decoded and applied by the runtime
    std::string_view read_comment();
    std::uint8_t read_section();
    MetadataChange read_metadata();

    // Decodes, with the DTD's initial encodings, the record at `offset` of a
    // table section: the target of a sectionOffset field. `decode` is called
    // with this reader positioned on that record and returns what it made.
    template <typename Decode>
    auto table_record(std::uint8_t section, std::uint64_t offset, Decode&& decode);

    [[noreturn]] void fail(ErrorKind kind, const std::string& message) const;

private:
    struct Stream;
    // The section as a table (from a file: whole; from a pipe: what has arrived).
    Stream& table_stream(std::uint8_t section);
    void append_table(Stream& s, std::uint8_t section, std::span<const std::byte> bytes);
    explicit TraceReader(const std::string& path);
    METATF_INLINE std::uint64_t decode_int(FieldState& s) {
        switch (s.kind) {
            case Interp::none: {
                const std::uint64_t raw = take(s.width);
                return (s.desc->type == Type::signed_int ? sign_extend(raw, s.width) : raw) * s.unit;
            }
            case Interp::default_value: return s.value;
            case Interp::base_offset: return s.value + sign_extend(take(s.width), s.width) * s.unit;
            case Interp::delta: return s.previous += sign_extend(take(s.width), s.width) * s.unit;
            case Interp::stride: return s.previous += static_cast<std::uint64_t>(s.stride);
            case Interp::section_offset: return take(s.width);
            case Interp::section_stride: return strided(s);
            case Interp::live: return live(s);
            case Interp::predict: return predicted(s);
            case Interp::intern: return interned(s);
        }
        return 0;
    }
    std::uint64_t read_shared(FieldState& s);
    // read_int() of a field's own encoding.
    METATF_INLINE std::uint64_t read_own(FieldState& s) {
        const std::uint64_t value = decode_int(s);
        if (s.feed != 0) [[unlikely]] pools_.feed(s.feed, value);
        if (s.desc->breaks_fixed(value)) [[unlikely]] not_fixed(s, value);
        return value;
    }
    std::uint64_t live(FieldState& s);
    std::uint64_t predicted(FieldState& s);
    std::uint64_t interned(FieldState& s);
    std::span<const std::byte> named_string(const FieldState& length);
    FieldState& record_field(std::int32_t field);
    // Counts `n` more elements against the budget (ReaderLimits), or fails: "`what` more than N `things`, ...".
    void charge(std::uint64_t n, std::string_view what, std::string_view things);
    std::uint64_t referred(const FieldState& s, std::uint64_t back, const std::byte* at);
    std::uint64_t varint();
    void attach(const DtdDesc& dtd);
    void check_dtd(const DtdDesc& dtd) const;
    bool load_next_chunk(Stream& s);
    std::vector<std::byte> state_block(const Chunk& c);
    void start_segment(std::span<const std::byte> block, const Chunk& c);
    void apply_packed_state(std::span<const std::byte> frame, std::uint64_t at);
    void apply_state(const StateEntry& e, std::uint64_t at);
    void reset_encodings();
    void decompress_ahead(Stream& s, ByteBuffer room);
    void load_chunk(const Chunk& c, ByteBuffer& out);
    void decode_chunk(const Chunk& c, std::span<const std::byte> stored, ByteBuffer& out) const;
    bool pull_segment();
    bool read_next_segment();
    Stream& stream_of(const Chunk& c) const;
    void check_segment_start(const Chunk& c, const Stream& s) const;
    std::uint64_t element_budget() const;
    bool next_chunk();
    bool large_tag(std::uint64_t tag);
    void enter_section(int section);
    char native_order() const;
    METATF_INLINE std::uint64_t take(unsigned width) {
        if (static_cast<std::size_t>(end_ - pos_) < width) overrun(width);
        const std::uint64_t v = load_uint(pos_, width, header_.order);
        pos_ += width;
        return v;
    }
    [[noreturn]] void overrun(std::uint64_t wanted) const;
    [[noreturn]] void not_fixed(const FieldState& s, std::uint64_t value);
    [[noreturn]] void fail_at(const std::byte* at, ErrorKind kind, const std::string& message);
    std::uint64_t strided(FieldState& s);
    std::uint64_t file_offset() const;
    void finish();
    void enter_table(std::uint8_t section, std::uint64_t offset);
    void leave_table();

    InputFile file_;
    Header header_;
    bool streaming_ = false, stream_ended_ = false;
    std::uint64_t next_segment_ = 0;      // a pipe: the offset of the next frame
    std::vector<Segment> segments_seen_;  // a pipe: checked against the end frame
    ByteBuffer packed_;                   // a file: the compressed chunk being decoded
    std::uint64_t pending_bytes_ = 0;     // a pipe: bytes of chunks queued in streams
    ReaderLimits limits_;
    std::uint64_t bytes_loaded_ = 0, elements_ = 0;  // the work budget (see ReaderLimits)
    std::uint64_t segment_starts_ = 0;               // see segment_starts()
    std::uint64_t field_total_ = 0;                  // the DTD's fields, over all record types
    Chunk arrived_start_;                            // a pipe: the chunk that starts the segment being begun
    std::unique_ptr<DtdWithSections> split_dtd_;  // the DTD and the sections its trace's writer added
    const DtdDesc* dtd_ = nullptr;
    std::vector<std::vector<FieldState>> states_;  // per slot
    ReadPools pools_;
    PredictTables predictions_;  // the context tables of predict fields
    Histories histories_;        // the previous values of fields with a shared history
    StringTables strings_;       // the strings of intern fields
    std::vector<char> initial_;                    // per slot: see initial()
    void fill_initial();
    std::vector<RecordPlan> plans_;                // per slot: see plan()
    std::uint64_t fast_tags_ = 0;                  // for run(): tags below 64 whose slot is initial here
    std::uint64_t planned_tags_ = 0;               // for run(): see Run::planned()
    std::uint64_t variant_tags_ = 0;               // for run(): see Run::variant()
    std::vector<int> variants_;                    // per slot: see variant()
    std::vector<VariantMatch> matches_;            // per slot: what variants_ is kept from
    void set_plan(std::uint32_t slot);
    void widen_window(const RecordPlan& plan);
    void reset_initial();  // every slot initial if the byte order is the machine's
    void update_fast_tags();
    // Inline: every metadata record calls it.
    void update_fast_tag(std::size_t tag) {
        const std::uint64_t bit = std::uint64_t(1) << tag;
        fast_tags_ &= ~bit;
        planned_tags_ &= ~bit;
        variant_tags_ &= ~bit;
        const std::int32_t slot = tag_table_[tag];
        if (slot < 0 || dtd_->records[slot].predefined != Predefined::none) return;
        const auto s = static_cast<std::size_t>(slot);
        const RecordPlan& plan = plans_[s];
        if (initial_[s]) fast_tags_ |= bit;
        if (!plan.usable || tag_width_ + plan.size + 8 > fast_window_) return;
        planned_tags_ |= bit;
        if (variants_[s] >= 0) variant_tags_ |= bit;
    }
    std::int32_t slot_for(int section, std::uint64_t tag) const;
    bool set_width_quickly(MetadataChange& m);
    void changed(std::uint32_t slot, std::uint32_t field);
    std::vector<std::vector<std::int32_t>> slot_of_tag_;  // per section: tag -> slot, -1 if none
    std::vector<std::map<std::uint64_t, std::int32_t>> large_tags_;  // per section: tags past the table
    std::vector<std::unique_ptr<Stream>> streams_;         // per section number
    int current_ = 0;
    Stream* stream_ = nullptr;        // streams_[current_]
    unsigned tag_width_ = 1;
    const std::int32_t* tag_table_ = nullptr;  // slot_of_tag_[current_]
    std::size_t tag_table_size_ = 0;
    const std::byte* pos_ = nullptr;  // the current record's next byte
    const std::byte* end_ = nullptr;  // the end of the chunk holding it
    const std::byte* limit_ = nullptr;  // see Run::limit
    std::size_t fast_window_ = 0;
    void set_end(const std::byte* end);
    std::uint32_t slot_ = 0;
    std::uint64_t record_index_ = 0;
    bool ended_ = false;
    // Saved while a table record is decoded.
    struct Saved;
    std::unique_ptr<Saved> saved_;
};

template <typename Decode>
auto TraceReader::table_record(std::uint8_t section, std::uint64_t offset, Decode&& decode) {
    enter_table(section, offset);
    struct Leave {
        TraceReader* r;
        ~Leave() { r->leave_table(); }
    } leave{this};
    return decode(*this);
}

}  // namespace metatf::rt
