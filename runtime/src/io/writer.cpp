#include "metatf/io/writer.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>

#include "metatf/container/checksum.hpp"
#include "metatf/encoding/segment_state.hpp"
#include "../container/segment_thread.hpp"

namespace metatf::rt {

struct TraceWriter::SectionOut {
    enum class Mode { unused, records, values } mode = Mode::unused;
    ByteBuffer buffer;
    std::uint64_t flushed = 0;  // bytes of the section already in chunks
    std::uint64_t cursor = 0;   // values: section offset of the next element
};

// Version 5 keeps the DTD text compressed where the chunks are; without
// that, the trace is version 4, the same layout, which more readers take.
void TraceWriter::compress_dtd_text() {
    std::vector<std::byte> frame;
    if (compressor_ && compressor_->compress(std::as_bytes(std::span(header_.dtd_text.data(), header_.dtd_text.size())), frame)) {
        header_.dtd_stored.assign(reinterpret_cast<const char*>(frame.data()), frame.size());
    } else {
        header_.version = 4;
    }
}

// Version 6: a state block as one zstd frame where that is smaller. Entries
// start with 'F' or 'C', never with the frame's magic, so readers tell them apart.
void TraceWriter::compress_state(std::vector<std::byte>& state) {
    if (!state.empty() && compressor_->compress(state, packed_state_)) state.swap(packed_state_);
}

TraceWriter::TraceWriter(const std::string& path, const DtdDesc& dtd, WriterOptions options)
    : splits_(split_fields(dtd, options.split)),
      split_dtd_(splits_.empty() ? nullptr : std::make_unique<DtdWithSections>(dtd, sections_of(splits_), 0)),
      dtd_(split_dtd_ ? split_dtd_->desc() : dtd),
      options_(std::move(options)) {
    header_.cls = options_.cls;
    header_.order = options_.order;
    header_.version = options_.version;
    header_.dtd_name = dtd.name;
    header_.dtd_text = dtd.text;
    if (!splits_.empty()) header_.dtd_text += added_sections_text(sections_of(splits_));
    header_.dtd_fingerprint = fingerprint(dtd);  // the DTD's own: its readers read the trace
    if (header_.dtd_name.size() > 255) throw TraceError(ErrorKind::usage, "the DTD name is longer than 255 bytes");
    // A trace that no reader would open is not written.
    if (header_.dtd_text.size() > max_dtd_text) {
        throw TraceError(ErrorKind::usage, "the DTD text is " + std::to_string(header_.dtd_text.size()) + " bytes long, more than the " +
                                               std::to_string(max_dtd_text) + " (16 MiB) a reader takes");
    }
    if (options_.version < 1 || options_.version > container_version) {
        throw TraceError(ErrorKind::usage, "container version " + std::to_string(options_.version) + " cannot be written");
    }
    for (const int level : {options_.compress, options_.compress_first.level}) {
        if (level < 0 || level > max_compress_level) {
            throw TraceError(ErrorKind::usage, "compression level " + std::to_string(level) + " is not 0-" + std::to_string(max_compress_level));
        }
    }
    if (options_.compress != 0 && options_.version == 1) {
        throw TraceError(ErrorKind::usage, "a version-1 trace cannot hold compressed chunks");
    }
    if (options_.background && options_.version == 1) {
        throw TraceError(ErrorKind::usage, "a version-1 trace has no segments to write in the background");
    }
    if (options_.auto_window != 0 && table_section(dtd, -1)) {
        throw TraceError(ErrorKind::usage, "auto_window holds records back, so write() cannot return the offsets that this DTD's sectionOffset fields need");
    }
    if (options_.compress != 0) compressor_ = std::make_unique<Compressor>(options_.compress);
    if (compressor_ && options_.compress_first.level != 0) {
        first_compressor_ = std::make_unique<Compressor>(options_.compress_first.level);
        first_bytes_left_ = options_.compress_first.bytes;
    }
    if (header_.version >= 5) compress_dtd_text();
    try {
        out_ = std::make_unique<OutputFile>(path, options_.output);
    } catch (const OutputError& e) {
        throw TraceError(ErrorKind::output, e.what());
    }
    if (options_.version == 1 && out_->streaming()) {
        throw TraceError(ErrorKind::usage, "a version-1 trace is finished by rewriting its start; write it to a file");
    }
    const auto prologue = encode_prologue(header_);  // version 1: counts are patched in close()
    emit(prologue);
    header_.data_start = prologue.size();
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const RecordDesc& r = dtd.records[i];
        if (r.predefined != Predefined::none) predefined_slot_[static_cast<int>(r.predefined)] = i;
        states_.emplace_back();
        for (std::uint32_t f = 0; f < r.field_count; ++f) states_.back().push_back(FieldState::initial(r.fields[f], predict_salt(r.tag, f)));
    }
    const bool native = (options_.order == ByteOrder::little) == (std::endian::native == std::endian::little);
    // A record with a shared history is written field by field (Histories).
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) initial_.push_back(native && !has_history(dtd.records[i]));
    histories_.reset(history_count(dtd));
    strings_.reset(dtd.record_count);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) plans_.push_back(make_plan(dtd.records[i], states_[i].data(), options_.order == ByteOrder::little));
    variants_.resize(dtd.record_count);
    matches_.resize(dtd.record_count);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        matches_[i].reset(dtd.records[i], states_[i].data());
        variants_[i] = matches_[i].variant(plans_[i]);
    }
    sections_.resize(256);
    sections_[0] = std::make_unique<SectionOut>();
    for (std::uint32_t i = 0; i < dtd_.section_count; ++i) sections_[dtd_.sections[i].number] = std::make_unique<SectionOut>();
    sections_[0]->mode = SectionOut::Mode::records;
    buffer_ = &sections_[0]->buffer;
    for (const SplitField& f : splits_) {
        // An element is as wide as the field's restore width, which a field that stores nothing may lack.
        if (states_[f.slot][f.field].restore == 0) metadata(f.slot, f.field, MetaOp::width, 8);
        // The field's interpretation goes with it where it can (a stream of time differences).
        const Interp kind = states_[f.slot][f.field].kind;
        const bool keeps = kind == Interp::none || kind == Interp::base_offset || kind == Interp::delta;
        metadata(f.slot, f.field, keeps ? MetaOp::split : MetaOp::section_stride, f.section, 1);
    }
}

