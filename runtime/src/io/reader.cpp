#include "metatf/io/reader.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>

#include "metatf/container/codec.hpp"
#include "metatf/encoding/segment_state.hpp"
#include "reader_stream.hpp"

namespace metatf::rt {

namespace {

// Repetitions of a group that stores nothing could otherwise run for ever.
constexpr std::uint64_t max_repeat_count = std::uint64_t(1) << 24;

}  // namespace

struct TraceReader::Saved {
    const std::byte* pos;
    const std::byte* end;
    std::uint32_t slot;
    int current;
    std::vector<std::vector<FieldState>> states;
    std::vector<char> initial;
};

TraceReader::TraceReader(const std::string& path) : file_(path) {
    header_ = read_header(file_);
    streaming_ = header_.version >= 2 && !file_.seekable();
    next_segment_ = file_.position();
}

TraceReader::TraceReader(const std::string& path, const DtdDesc& dtd) : TraceReader(path) {
    check_dtd(dtd);
    attach(dtd);
}

TraceReader::~TraceReader() = default;

// The layout decides, not the name: a DTD saved under another name reads
// the same traces, and comments and spelling may differ.
void TraceReader::check_dtd(const DtdDesc& dtd) const {
    if (header_.dtd_fingerprint != fingerprint(dtd)) {
        throw TraceError(ErrorKind::wrong_dtd,
                         "the trace's DTD '" + header_.dtd_name + "' lays out records differently from this reader's DTD '" +
                             dtd.name + "'",
                         8, -1, 0);
    }
}

void TraceReader::attach(const DtdDesc& own) {
    // Split streams a writer chose: sections its embedded DTD adds to this one.
    const std::uint64_t text_at = header_.name_offset() + header_.dtd_name.size();
    const EmbeddedDtd embedded = split_embedded_dtd(header_.dtd_text, text_at);
    if (!embedded.added.empty()) split_dtd_ = std::make_unique<DtdWithSections>(own, embedded.added, text_at);
    dtd_ = split_dtd_ ? &split_dtd_->desc() : &own;
    const DtdDesc& dtd = *dtd_;
    states_.resize(dtd.record_count);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const RecordDesc& r = dtd.records[i];
        for (std::uint32_t f = 0; f < r.field_count; ++f) states_[i].push_back(FieldState::initial(r.fields[f], predict_salt(r.tag, f)));
        field_total_ += r.field_count;
    }
    streams_.resize(256);
    slot_of_tag_.resize(256);
    auto add_section = [&](std::uint8_t n) {
        streams_[n] = std::make_unique<Stream>();
        slot_of_tag_[n].assign(std::size_t(1) << std::min<std::uint32_t>(8 * dtd.tag_width, 16), -1);
    };
    large_tags_.resize(256);
    add_section(0);
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) add_section(dtd.sections[i].number);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const RecordDesc& r = dtd.records[i];
        for (std::size_t n = 0; n < 256; ++n) {
            if (!streams_[n] || (r.section != 0 && r.section != n)) continue;
            if (r.tag < slot_of_tag_[n].size()) {
                slot_of_tag_[n][r.tag] = static_cast<std::int32_t>(i);
            } else {
                large_tags_[n][r.tag] = static_cast<std::int32_t>(i);
            }
        }
    }
    for (std::size_t i = 0; i < header_.chunks.size(); ++i) stream_of(header_.chunks[i]).chunks.push_back(i);
    for (const std::uint8_t n : embedded.added) streams_[n]->split = true;
    // A pipe keeps the bytes of the sections the DTD's offsets point into, as they arrive.
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const RecordDesc& r = dtd.records[i];
        for (std::uint32_t f = 0; f < r.field_count; ++f) {
            const Encoding& e = r.fields[f].initial;
            if (e.kind == Interp::section_offset && streams_[e.section]) streams_[e.section]->table = true;
        }
    }
    streams_[0]->mode = Stream::Mode::records;
    initial_.assign(dtd.record_count, 0);
    histories_.reset(history_count(dtd));
    strings_.reset(dtd.record_count);
    tag_width_ = dtd.tag_width;
    plans_.resize(dtd.record_count);
    variants_.resize(dtd.record_count);
    matches_.resize(dtd.record_count);
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) set_plan(i);
    reset_initial();
    enter_section(0);
}

