// TraceReader's input side: chunks loaded from a file (decompressed
// ahead on a thread of their own) or arriving from a pipe, segment frames
// and their state blocks, and the bound on what a pipe keeps waiting.
#include <algorithm>

#include "metatf/container/codec.hpp"
#include "metatf/io/reader.hpp"
#include "reader_stream.hpp"

namespace metatf::rt {

namespace {

// A pipe's chunks wait in memory until their section is read; this bounds them.
constexpr std::uint64_t max_pending_bytes = std::uint64_t(1) << 30;

}  // namespace

// A file: chunk c's bytes, checked and decoded, into `out`.
void TraceReader::load_chunk(const Chunk& c, ByteBuffer& out) {
    if (c.codec == 0) {
        file_.read_at(c.start, out.overwrite(c.size), c.size);
        check_chunk(header_, c, out, record_index_);
    } else {
        file_.read_at(c.start, packed_.overwrite(c.size), c.size);
        decode_chunk(c, packed_, out);
    }
}

// A zstd chunk's stored bytes, checked, into its decoded bytes.
void TraceReader::decode_chunk(const Chunk& c, std::span<const std::byte> stored, ByteBuffer& out) const {
    check_chunk(header_, c, stored, record_index_);
    Decoded{{}, decompress_chunk(stored, c.decoded, out, c.planes)}.raise(c, record_index_);
}

// Starts checking and decompressing the stream's next chunk, if it is a zstd
// chunk, while the records of this one are read: its checksum and zstd then
// cost a second core, not time.
// Its stored bytes are read here, so that the file is only read from one
// thread; the reader then holds two chunks of the stream.
void TraceReader::decompress_ahead(Stream& s, ByteBuffer room) {
    if (s.next_chunk == s.chunks.size()) return;
    const Chunk& c = header_.chunks[s.chunks[s.next_chunk]];
    if (c.codec == 0) return;
    try {
        ByteBuffer stored;
        file_.read_at(c.start, stored.overwrite(c.size), c.size);
        s.ahead = std::async(std::launch::async, [&header = header_, stored = std::move(stored), c, room = std::move(room)]() mutable {
            Decoded d{std::move(room), chunk_damage(header, c, stored), ErrorKind::checksum};
            if (!d.problem) {
                d.problem = decompress_chunk(stored, c.decoded, d.bytes, c.planes);
                d.kind = ErrorKind::bad_section;
            }
            return d;
        });
    } catch (...) {
        // No thread, no memory or the read failed: the chunk is loaded when
        // it is reached, which raises any error there, with its position.
    }
}

bool TraceReader::load_next_chunk(Stream& s) {
    const Chunk* starts = nullptr;  // the chunk, if it starts a segment
    std::vector<std::byte> state;   // a pipe: that segment's state block
    if (streaming_) {
        while (s.pending.empty()) {
            if (!pull_segment()) return false;
        }
        Arrived& next = s.pending.front();
        check_segment_start(next.chunk, s);
        s.buffer_stream_offset += s.buffer.size();
        s.buffer_file_offset = next.chunk.start;
        s.buffer = std::move(next.bytes);
        pending_bytes_ -= s.buffer.size() + next.state.size();
        if (next.chunk.first_record) {
            arrived_start_ = next.chunk;
            starts = &arrived_start_;
            state = std::move(next.state);
        }
        s.pending.pop_front();
    } else {
        if (s.next_chunk == s.chunks.size()) return false;
        const Chunk& c = header_.chunks[s.chunks[s.next_chunk++]];
        check_segment_start(c, s);
        s.buffer_stream_offset += s.buffer.size();
        ByteBuffer room;  // the last chunk's buffer, used again
        if (c.first_record && header_.version >= 3) {
            // A segment starts: its chunks of split streams start decompressing
            // now, beside this one, not one after another at their first value.
            for (const auto& t : streams_) {
                if (!t || t.get() == &s || !t->split || t->ahead.valid() || t->next_chunk == t->chunks.size()) continue;
                if (header_.chunks[t->chunks[t->next_chunk]].segment == c.segment) decompress_ahead(*t, {});
            }
        }
        if (s.ahead.valid()) {
            Decoded d = s.ahead.get();
            d.raise(c, record_index_);
            std::swap(d.bytes, s.buffer);
            room = std::move(d.bytes);
        } else {
            load_chunk(c, s.buffer);
        }
        s.buffer_file_offset = c.start;
        decompress_ahead(s, std::move(room));
        if (c.first_record) {
            starts = &c;
            state = state_block(c);
        }
    }
    bytes_loaded_ += s.buffer.size();
    s.read = 0;
    // After the chunk's bytes are counted, so that they pay for setting the encodings afresh.
    if (starts) start_segment(state, *starts);
    return true;
}

// A file: the state block of the segment that chunk `c` starts.
std::vector<std::byte> TraceReader::state_block(const Chunk& c) {
    if (header_.version < 3) return {};
    const Segment& seg = header_.segments.at(c.segment);
    std::vector<std::byte> block(seg.state_size);
    file_.read_at(seg.state_offset, block.data(), block.size());
    return block;
}

void TraceReader::check_segment_end(std::size_t segment) const {
    for (std::size_t n = 0; n < streams_.size(); ++n) {
        const Stream* s = streams_[n].get();
        if (!s || s->mode != Stream::Mode::records) continue;
        const std::size_t read = s == stream_ ? static_cast<std::size_t>(pos_ - s->buffer.data()) : s->read;
        // Records left in the chunk held, or in a chunk not loaded of a segment before `segment`.
        const bool left = read != s->buffer.size();
        const bool unloaded = s->next_chunk < s->chunks.size() && header_.chunks[s->chunks[s->next_chunk]].segment < segment;
        if (left || unloaded) {
            const std::uint64_t at = left ? s->buffer_file_offset + read : header_.chunks[s->chunks[s->next_chunk]].start;
            throw TraceError(ErrorKind::bad_section,
                             "the segment frames count " + std::to_string(record_index_) + " records up to here, but section " +
                                 std::to_string(n) + "'s chunks hold more",
                             at, static_cast<int>(n), record_index_);
        }
    }
}

// Starts reading at segment k (a file): the state blocks of version 3 make
// any segment a place to start; other versions start at segment 0 only.
void TraceReader::seek_segment(std::size_t k) {
    const std::size_t count = header_.segments.size();
    if (streaming_ || header_.version < 2 || (header_.version < 3 && k != 0) || k > count) {
        throw TraceError(ErrorKind::usage,
                         streaming_ || header_.version < 2 ? "only a file of container version 2 or later can be read from a segment"
                         : k > count ? "segment " + std::to_string(k) + " is past the trace's " + std::to_string(count)
                                     : "a segment of a version-2 trace needs the segments before it; read it from the start",
                         0, -1, record_index_);
    }
    for (const auto& stream : streams_) {
        if (!stream) continue;
        Stream& s = *stream;
        s.ahead = {};  // waits for a chunk being decompressed
        s.buffer.clear();
        s.read = 0;
        s.cursor = 0;
        s.mode = Stream::Mode::unused;
        s.next_chunk = 0;
        s.buffer_stream_offset = 0;
        while (s.next_chunk < s.chunks.size() && header_.chunks[s.chunks[s.next_chunk]].segment < k) {
            s.buffer_stream_offset += header_.chunks[s.chunks[s.next_chunk++]].decoded;
        }
    }
    const std::uint8_t start = k < count ? header_.segments[k].start_section : 0;
    streams_[0]->mode = Stream::Mode::records;
    streams_[start]->mode = Stream::Mode::records;
    record_index_ = k < count ? header_.segments[k].first_record : header_.record_count;
    ended_ = false;
    if (header_.version < 3) {
        // Segment 0 of version 2: the DTD's encodings. (A version-3 segment sets them when its first chunk loads.)
        reset_encodings();
        for (std::uint32_t i = 0; i < dtd_->record_count; ++i) set_plan(i);
    }
    enter_section(start);
}

// A pipe: reads the next segment, queueing its chunks by section; false at
// the end frame. The container's errors (a bad frame, a chunk cut short) come
// between records here, not before the first: they name the record reached.
bool TraceReader::pull_segment() {
    if (stream_ended_) return false;
    try {
        return read_next_segment();
    } catch (const TraceError& e) {
        if (!e.has_position) throw;
        throw TraceError(e.kind, e.message, e.offset, e.section, record_index_);
    }
}

bool TraceReader::read_next_segment() {
    Segment seg;
    if (!read_segment(file_, header_, next_segment_, static_cast<std::uint32_t>(segments_seen_.size()), seg, true)) {
        header_.index_offset = next_segment_;
        read_end(file_, header_, segments_seen_, header_.record_count);
        stream_ended_ = true;
        return false;
    }
    number_segment(seg, header_.record_count);
    header_.record_count += seg.records;
    for (const Chunk& c : seg.chunks) {
        Stream& target = stream_of(c);
        // Counted at their decoded size, which the frame has bounded, with the state block that travels with one.
        pending_bytes_ += c.decoded + (c.first_record ? seg.state.size() : 0);
        if (pending_bytes_ > max_pending_bytes) {
            throw TraceError(ErrorKind::bad_section, "more than 1 GiB of chunks and state blocks wait for sections that the records do not reach",
                             c.start, c.section, record_index_);
        }
        ByteBuffer bytes = read_arriving(file_, c.size, "a chunk");
        if (c.codec != 0) {
            const ByteBuffer stored = std::move(bytes);
            decode_chunk(c, stored, bytes);
        } else {
            check_chunk(header_, c, bytes, record_index_);
        }
        if (target.table) append_table(target, c.section, bytes);
        target.pending.push_back(Arrived{c, std::move(bytes), c.first_record ? std::move(seg.state) : std::vector<std::byte>{}});
        header_.chunks.push_back(c);
    }
    next_segment_ = seg.end;
    seg.chunks.clear();
    seg.state.clear();
    segments_seen_.push_back(std::move(seg));
    return true;
}

// The current section's chunk is used up: load the next one, or end the trace.
bool TraceReader::next_chunk() {
    if (ended_) return false;
    Stream& s = *stream_;
    s.read = s.buffer.size();
    while (s.read == s.buffer.size()) {
        if (!load_next_chunk(s)) {
            finish();
            return false;
        }
    }
    pos_ = s.buffer.data() + s.read;
    set_end(s.buffer.data() + s.buffer.size());
    return true;
}

}  // namespace metatf::rt