// thread_ goes first: it reads header_ and writes out_. The OutputFile
// removes its temporary file unless committed.
TraceWriter::~TraceWriter() { thread_.reset(); }

// Waits until thread_ has written every segment handed to it.
void TraceWriter::finish_segments() {
    if (!thread_) return;
    try {
        thread_->finish();
    } catch (...) {
        failed_ = true;
        throw;
    }
}

void TraceWriter::emit(const std::byte* data, std::size_t n) {
    try {
        out_->write(data, n);
    } catch (const OutputError& e) {
        failed_ = true;
        throw TraceError(ErrorKind::output, e.what(), out_->position(), current_, record_count_);
    }
}

void TraceWriter::fail(ErrorKind kind, const std::string& message) {
    throw TraceError(kind, message, out_->position() + buffer_->size(), current_, record_count_);
}

void TraceWriter::check_usable() const {
    if (closed_ || failed_) {
        throw TraceError(ErrorKind::usage, closed_ ? "the trace is closed" : "an earlier write failed; the trace cannot be completed",
                         0, current_, record_count_);
    }
}

void TraceWriter::reject(const FieldState& s, std::uint64_t value, const std::string& why) {
    failed_ = true;
    const std::string shown = s.desc->type == Type::signed_int ? std::to_string(static_cast<std::int64_t>(value))
                                                               : std::to_string(value);
    fail(ErrorKind::bad_value, "value " + shown + " of field '" + s.desc->path + "' (" + std::string(name(s.kind)) + ") " + why);
}