std::uint64_t TraceReader::file_offset() const {
    const Stream& s = *streams_[current_];
    const std::byte* begin = s.buffer.data();
    if (saved_ || s.buffer.empty() || pos_ < begin || pos_ > begin + s.buffer.size()) return s.buffer_file_offset;
    return s.buffer_file_offset + static_cast<std::uint64_t>(pos_ - begin);
}

// The stream that a chunk of the index or of a segment frame belongs to.
TraceReader::Stream& TraceReader::stream_of(const Chunk& c) const {
    if (!streams_[c.section]) {
        const char* what = header_.version == 1 ? "the section index names section " : "a segment holds a chunk of section ";
        throw TraceError(ErrorKind::bad_section, what + std::to_string(c.section) + ", which the DTD does not define", c.entry, -1,
                         record_index_);
    }
    if (c.size > max_chunk_bytes) {
        throw TraceError(ErrorKind::bad_section, "chunk of " + std::to_string(c.size) + " bytes is too large", c.start,
                         c.section, record_index_);
    }
    return *streams_[c.section];
}

// A segment's first record starts the chunk of its start section: that chunk
// reached at another record means that a frame's start section or a record
// count is wrong.
void TraceReader::check_segment_start(const Chunk& c, const Stream& s) const {
    if (!c.first_record || (s.mode == Stream::Mode::records && *c.first_record == record_index_)) return;
    const std::string says = "the segment frames say this chunk starts with record " + std::to_string(*c.first_record);
    throw TraceError(ErrorKind::bad_section,
                     s.mode == Stream::Mode::records ? says + ", not record " + std::to_string(record_index_)
                                                     : says + ", but section " + std::to_string(c.section) + " holds strided values",
                     c.start, c.section, record_index_);
}

void TraceReader::fail(ErrorKind kind, const std::string& message) const {
    throw TraceError(kind, message, file_offset(), current_, record_index_);
}

void TraceReader::overrun(std::uint64_t wanted) const {
    fail(ErrorKind::truncated, "record '" + std::string(dtd_->records[slot_].name) + "' needs " +
                                   std::to_string(wanted) + " bytes here, more than its chunk holds");
}

// Reported at the field's bytes, where it stores them in the record.
void TraceReader::not_fixed(const FieldState& s, std::uint64_t value) {
    const bool in_record = stores_bytes(s.kind) && !codes(s.kind);
    refuse_fixed(s, value, in_record ? pos_ - s.width : pos_);
}

void TraceReader::refuse_fixed(const FieldState& s, std::uint64_t value, const std::byte* at) {
    fail_at(at, ErrorKind::bad_value, not_fixed_message(dtd_->records[slot_], *s.desc, value));
}

char TraceReader::native_order() const {
    return (header_.order == ByteOrder::little) == (std::endian::native == std::endian::little);
}

// read_int() of a field with a shared history or a key of one (Histories).
std::uint64_t TraceReader::read_shared(FieldState& s) {
    FieldState* record = states_[slot_].data();
    if (&s < record || &s >= record + states_[slot_].size()) fail(ErrorKind::usage, "a field read outside the record begun");
    const bool history = s.desc->history != no_field;
    if (history) histories_.load(s, record);
    const std::uint64_t value = read_own(s);
    if (history && histories_.store(s, record, value)) charge(1, "shared histories hold", "entries and elements");
    if (s.desc->keys_history) s.previous = value;
    return value;
}

void TraceReader::reset_initial() {
    fill_initial();
    update_fast_tags();
}

// Every user record is in its initial layout, which generated code reads
// directly when the byte order is the machine's; a record with a shared
// history never is (it is read field by field).
void TraceReader::fill_initial() {
    for (std::uint32_t i = 0; i < dtd_->record_count; ++i) initial_[i] = native_order() && !has_history(dtd_->records[i]);
}

// Run::fast(), Run::planned() and Run::variant() in one mask test each: the
// tags of the current section (below 64) whose record is a user record still
// in its initial layout, or one whose layout has a plan that fits the window
// (and is a variant's).
void TraceReader::update_fast_tags() {
    fast_tags_ = planned_tags_ = variant_tags_ = 0;
    for (std::size_t tag = 0; tag < std::min<std::size_t>(64, tag_table_size_); ++tag) update_fast_tag(tag);
}

// The plan of `slot` under its current encodings.
void TraceReader::set_plan(std::uint32_t slot) {
    widen_window(plans_[slot] = make_plan(dtd_->records[slot], states_[slot].data(), header_.order == ByteOrder::little));
    matches_[slot].reset(dtd_->records[slot], states_[slot].data());
    variants_[slot] = matches_[slot].variant(plans_[slot]);
}


