// The Meta-TF container, version 2 (docs/trace-format.md sections 1 and 7;
// the benchmark's generated writers write version 2 too, so the two traces
// compare byte for byte), written and read by hand for the benchmark's
// hand-written codecs: a 64-bit little-endian trace of one section, so each
// segment holds one chunk.
//
// Both sides do the I/O that the runtime does. The writer buffers records,
// and once the buffer holds 1 MiB or more after a record it writes one
// segment (frame, then the chunk); close() writes the last segment and the
// end frame, then flushes, syncs and renames the file into place. The reader
// checks the footer, walks the segment frames from the data start (one small
// read each), checks the end frame against them, then freads each chunk into
// a vector resized to it.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

// The container's identity: what the prologue embeds.
struct Container {
    std::uint64_t fingerprint;
    std::string_view name;
    std::string_view text;
};

namespace hw {

[[noreturn, gnu::cold]] inline void fail(const std::string& why) { throw std::runtime_error("hand-written codec: " + why); }

inline void put16(std::byte* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
inline void put32(std::byte* p, std::uint32_t v) { std::memcpy(p, &v, 4); }
inline void put64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, 8); }
inline std::uint16_t get16(const std::byte* p) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline std::uint32_t get32(const std::byte* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline std::uint64_t get64(const std::byte* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

struct File {
    std::FILE* f;
    File(const std::string& path, const char* mode) : f(std::fopen(path.c_str(), mode)) {
        if (!f) fail("cannot open " + path);
    }
    ~File() {
        if (f) std::fclose(f);
    }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    void write(const void* data, std::size_t n) {
        if (std::fwrite(data, 1, n, f) != n) fail("write error");
    }
    void read_at(std::uint64_t offset, void* out, std::size_t n) {
        if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fread(out, 1, n, f) != n) fail("read error");
    }
    std::uint64_t size() {
        if (std::fseek(f, 0, SEEK_END) != 0) fail("seek error");
        return static_cast<std::uint64_t>(std::ftell(f));
    }
    // Flushes, syncs and closes, as the runtime's OutputFile::commit() does, then renames.
    void commit(const std::string& temporary, const std::string& path) {
        const bool ok = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
        if (std::fclose(f) != 0 || !ok) fail("write error");
        f = nullptr;
        if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("cannot rename " + temporary);
    }
};

// Sizes of the version-2 pieces in a 64-bit trace.
inline constexpr std::size_t ident_size = 16;
inline constexpr std::size_t frame_size = 8 + 8 + 8 + 4 + 8 + 8;  // fixed part, records, state length, one chunk entry
inline constexpr std::size_t footer_size = 8 + 4;
inline constexpr char end_magic[4] = {'\177', 'E', 'N', 'D'};

inline std::vector<std::byte> prologue(const Container& c) {
    std::vector<std::byte> p(ident_size + 8 + c.name.size() + c.text.size());
    std::memcpy(p.data(), "\177MTF", 4);
    p[4] = std::byte{2};  // 64-bit class
    p[5] = std::byte{1};  // little-endian
    p[6] = static_cast<std::byte>(c.name.size());
    p[7] = std::byte{2};  // container version
    put64(p.data() + 8, c.fingerprint);
    put64(p.data() + 16, c.text.size());
    std::memcpy(p.data() + 24, c.name.data(), c.name.size());
    std::memcpy(p.data() + 24 + c.name.size(), c.text.data(), c.text.size());
    return p;
}

inline std::size_t prologue_size(const Container& c) { return ident_size + 8 + c.name.size() + c.text.size(); }

// A segment frame for one chunk of section 0 holding `records` records.
inline void encode_frame(std::byte* p, std::uint64_t records, std::uint64_t size) {
    std::memset(p, 0, frame_size);
    p[0] = std::byte{'S'};
    put16(p + 2, 1);  // one chunk
    put64(p + 8, records);
    put64(p + 16, 0);  // no state block
    // the chunk entry: section 0, codec 0 (stored), reserved, stored size, decoded size
    put64(p + 28, size);
    put64(p + 36, size);
}

struct SegmentRef {
    std::uint64_t offset, first_record;
};

// Records go to a buffer that is written as a segment once it holds 1 MiB or
// more after a record; a metadata record never ends one (as in the runtime's
// writer: the record it announces was fitted to the state before it).
class TraceOut {
public:
    static constexpr std::size_t chunk_bytes = std::size_t(1) << 20;
    static constexpr std::size_t max_record = 1024;  // room after a full buffer for a record and the metadata around it

    TraceOut(const std::string& path, const Container& c)
        : path_(path), temporary_(path + ".partial"), file_(temporary_, "wb"),
          buffer_(std::make_unique<std::byte[]>(chunk_bytes + max_record)) {
        const auto p = prologue(c);
        file_.write(p.data(), p.size());
        position_ = p.size();
    }

    std::byte* at() { return buffer_.get() + used_; }
    void commit(std::size_t n) {
        commit_metadata(n);
        if (used_ >= chunk_bytes) flush();
    }
    // Metadata never flushes (a segment ends after a data record only), so
    // the records after a full buffer must stay within max_record.
    void commit_metadata(std::size_t n) {
        used_ += n;
        ++records_;
        if (used_ > chunk_bytes + max_record) throw std::logic_error("hw_container: records past max_record after a full buffer");
    }

    void close() {
        flush();
        std::vector<std::byte> end(8 + 16 + 16 * segments_.size() + footer_size);
        end[0] = std::byte{'E'};
        put64(end.data() + 8, records_);
        put64(end.data() + 16, segments_.size());
        std::byte* p = end.data() + 24;
        for (const SegmentRef& s : segments_) {
            put64(p, s.offset);
            put64(p + 8, s.first_record);
            p += 16;
        }
        put64(p, position_);
        std::memcpy(p + 8, end_magic, 4);
        file_.write(end.data(), end.size());
        file_.commit(temporary_, path_);
    }

private:
    void flush() {
        if (used_ == 0) return;
        std::byte frame[frame_size];
        encode_frame(frame, records_ - segment_first_, used_);
        file_.write(frame, frame_size);
        file_.write(buffer_.get(), used_);
        segments_.push_back({position_, segment_first_});
        position_ += frame_size + used_;
        segment_first_ = records_;
        used_ = 0;
    }

    std::string path_, temporary_;
    File file_;
    std::unique_ptr<std::byte[]> buffer_;
    std::size_t used_ = 0;
    std::uint64_t position_ = 0, records_ = 0, segment_first_ = 0;
    std::vector<SegmentRef> segments_;
};

// A chunk of the trace: where its bytes are and how many records it holds.
struct ChunkRef {
    std::uint64_t start, size, records;
};

// Opens a trace written by TraceOut (or by the generated writer for the same
// records) and checks the container: ident, fingerprint, footer, every
// segment frame (one chunk of section 0, stored), and the end frame against
// the frames. Returns the chunks in order.
inline std::vector<ChunkRef> read_container(File& f, const Container& c) {
    std::byte head[ident_size + 8];
    f.read_at(0, head, sizeof head);
    if (std::memcmp(head, "\177MTF", 4) != 0 || head[4] != std::byte{2} || head[5] != std::byte{1} || head[7] != std::byte{2} ||
        get64(head + 8) != c.fingerprint) {
        fail("not a 64-bit little-endian version-2 trace of this DTD");
    }
    const std::uint64_t data_start = sizeof head + std::to_integer<std::uint64_t>(head[6]) + get64(head + 16);
    const std::uint64_t file_size = f.size();
    std::byte footer[footer_size];
    if (file_size < data_start + footer_size) fail("the trace has no end frame");
    f.read_at(file_size - footer_size, footer, footer_size);
    const std::uint64_t end_offset = get64(footer);
    if (std::memcmp(footer + 8, end_magic, 4) != 0 || end_offset < data_start || end_offset > file_size - footer_size) {
        fail("the trace has no end frame");
    }
    std::vector<ChunkRef> chunks;
    std::vector<SegmentRef> segments;
    std::uint64_t records = 0;
    for (std::uint64_t at = data_start; at != end_offset;) {
        std::byte frame[frame_size];
        if (end_offset - at < frame_size) fail("a segment frame runs into the end frame");
        f.read_at(at, frame, frame_size);
        const std::uint64_t size = get64(frame + 28);
        if (frame[0] != std::byte{'S'} || frame[1] != std::byte{0} || get16(frame + 2) != 1 || get32(frame + 4) != 0 ||
            get64(frame + 16) != 0 || get32(frame + 24) != 0 || get64(frame + 36) != size) {
            fail("a segment frame other than one stored chunk of section 0, at byte " + std::to_string(at));
        }
        if (size > end_offset - at - frame_size) fail("a chunk runs into the end frame, at byte " + std::to_string(at));
        segments.push_back({at, records});
        chunks.push_back({at + frame_size, size, get64(frame + 8)});
        records += chunks.back().records;
        at += frame_size + size;
    }
    std::vector<std::byte> end(file_size - end_offset);
    f.read_at(end_offset, end.data(), end.size());
    if (end.size() != 24 + 16 * segments.size() + footer_size || end[0] != std::byte{'E'} || get64(end.data() + 8) != records ||
        get64(end.data() + 16) != segments.size() ||
        // a SegmentRef is two little-endian words, as an entry of the segment index is
        std::memcmp(end.data() + 24, segments.data(), 16 * segments.size()) != 0) {
        fail("the end frame does not match the segments");
    }
    for (int i = 1; i < 8; ++i) {
        if (end[static_cast<std::size_t>(i)] != std::byte{0}) fail("the end frame's reserved bytes are not 0");
    }
    return chunks;
}

// Reads the trace at `path` chunk by chunk into one buffer, `padding` bytes
// longer than the chunk (so a decoder may load a whole word at its last
// field), and hands each chunk to `decode(begin, end)`, which returns the
// number of records in it: that must be the count its segment frame gives.
// Without Decode it only does the I/O, the floor under both readers.
template <bool Decode, typename Fn>
void read_chunks(const std::string& path, const Container& c, std::size_t padding, Fn&& decode) {
    File f(path, "rb");
    std::vector<std::byte> buffer;
    for (const ChunkRef& chunk : read_container(f, c)) {
        buffer.resize(chunk.size + padding);
        f.read_at(chunk.start, buffer.data(), chunk.size);
        if (Decode && decode(buffer.data(), buffer.data() + chunk.size) != chunk.records) {
            fail("a chunk does not hold the records its segment frame counts, at byte " + std::to_string(chunk.start));
        }
    }
}

// Writes a finished file image the way both writers do (a segment's frame
// and chunk at a time, then sync and rename): the I/O floor under both writers.
inline void write_image(const std::string& path, std::span<const std::byte> image, const std::vector<ChunkRef>& chunks,
                        std::size_t prologue_bytes) {
    const std::string temporary = path + ".partial";
    File f(temporary, "wb");
    f.write(image.data(), prologue_bytes);
    for (const ChunkRef& c : chunks) {
        f.write(image.data() + c.start - frame_size, frame_size);
        f.write(image.data() + c.start, c.size);
    }
    const std::size_t tail = chunks.empty() ? prologue_bytes : chunks.back().start + chunks.back().size;
    f.write(image.data() + tail, image.size() - tail);
    f.commit(temporary, path);
}

}  // namespace hw
}  // namespace bench