void TraceWriter::not_fixed(const FieldState& s, std::uint64_t value) {
    const std::uint64_t v = s.desc->fixed_value;
    const std::string fixed = s.desc->type == Type::signed_int ? std::to_string(static_cast<std::int64_t>(v)) : std::to_string(v);
    reject(s, value, "differs from the value the DTD fixes, " + fixed);
}

void TraceWriter::refuse_record(const RecordDesc& r) {
    check_usable();
    fail(ErrorKind::usage, std::string("record '") + r.name + "' belongs to section " + std::to_string(r.section) +
                               ", not to the current section " + std::to_string(current_));
}

void TraceWriter::write_float(FieldState& s, double value) { put(s, float_to_bits(value, s.width), true); }

void TraceWriter::write_bytes(FieldState& s, std::span<const std::byte> data, std::uint64_t length) {
    const std::uint64_t want = s.desc->width_from == no_field ? s.width : length;
    if (data.size() != want) {
        failed_ = true;
        fail(ErrorKind::bad_value, "field '" + std::string(s.desc->path) + "' takes " + std::to_string(want) +
                                       " bytes, not " + std::to_string(data.size()));
    }
    if (s.desc->width_from != no_field) {
        std::vector<FieldState>& record = states_[slot_];
        FieldState& length = record[static_cast<std::size_t>(s.desc->width_from)];
        if (length.kind == Interp::intern && &s >= record.data() && &s < record.data() + record.size()) return put_interned(length, data);
    }
    buffer_->append(data);
}

// An `intern` length field and the string after it (StringTable): the
// string's code when the table holds it under the escape, else the escape,
// the length and the bytes; a new string takes the next code while there is one.
void TraceWriter::put_interned(FieldState& length, std::span<const std::byte> data) {
    std::vector<FieldState>& record = states_[slot_];
    StringTable& t = strings_.of(slot_, static_cast<std::uint32_t>(&length - record.data()), static_cast<std::uint32_t>(record.size()));
    const std::uint64_t escape = live_escape(length.width);
    if (const auto code = t.find(data); code && *code < escape) return append_raw(*code, length.width);
    append_raw(escape, length.width);
    append_raw(data.size(), length.width);
    buffer_->append(data);
    t.add(data, escape, true);
}

// A `live` field stores how far back its value is in its pool (live_pool.hpp),
// or, when it is not there or too far back for the width, the escape and the value.
void TraceWriter::put_live(FieldState& s, std::uint64_t value) {
    const std::uint64_t escape = live_escape(s.width);
    const auto found = pools_.find(s.pool, value, escape);
    if (found && found->back < escape) {
        append_raw(found->back, s.width);
        pools_.refer(s.pool, *found);
    } else {
        append_raw(escape, s.width);
        append_raw(value, 8);
    }
}

// A `predict` field stores a code (predictor.hpp): a reference when its value
// is live in the field's pool and near enough for the width (the pool first:
// a free's address is most often there), else the first of its predictors
// that guesses it, else the escape and the difference from the last escaped value.
void TraceWriter::put_predicted(FieldState& s, std::uint64_t value) {
    const std::uint64_t escape = live_escape(s.width);
    const std::uint64_t predictors = s.predictors;
    std::optional<std::uint64_t> code;
    if (s.pool != 0) {
        const auto found = pools_.find(s.pool, value, escape - predictors);
        if (found && found->back < escape - predictors) {
            code = predictors + found->back;
            pools_.refer(s.pool, *found);
        }
    }
    if (!code) code = predictions_.code_of(s.value, value, s.salt, s.history);
    if (code) {
        append_raw(*code, s.width);
    } else {
        append_raw(escape, s.width);
        std::array<std::byte, max_varint_bytes> out;
        buffer_->append(std::span(out.data(), put_varint(out.data(), s.history.escape(value))));
    }
    predictions_.update(s.value, s.salt, s.history, value);
}