// The fast window grows to hold a planned record and its slack, up to a
// bound past which such records take the path that tests their length.
void TraceReader::widen_window(const RecordPlan& plan) {
    constexpr std::size_t widest = 256;
    const std::size_t need = tag_width_ + plan.size + 8;
    if (!plan.usable || fast_window_ == 0 || need <= fast_window_ || need > widest) return;
    fast_window_ = need;
    set_end(end_);
}

void TraceReader::fail_at(const std::byte* at, ErrorKind kind, const std::string& message) {
    pos_ = at;
    fail(kind, message);
}

// Version 3: a segment begins with the DTD's initial encodings changed by
// its state block, empty pools and the value sections' cursors the block
// gives (0 for the others), whatever the reader did before it: so a reader
// that starts here reads what one from the start reads.
void TraceReader::start_segment(std::span<const std::byte> block, const Chunk& c) {
    if (header_.version < 3) return;
    const Segment& seg = streaming_ ? segments_seen_.at(c.segment) : header_.segments.at(c.segment);
    reset_encodings();
    for (const auto& stream : streams_) {
        if (stream && stream->mode != Stream::Mode::records) stream->cursor = 0;
    }
    if (header_.version >= 6 && zstd_frame(block)) {
        apply_packed_state(block, seg.state_offset);
    } else {
        decode_state(block, dtd_->tag_width, header_.order, seg.state_offset, record_index_,
                     [&](const StateEntry& e) { apply_state(e, seg.state_offset + e.offset); });
    }
    for (std::uint32_t i = 0; i < dtd_->record_count; ++i) set_plan(i);
    update_fast_tags();
}

// Version 6: a state block stored as one zstd frame, at `at` in the file.
// What it declares is counted in the budget of ReaderLimits before it is
// decoded, so that a few bytes per segment cannot make a reader decode and
// apply megabytes at every one. An error in its entries is placed at the
// block, with the entry's offset among the decoded bytes.
void TraceReader::apply_packed_state(std::span<const std::byte> frame, std::uint64_t at) {
    const auto refuse = [&](const std::string& message) { throw TraceError(ErrorKind::bad_section, message, at, -1, record_index_); };
    const std::uint64_t declared = declared_size(frame);
    elements_ += declared;
    if (elements_ > element_budget()) {
        refuse("a compressed state block that declares " + std::to_string(declared) +
               " bytes, more than the limit for the " + std::to_string(bytes_loaded_) + " bytes of records read (see ReaderLimits)");
    }
    std::vector<std::byte> block;
    if (auto problem = decompress_frame(frame, max_state_bytes, block)) refuse("the state block does not decode: " + *problem);
    try {
        decode_state(block, dtd_->tag_width, header_.order, 0, record_index_, [&](const StateEntry& e) { apply_state(e, e.offset); });
    } catch (const TraceError& e) {
        throw TraceError(e.kind, e.message + " (byte " + std::to_string(e.offset) + " of the decompressed state block)", at, -1, record_index_);
    }
}

// Every field back to the DTD's encoding and the pools empty, as a segment
// starts. The work is in proportion to the DTD's fields, and is counted in
// the budget of ReaderLimits, so that a trace of many tiny segments cannot
// make a reader work out of proportion to its size.
void TraceReader::reset_encodings() {
    elements_ += field_total_;
    if (elements_ > element_budget()) {
        fail(ErrorKind::bad_section, "segments so small that starting each (" + std::to_string(field_total_) +
                                         " fields set afresh) costs more than the limit for the " + std::to_string(bytes_loaded_) +
                                         " bytes of records read (see ReaderLimits)");
    }
    pools_.clear();
    predictions_.clear();
    histories_.clear();
    strings_.clear();
    for (std::uint32_t i = 0; i < dtd_->record_count; ++i) {
        for (FieldState& f : states_[i]) f = FieldState::initial(*f.desc, f.salt);
    }
    fill_initial();
    ++segment_starts_;
}

void TraceReader::apply_state(const StateEntry& e, std::uint64_t at) {
    auto refuse = [&](const std::string& message) { throw TraceError(ErrorKind::bad_metadata, message, at, -1, record_index_); };
    Stream* stream = streams_[e.section].get();
    if (e.kind == StateEntry::Kind::cursor) {
        if (!stream || stream->mode == Stream::Mode::records || e.cursor < stream->buffer_stream_offset) {
            refuse("the state block sets a cursor in section " + std::to_string(e.section) + ", which holds no values there");
        }
        stream->cursor = e.cursor;
        return;
    }
    const std::int32_t slot = stream ? slot_for(e.section, e.change.tag) : -1;
    if (slot < 0 || dtd_->records[slot].predefined != Predefined::none) {
        refuse("the state block names tag " + std::to_string(e.change.tag) + " of section " + std::to_string(e.section) +
               ", which no record the metadata can change has");
    }
    const RecordDesc& r = dtd_->records[slot];
    if (e.change.field == 0 || e.change.field >= r.field_count) {
        refuse("the state block names field " + std::to_string(e.change.field) + " of record '" + r.name + "'");
    }
    FieldState& f = states_[slot][e.change.field];
    if (auto problem = apply_metadata(f, static_cast<MetaOp>(e.change.property), e.change.a, e.change.b, *dtd_)) {
        refuse("the state block changes field '" + std::string(f.desc->path) + "' of record '" + r.name + "': " + *problem);
    }
    initial_[slot] = 0;
}

// A tag past the lookup table: a large tag value, or none at all.
bool TraceReader::large_tag(std::uint64_t tag) {
    slot_ = 0;
    const std::int32_t slot = slot_for(current_, tag);
    if (slot < 0) {
        pos_ -= tag_width_;  // report the tag's own position
        fail(ErrorKind::unknown_tag, "no record of section " + std::to_string(current_) + " has tag " + std::to_string(tag));
    }
    slot_ = static_cast<std::uint32_t>(slot);
    return true;
}

void TraceReader::set_fast_window(std::size_t bytes) {
    // The fast loops load a tag in the machine's byte order: in a trace of the
    // other order, tags wider than a byte are left to the general path (limit_
    // stays at pos_), which reads them in the trace's order.
    if (dtd_->tag_width > 1 && !native_order()) return;
    fast_window_ = std::max<std::size_t>(bytes, 1);
    for (const RecordPlan& plan : plans_) widen_window(plan);
    set_end(end_);
    update_fast_tags();
}

// A new chunk (or the same one again): Run::limit for it. Where the chunk
// holds less than the fast window, limit is pos_ and the fast loops stand aside.
void TraceReader::set_end(const std::byte* end) {
    end_ = end;
    const auto left = static_cast<std::size_t>(end_ - pos_);
    limit_ = fast_window_ != 0 && left >= fast_window_ ? end_ - (fast_window_ - 1) : pos_;
}

// Makes `section` the current one, its stream resuming where it stopped.
void TraceReader::enter_section(int section) {
    current_ = section;
    stream_ = streams_[static_cast<std::size_t>(section)].get();
    const auto& table = slot_of_tag_[static_cast<std::size_t>(section)];
    tag_table_ = table.data();
    tag_table_size_ = table.size();
    update_fast_tags();
    pos_ = stream_->buffer.data() + stream_->read;
    set_end(stream_->buffer.data() + stream_->buffer.size());
}

std::int32_t TraceReader::slot_for(int section, std::uint64_t tag) const {
    const auto& table = slot_of_tag_[static_cast<std::size_t>(section)];
    if (tag < table.size()) return table[tag];
    const auto& large = large_tags_[static_cast<std::size_t>(section)];
    const auto it = large.find(tag);
    return it == large.end() ? -1 : it->second;
}

// At the end of the trace every record stream must be used up and the count must agree.
void TraceReader::finish() {
    ended_ = true;
    for (std::size_t n = 0; n < streams_.size(); ++n) {
        Stream* s = streams_[n].get();
        if (!s || s->mode != Stream::Mode::records) continue;
        if (s->read != s->buffer.size() || s->next_chunk != s->chunks.size() || !s->pending.empty()) {
            throw TraceError(ErrorKind::bad_section, "section " + std::to_string(n) + " has records that no section record leads to",
                             s->buffer_file_offset + s->read, static_cast<int>(n), record_index_);
        }
    }
    if (record_index_ != header_.record_count) {
        const char* counted = header_.version == 1 ? "the header counts " : "the segment frames count ";
        throw TraceError(ErrorKind::bad_header,
                         counted + std::to_string(header_.record_count) + " records, but the trace holds " + std::to_string(record_index_),
                         header_.index_offset, current_, record_index_);
    }
}

double TraceReader::read_float(FieldState& s) { return float_from_bits(take(s.width), s.width); }