void TraceWriter::put_scaled(FieldState& s, std::uint64_t value, std::uint64_t difference, bool sign) {
    const std::string unit = std::to_string(s.unit);
    const auto stored = divide_by_unit(difference, s.unit, sign);
    if (!stored) reject(s, value, "is not a multiple of the field's unit, " + unit);
    if (!(sign ? fits_signed(*stored, s.width) : fits_unsigned(*stored, s.width))) {
        reject(s, value, "does not fit in " + std::to_string(s.width) + " bytes in units of " + unit);
    }
    append_raw(*stored, s.width);
}

void TraceWriter::put_strided(FieldState& s, std::uint64_t value) {
    SectionOut& out = *sections_[s.section];
    if (out.mode == SectionOut::Mode::records) {
        failed_ = true;
        fail(ErrorKind::usage, "field '" + std::string(s.desc->path) + "' strides through section " +
                                   std::to_string(s.section) + ", which holds records");
    }
    const unsigned w = s.restore;
    const bool sign = s.signed_elements();
    // The element: the value, or under a kept interpretation what put_units() would store.
    std::uint64_t stored = value - s.add - (s.previous & s.keep);
    if (s.element != Interp::section_stride && s.unit != 1) {
        const auto units = divide_by_unit(stored, s.unit, sign);
        if (!units) reject(s, value, "is not a multiple of the field's unit, " + std::to_string(s.unit));
        stored = *units;
    }
    if (!(sign ? fits_signed(stored, w) : fits_unsigned(stored, w))) reject(s, value, "does not fit in " + std::to_string(w) + " bytes");
    if (s.keep != 0) s.previous = value;
    out.mode = SectionOut::Mode::values;
    const std::uint64_t end = out.flushed + out.buffer.size();
    out.buffer.resize(out.buffer.size() + (out.cursor - end) + w, std::byte{0});
    store_uint(out.buffer.data() + (out.cursor - out.flushed), stored, w, options_.order);
    out.cursor += static_cast<std::uint64_t>(s.stride) * w;
    // Versions 2 and 3 flush every section at once, so they wait for the end of the record.
    if (out.buffer.size() >= options_.chunk_bytes) {
        if (header_.version >= 2) {
            segment_due_ = true;
        } else {
            flush(s.section);
        }
    }
}

void TraceWriter::check_count(const FieldState& count_field, std::uint64_t count, std::size_t elements) {
    if (count == elements) return;
    failed_ = true;
    fail(ErrorKind::bad_value, "count field '" + std::string(count_field.desc->path) + "' says " + std::to_string(count) +
                                   " but " + std::to_string(elements) + " elements were given");
}

// A full buffer. Versions 2 and 3 flush every section at once, so that a
// segment holds the records written between two flushes and a reader of a
// pipe needs no more than about one segment in memory.
void TraceWriter::flush(std::uint8_t section) {
    if (header_.version >= 2) return flush_segment();
    SectionOut& s = *sections_[section];
    if (s.buffer.empty()) return;
    header_.chunks.push_back(Chunk{section, 0, out_->position(), s.buffer.size(), s.buffer.size()});
    emit(s.buffer.data(), s.buffer.size());
    s.flushed += s.buffer.size();
    s.buffer.clear();
    if (section == current_) flushed_ = s.flushed;
}

namespace {

// The byte planes a chunk of value section `n` is also compressed in (the
// smaller frame is kept): the width of its elements when every field that
// strides through it now has the same one, 2 to max_planes, else 0.
std::uint8_t planes_of(const std::vector<std::vector<FieldState>>& states, std::size_t n) {
    std::uint32_t width = 0;
    for (const auto& fields : states) {
        for (const FieldState& s : fields) {
            if (s.kind != Interp::section_stride || s.section != n) continue;
            if (width != 0 && width != s.restore) return 0;
            width = s.restore;
        }
    }
    return static_cast<std::uint8_t>(width >= min_planes && width <= max_planes ? width : 0);
}

}  // namespace