std::span<const std::byte> TraceReader::read_bytes(FieldState& s, std::uint64_t length) {
    FieldState* measure = s.desc->width_from == no_field ? nullptr : &record_field(s.desc->width_from);
    const bool interned = measure && measure->kind == Interp::intern;
    if (interned && measure->previous != live_escape(measure->width)) return named_string(*measure);
    const std::uint64_t n = measure ? length : s.width;
    if (static_cast<std::uint64_t>(end_ - pos_) < n) overrun(n);
    std::span<const std::byte> out(pos_, static_cast<std::size_t>(n));
    pos_ += n;
    if (interned && table_of(slot_, *measure).add(out, live_escape(measure->width), false)) {
        charge(1, "interned strings hold", "entries and elements");
    }
    return out;
}

// An `intern` length field (StringTable): the code of a string its table
// holds, whose length is the value, or the escape and then the length of a
// new string, which the field after it stores. The code waits in `previous`.
std::uint64_t TraceReader::interned(FieldState& s) {
    const std::byte* at = pos_;
    const std::uint64_t code = take(s.width);
    if (code == live_escape(s.width)) {
        s.previous = code;
        return take(s.width);
    }
    const StringTable& t = table_of(slot_, s);
    if (code >= t.size()) {
        fail_at(at, ErrorKind::bad_value, "field '" + std::string(s.desc->path) + "' names string " + std::to_string(code) +
                                              " of its table, which holds " + std::to_string(t.size()));
    }
    s.previous = code;
    return t.at(code).size();
}

// The string the code intern field `length` read last names, checked again
// in case the string is read without its length.
std::span<const std::byte> TraceReader::named_string(const FieldState& length) {
    const StringTable& t = table_of(slot_, length);
    if (length.previous >= t.size()) fail(ErrorKind::usage, "a string read without the intern length before it");
    return t.at(length.previous);
}

FieldState& TraceReader::record_field(std::int32_t field) {
    std::vector<FieldState>& record = states_[slot_];
    if (field < 0 || static_cast<std::size_t>(field) >= record.size()) fail(ErrorKind::usage, "a field read outside the record begun");
    return record[static_cast<std::size_t>(field)];
}

StringTable& TraceReader::table_of(std::uint32_t slot, const FieldState& s) {
    std::vector<FieldState>& record = states_[slot];
    if (&s < record.data() || &s >= record.data() + record.size()) fail(ErrorKind::usage, "a field read outside its record");
    return strings_.of(slot, static_cast<std::uint32_t>(&s - record.data()), static_cast<std::uint32_t>(record.size()));
}

std::uint64_t TraceReader::check_count(std::uint64_t count, const FieldState& count_field) {
    if (count > max_repeat_count || count > static_cast<std::uint64_t>(end_ - pos_) * 8 + 1024) {
        fail(ErrorKind::bad_value, "repeat count " + std::to_string(count) + " of field '" + count_field.desc->path +
                                       "' is more than the record can hold");
    }
    charge(count, "repeated groups expand to", "elements");
    return count;
}

void TraceReader::charge(std::uint64_t n, std::string_view what, std::string_view things) {
    elements_ += n;
    if (elements_ <= element_budget()) return;
    fail(ErrorKind::bad_value, std::string(what) + " more than " + std::to_string(element_budget()) + " " + std::string(things) +
                                   ", the limit for the " + std::to_string(bytes_loaded_) + " bytes of records read (see ReaderLimits)");
}

std::uint64_t TraceReader::element_budget() const {
    return limits_.elements_per_byte * bytes_loaded_ + limits_.elements_slack;
}

// A `live` field: the value its stored count names in its pool (live_pool.hpp).
std::uint64_t TraceReader::live(FieldState& s) {
    const std::byte* at = pos_;
    const std::uint64_t back = take(s.width);
    if (back == live_escape(s.width)) return take(8);
    return referred(s, back, at);
}

// The live value `back` places from the newest of field `s`'s pool, whose
// reference is stored at `at`: an error there when the pool holds fewer.
std::uint64_t TraceReader::referred(const FieldState& s, std::uint64_t back, const std::byte* at) {
    const auto value = pools_.refer_back(s.pool, back);
    if (!value) {
        fail_at(at, ErrorKind::bad_value, "field '" + std::string(s.desc->path) + "' refers " + std::to_string(back) +
                                              " values back in pool " + std::to_string(s.pool) + ", which holds " +
                                              std::to_string(pools_.live(s.pool)));
    }
    return *value;
}