void TraceWriter::flush_segment() {
    Segment seg;
    seg.first_record = segment_first_record_;
    seg.records = record_count_ - segment_first_record_;
    seg.start_section = segment_section_;
    seg.state = std::move(next_state_);
    std::vector<std::span<const std::byte>> raw;
    for (std::size_t n = 0; n < sections_.size(); ++n) {
        if (sections_[n] && !sections_[n]->buffer.empty()) {
            const ByteBuffer& b = sections_[n]->buffer;
            seg.chunks.push_back(Chunk{static_cast<std::uint8_t>(n), 0, 0, b.size(), b.size()});
            if (sections_[n]->mode == SectionOut::Mode::values) seg.chunks.back().planes = planes_of(states_, n);
            raw.emplace_back(b.data(), b.size());
        }
    }
    if (seg.chunks.empty()) {
        next_state_ = std::move(seg.state);
        return;
    }
    try {
        if (options_.background) {
            detail::SegmentJob job{std::move(seg), {}};
            for (const auto& r : raw) job.raw.emplace_back(r.begin(), r.end());
            if (!thread_) {
                thread_ = std::make_unique<detail::SegmentThread>(
                    [this](detail::SegmentJob& j) { write_segment(j.seg, {j.raw.begin(), j.raw.end()}); }, options_.thread_start);
            }
            thread_->push(std::move(job));
        } else {
            write_segment(std::move(seg), std::move(raw));
        }
    } catch (...) {
        failed_ = true;
        throw;
    }
    for (const auto& s : sections_) {
        if (!s) continue;
        s->flushed += s->buffer.size();
        s->buffer.clear();
    }
    flushed_ = sections_[static_cast<std::size_t>(current_)]->flushed;
    segment_first_record_ = record_count_;
    segment_due_ = false;
    segment_section_ = static_cast<std::uint8_t>(current_);
    if (header_.version >= 3) start_keyframe();
}

// Compresses and checksums a segment's chunks (`raw`, by chunk) and writes
// it: on the writer's thread, or on thread_ (WriterOptions::background),
// so it touches nothing the records' side changes.
void TraceWriter::write_segment(Segment seg, std::vector<std::span<const std::byte>> raw) {
    if (packed_.size() < seg.chunks.size()) packed_.resize(seg.chunks.size());
    Compressor* compressor = first_bytes_left_ != 0 ? first_compressor_.get() : compressor_.get();
    for (std::size_t i = 0; i < seg.chunks.size(); ++i) {
        Chunk& c = seg.chunks[i];
        first_bytes_left_ -= std::min<std::uint64_t>(first_bytes_left_, raw[i].size());
        if (compressor && compressor->compress(raw[i], packed_[i], &c.planes)) {
            c.codec = static_cast<std::uint8_t>(c.planes != 0 ? ChunkCodec::zstd_planes : ChunkCodec::zstd);
            c.size = packed_[i].size();
            raw[i] = packed_[i];
        } else {
            c.planes = 0;  // stored as it is
        }
        if (header_.version >= 4) c.crc = crc32c(raw[i]);
    }
    if (header_.version >= 6) compress_state(seg.state);
    seg.offset = out_->position();
    const auto put = [&](std::span<const std::byte> bytes) {
        try {
            out_->write(bytes.data(), bytes.size());
        } catch (const OutputError& e) {
            throw TraceError(ErrorKind::output, e.what(), out_->position(), seg.start_section, seg.first_record + seg.records);
        }
    };
    put(encode_segment(header_, seg));
    for (const auto& r : raw) put(r);
    seg.state.clear();  // only its size is kept, in the frame
    segments_.push_back(std::move(seg));
}