// A `predict` field (predictor.hpp): the value its code names.
std::uint64_t TraceReader::predicted(FieldState& s) {
    const std::byte* at = pos_;
    const std::uint64_t code = take(s.width);
    const std::uint64_t predictors = s.predictors;
    std::uint64_t value;
    if (code < predictors) {
        value = predictions_.named(s.value, code, s.salt, s.history);
    } else if (code == live_escape(s.width)) {
        value = s.history.unescape(varint());
    } else {
        const std::uint64_t back = code - predictors;
        if (s.pool == 0) {
            fail_at(at, ErrorKind::bad_value, "field '" + std::string(s.desc->path) + "' stores code " + std::to_string(code) +
                                                  ", which names neither one of its " + std::to_string(predictors) +
                                                  " predictors nor the escape, and the field has no pool");
        }
        value = referred(s, back, at);
    }
    predictions_.update(s.value, s.salt, s.history, value);
    return value;
}

// An escaped difference: LEB128, 7 bits a byte, at most 10 bytes of 64 bits.
std::uint64_t TraceReader::varint() {
    const std::byte* at = pos_;
    std::uint64_t value = 0;
    for (unsigned i = 0; i < max_varint_bytes; ++i) {
        const std::uint64_t b = take(1);
        if (i == max_varint_bytes - 1 && b > 1) break;
        value |= (b & 0x7f) << (7 * i);
        if (b < 0x80) return value;
    }
    fail_at(at, ErrorKind::bad_value, "an escaped difference does not fit in 64 bits (LEB128 of more than 10 bytes)");
}

std::uint64_t TraceReader::strided(FieldState& f) {
    Stream* s = streams_[f.section].get();
    if (!s || s->mode == Stream::Mode::records) {
        fail(ErrorKind::bad_section, "field '" + std::string(f.desc->path) + "' strides through section " +
                                         std::to_string(f.section) + ", which holds records");
    }
    s->mode = Stream::Mode::values;
    if (s->cursor < s->buffer_stream_offset) {
        // A cursor the state block left at 0, or a stride that wrapped: the bytes are behind the reader.
        fail(ErrorKind::bad_section, "field '" + std::string(f.desc->path) + "' reads offset " + std::to_string(s->cursor) +
                                         " of section " + std::to_string(f.section) + ", before the chunk being read");
    }
    const unsigned w = f.restore;
    while (s->cursor >= s->buffer_stream_offset + s->buffer.size()) {
        if (!load_next_chunk(*s)) {
            fail(ErrorKind::truncated, "field '" + std::string(f.desc->path) + "' reads past the end of section " +
                                           std::to_string(f.section));
        }
    }
    const std::uint64_t at = s->cursor - s->buffer_stream_offset;
    if (s->buffer.size() - at < w) {
        fail(ErrorKind::truncated, "an element of section " + std::to_string(f.section) + " runs past its chunk");
    }
    const std::uint64_t raw = load_uint(s->buffer.data() + at, w, header_.order);
    s->cursor += static_cast<std::uint64_t>(f.stride) * w;
    return f.from_element(raw);
}

std::span<const std::byte> TraceReader::strided_chunk(std::uint8_t section, std::uint64_t& at) const {
    const Stream* s = streams_[section].get();
    if (!s || s->mode == Stream::Mode::records || s->cursor < s->buffer_stream_offset) return {};
    at = s->cursor - s->buffer_stream_offset;
    return s->buffer;
}

void TraceReader::taken(std::uint8_t section, std::uint64_t bytes) {
    Stream& s = *streams_[section];
    s.mode = Stream::Mode::values;
    s.cursor += bytes;
}

// ---- predefined records -----------------------------------------------------------------

std::string_view TraceReader::read_comment() {
    return take_comment([this](unsigned width) { return take(width); },
                        [this](std::uint64_t n) {
                            if (static_cast<std::uint64_t>(end_ - pos_) < n) overrun(n);
                            const std::span<const std::byte> bytes(pos_, static_cast<std::size_t>(n));
                            pos_ += n;
                            return bytes;
                        },
                        comment_length_width(dtd_->records[slot_]));
}

std::uint8_t TraceReader::read_section() {
    const std::byte* at = pos_;
    const std::uint8_t n = take_section([this](unsigned width) { return take(width); });
    if (!streams_[n]) {
        fail_at(at, ErrorKind::bad_section, "a section record names section " + std::to_string(n) + ", which the DTD does not define");
    }
    if (streams_[n]->mode == Stream::Mode::values) {
        fail_at(at, ErrorKind::bad_section, "a section record leads to section " + std::to_string(n) + ", which holds strided values");
    }
    stream_->read = static_cast<std::size_t>(pos_ - stream_->buffer.data());
    streams_[n]->mode = Stream::Mode::records;
    enter_section(n);
    return n;
}

// What a change of field `field` of `slot` moves besides its state and plan:
// the fast window, the variant and the tag masks. Inline into both callers.
METATF_INLINE void TraceReader::changed(std::uint32_t slot, std::uint32_t field) {
    widen_window(plans_[slot]);
    matches_[slot].update(dtd_->records[slot], states_[slot].data(), field);
    variants_[slot] = matches_[slot].variant(plans_[slot]);
    initial_[slot] = 0;
    const std::uint64_t tag = dtd_->records[slot].tag;
    if (tag < std::min<std::size_t>(64, tag_table_size_)) update_fast_tag(tag);
}

// Each check reports the position of the byte it is about.
MetadataChange TraceReader::read_metadata() {
    MetadataChange m;
    if (set_width_quickly(m)) return m;
    const std::byte* at = pos_;           // the part just read
    const std::byte* property_at = pos_;  // a change the field cannot take is the property's fault
    auto take_part = [&](unsigned width) {
        at = pos_;
        return take(width);
    };
    auto check = [&](MetadataPart part, const MetadataParts& p) {
        if (part == MetadataPart::tag) {
            const std::int32_t slot = slot_for(current_, p.tag);
            if (slot < 0) {
                fail_at(at, ErrorKind::bad_metadata, "metadata names tag " + std::to_string(p.tag) +
                                                         ", which no record of section " + std::to_string(current_) + " has");
            }
            m.slot = static_cast<std::uint32_t>(slot);
            if (dtd_->records[m.slot].predefined != Predefined::none) {
                fail_at(at, ErrorKind::bad_metadata,
                        std::string("metadata cannot change the predefined record '") + dtd_->records[m.slot].name + "'");
            }
        } else if (part == MetadataPart::field) {
            const RecordDesc& r = dtd_->records[m.slot];
            if (p.field == 0 || p.field >= r.field_count) {
                fail_at(at, ErrorKind::bad_metadata, "metadata names field " + std::to_string(p.field) + " of record '" + r.name +
                                                         "', which has fields 1 to " + std::to_string(r.field_count - 1));
            }
        } else {
            property_at = at;
            if (p.property > static_cast<std::uint64_t>(last_meta_op)) {
                fail_at(at, ErrorKind::bad_metadata, "metadata property " + std::to_string(p.property) + " is unknown");
            }
        }
    };
    const MetadataParts parts = take_metadata(take_part, check, dtd_->tag_width, header_.word());
    m.field = static_cast<std::uint32_t>(parts.field);
    m.op = static_cast<MetaOp>(parts.property);
    FieldState& s = states_[m.slot][m.field];
    m.a = metadata_value(parts, *s.desc, 0, header_.word());
    m.b = metadata_value(parts, *s.desc, 1, header_.word());
    const std::uint32_t old_width = s.width;
    if (auto problem = apply_metadata(s, m.op, m.a, m.b, *dtd_)) {
        fail_at(property_at, ErrorKind::bad_metadata, "metadata for field '" + std::string(s.desc->path) + "' of record '" +
                                                          dtd_->records[m.slot].name + "': " + *problem);
    }
    m.constants_kept = update_plan(plans_[m.slot], dtd_->records[m.slot], states_[m.slot].data(), m.field, m.op, old_width,
                                   header_.order == ByteOrder::little);
    changed(m.slot, m.field);
    return m;
}