// Version 3: the next segment decodes alone. Its state block restores the
// encodings in force now and the value sections' cursors, and the pools
// start empty on both sides (a value freed later escapes).
void TraceWriter::start_keyframe() {
    std::vector<SectionCursor> cursors;
    for (std::size_t n = 0; n < sections_.size(); ++n) {
        if (sections_[n] && sections_[n]->cursor != 0) cursors.emplace_back(static_cast<std::uint8_t>(n), sections_[n]->cursor);
    }
    try {
        next_state_ = encode_state(dtd_, states_, cursors, options_.order);
    } catch (...) {
        failed_ = true;  // the next segment could not decode alone
        throw;
    }
    pools_.clear();
    predictions_.clear();
    histories_.clear();
    strings_.clear();
    for (auto& record : states_) {
        for (FieldState& f : record) f.history = {};
    }
}

void TraceWriter::write_shared(FieldState& s, std::uint64_t value) {
    FieldState* record = states_[slot_].data();
    if (!in_record_ || &s < record || &s >= record + states_[slot_].size()) {
        fail(ErrorKind::usage, "a field written outside the record begun");
    }
    const bool history = s.desc->history != no_field;
    if (history) histories_.load(s, record);
    write_own(s, value);
    if (history) histories_.store(s, record, value);
    if (s.desc->keys_history) s.previous = value;
}

void TraceWriter::comment(std::string_view text) {
    const std::uint32_t slot = predefined_slot_[static_cast<int>(Predefined::comment)];
    const unsigned width = comment_length_width(dtd_.records[slot]);
    if (text.size() > max_comment_bytes(width)) {
        throw TraceError(ErrorKind::usage, "a comment holds at most " + std::to_string(max_comment_bytes(width)) + " bytes, not " +
                                               std::to_string(text.size()),
                         0, current_, record_count_);
    }
    begin_record(slot);
    put_comment([this](std::uint64_t v, unsigned w) { append_raw(v, w); },
                [this](std::span<const std::byte> bytes) { buffer_->append(bytes); }, text, width);
    end_record();
}

void TraceWriter::section(std::uint8_t number) {
    check_usable();
    SectionOut* target = sections_[number].get();
    if (!target || target->mode == SectionOut::Mode::values) {
        throw TraceError(ErrorKind::usage,
                         "section " + std::to_string(number) +
                             (target ? " holds strided values, not records" : " is not defined by the DTD"),
                         0, current_, record_count_);
    }
    begin_record(predefined_slot_[static_cast<int>(Predefined::section)]);
    put_section([this](std::uint64_t v, unsigned width) { append_raw(v, width); }, number);
    end_record();
    target->mode = SectionOut::Mode::records;
    current_ = number;
    buffer_ = &target->buffer;
    flushed_ = target->flushed;
    // A segment that this record ended starts in the section it leads to.
    if (segment_first_record_ == record_count_) segment_section_ = number;
}

void TraceWriter::metadata(std::uint32_t slot, std::uint32_t field, MetaOp op, std::uint64_t a, std::uint64_t b) {
    check_usable();
    if (op == MetaOp::width && set_width_quickly(slot, field, a)) return;
    auto refuse = [&](const std::string& why) {
        throw TraceError(ErrorKind::bad_metadata, why, 0, current_, record_count_);
    };
    if (slot >= dtd_.record_count) refuse("no record type " + std::to_string(slot));
    const RecordDesc& r = dtd_.records[slot];
    if (r.predefined != Predefined::none) refuse(std::string("the predefined record '") + r.name + "' cannot be changed");
    if (r.section != 0 && r.section != current_) {
        refuse(std::string("record '") + r.name + "' is not a record of the current section " + std::to_string(current_));
    }
    if (field == 0 || field >= r.field_count || field > 255) refuse(std::string("record '") + r.name + "' has no field " + std::to_string(field));
    const unsigned word = header_.word();
    FieldState& s = states_[slot][field];
    for (unsigned i = 0; i < metadata_value_count(op); ++i) {
        const std::uint64_t v = i == 0 ? a : b;
        if (!(metadata_value_signed(*s.desc, op, i) ? fits_signed(v, word) : fits_unsigned(v, word))) {
            refuse("a metadata value does not fit the " + std::to_string(word) + "-byte values of this trace's class");
        }
    }
    const std::uint32_t old_width = s.width;
    FieldState changed = s;
    if (auto problem = apply_metadata(changed, op, a, b, dtd_)) {
        refuse("metadata for field '" + std::string(s.desc->path) + "' of record '" + r.name + "': " + *problem);
    }
    if (changed.kind == Interp::section_stride && sections_[changed.section]->mode == SectionOut::Mode::records) {
        refuse("section " + std::to_string(changed.section) + " holds records and cannot hold strided values");
    }
    s = changed;
    changed_by(slot, field, op, a, b, old_width);
}