// read_metadata()'s usual record under compact encodings, which set a
// field's width before an outlier and again after it, every few records: a
// 1-byte tag, the whole record in the chunk of a little-endian trace, a
// record type that generated code reads with its plan (Run::planned(), so
// only under a fast window: the DTD-driven readers take the checked path)
// and an integer field whose width goes from one of 1 to 8 bytes to another.
// One bounds test, then the change apply_metadata() would make; false, with
// nothing read or changed, for any other record.
bool TraceReader::set_width_quickly(MetadataChange& m) {
    const unsigned word = header_.word();
    const bool little = header_.order == ByteOrder::little && std::endian::native == std::endian::little;
    if (tag_width_ != 1 || !little || static_cast<std::size_t>(end_ - pos_) < 3 + word) return false;
    const auto tag = std::to_integer<std::uint32_t>(pos_[0]), field = std::to_integer<std::uint32_t>(pos_[1]);
    const auto op = static_cast<MetaOp>(std::to_integer<std::uint8_t>(pos_[2]));
    if (op != MetaOp::width || tag >= 64 || (planned_tags_ >> tag & 1) == 0) return false;
    const auto slot = static_cast<std::uint32_t>(tag_table_[tag]);  // a user record: planned
    const RecordDesc& r = dtd_->records[slot];
    if (field == 0 || field >= r.field_count) return false;
    FieldState& s = states_[slot][field];
    const std::uint64_t w = word == 8 ? load_native<8>(pos_ + 3) : load_native<4>(pos_ + 3);
    if (!s.simple_width_change(w)) return false;
    const std::uint32_t old_width = s.width;
    s.set_width(static_cast<std::uint32_t>(w));
    m = MetadataChange{slot, field, op, w, 0, update_plan(plans_[slot], r, states_[slot].data(), field, op, old_width, true)};
    changed(slot, field);
    pos_ += 3 + word;
    return true;
}

// ---- tables -----------------------------------------------------------------------------

void TraceReader::append_table(Stream& s, std::uint8_t section, std::span<const std::byte> bytes) {
    if (s.whole.size() + bytes.size() > max_chunk_bytes) {
        fail(ErrorKind::bad_section, "section " + std::to_string(section) + " is too large to load whole");
    }
    s.whole.insert(s.whole.end(), bytes.begin(), bytes.end());
}

TraceReader::Stream& TraceReader::table_stream(std::uint8_t section) {
    Stream* s = streams_[section].get();
    if (!s) fail(ErrorKind::bad_section, "the DTD defines no section " + std::to_string(section));
    if (streaming_ && !s->table) {
        // A pipe, and a section that metadata made a table: it holds what is still here.
        s->table = true;
        s->whole_start = s->buffer_stream_offset;
        append_table(*s, section, s->buffer);
        for (const Arrived& chunk : s->pending) append_table(*s, section, chunk.bytes);
    } else if (!streaming_ && !s->whole_loaded) {
        std::uint64_t total = 0;
        for (std::size_t i : s->chunks) total += header_.chunks[i].decoded;
        if (total > max_chunk_bytes) fail(ErrorKind::bad_section, "section " + std::to_string(section) + " is too large to load whole");
        s->whole.reserve(total);
        ByteBuffer bytes;
        for (std::size_t i : s->chunks) {
            load_chunk(header_.chunks[i], bytes);
            s->whole.insert(s->whole.end(), bytes.begin(), bytes.end());
        }
        s->whole_loaded = true;
    }
    return *s;
}

void TraceReader::enter_table(std::uint8_t section, std::uint64_t offset) {
    const Stream& table = table_stream(section);
    if (offset < table.whole_start) {
        fail(ErrorKind::bad_value, "offset " + std::to_string(offset) + " of section " + std::to_string(section) +
                                       " went by in the pipe before metadata made it a table; read the trace from a file");
    }
    const std::span<const std::byte> content(table.whole);
    offset -= table.whole_start;
    if (offset >= content.size()) {
        fail(ErrorKind::bad_value, "offset " + std::to_string(offset + table.whole_start) + " is past the end of section " +
                                       std::to_string(section));
    }
    saved_ = std::make_unique<Saved>(Saved{pos_, end_, slot_, current_, states_, initial_});
    reset_initial();
    for (std::uint32_t i = 0; i < dtd_->record_count; ++i) {
        for (FieldState& f : states_[i]) f = FieldState::initial(*f.desc, f.salt);
    }
    pos_ = content.data() + offset;
    set_end(content.data() + content.size());
    const std::uint64_t tag = take(dtd_->tag_width);
    const std::int32_t slot = slot_for(section, tag);
    if (slot < 0) {
        leave_table();
        fail(ErrorKind::unknown_tag, "no record of section " + std::to_string(section) + " has tag " + std::to_string(tag));
    }
    slot_ = static_cast<std::uint32_t>(slot);
}

void TraceReader::leave_table() {
    if (!saved_) return;
    pos_ = saved_->pos;
    set_end(saved_->end);
    slot_ = saved_->slot;
    current_ = saved_->current;
    states_ = std::move(saved_->states);
    initial_ = std::move(saved_->initial);
    update_fast_tags();  // from the plans and variants, which a table read leaves as they were
    saved_.reset();
}

}  // namespace metatf::rt