// metadata()'s usual call under compact encodings, which set a field's width
// before an outlier and again after it, every few records: an integer field
// of a record type of the current section going from one width of 1 to 8
// bytes to another. Makes the change apply_metadata() would make without
// metadata()'s general checks; false, with nothing changed, for any other call.
bool TraceWriter::set_width_quickly(std::uint32_t slot, std::uint32_t field, std::uint64_t w) {
    if (slot >= dtd_.record_count) return false;
    const RecordDesc& r = dtd_.records[slot];
    if (r.predefined != Predefined::none || (r.section != 0 && r.section != current_) || field == 0 || field >= r.field_count ||
        field > 255) {
        return false;
    }
    FieldState& s = states_[slot][field];
    if (!s.simple_width_change(w)) return false;
    const std::uint32_t old_width = s.width;
    s.set_width(static_cast<std::uint32_t>(w));
    changed_by(slot, field, MetaOp::width, w, 0, old_width);
    return true;
}

// After metadata `op` (a, b) changed field `field` of `slot`, whose width was
// `old_width`: the plan, the variant, and the metadata record itself.
void TraceWriter::changed_by(std::uint32_t slot, std::uint32_t field, MetaOp op, std::uint64_t a, std::uint64_t b,
                             std::uint32_t old_width) {
    const RecordDesc& r = dtd_.records[slot];
    initial_[slot] = 0;
    update_plan(plans_[slot], r, states_[slot].data(), field, op, old_width, options_.order == ByteOrder::little);
    matches_[slot].update(r, states_[slot].data(), field);
    variants_[slot] = matches_[slot].variant(plans_[slot]);
    begin_record(predefined_slot_[static_cast<int>(Predefined::metadata)]);
    put_metadata([this](std::uint64_t v, unsigned width) { append_raw(v, width); },
                 MetadataParts{r.tag, field, static_cast<std::uint64_t>(op), a, b}, dtd_.tag_width, header_.word());
    close_record();
}

void TraceWriter::close() {
    check_usable();
    if (in_record_) fail(ErrorKind::usage, "close() in the middle of a record");
    if (header_.version >= 2) {
        flush_segment();
        finish_segments();
    } else {
        for (std::size_t n = 0; n < sections_.size(); ++n) {
            if (sections_[n]) flush(static_cast<std::uint8_t>(n));
        }
    }
    header_.record_count = record_count_;
    header_.index_offset = out_->position();
    const std::uint64_t index_size = header_.version >= 2 ? segments_.size() * 16 + 32 : header_.chunks.size() * 12;
    if (header_.cls == Class::bits32 && (header_.index_offset + index_size > 0xffffffffu || record_count_ > 0xffffffffu)) {
        failed_ = true;
        fail(ErrorKind::usage, "the trace outgrew the 32-bit class; write it with the 64-bit class");
    }
    try {
        if (header_.version >= 2) {
            emit(encode_end(header_, segments_, record_count_));
        } else {
            emit(encode_index(header_));
            const auto prologue = encode_prologue(header_);
            out_->patch(0, prologue.data(), prologue.size());
        }
        out_->commit();
    } catch (const OutputError& e) {
        failed_ = true;
        throw TraceError(ErrorKind::output, e.what(), out_->position(), -1, record_count_);
    }
    closed_ = true;
}


}  // namespace metatf::rt
