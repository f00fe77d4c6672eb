// The Meta-TF trace file around the records: the prologue (ident, embedded
// DTD), then segments of chunks, then an end frame that indexes them.
// docs/trace-format.md describes both layouts byte by byte.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metatf/core/byte_buffer.hpp"
#include "metatf/core/bytes.hpp"

namespace metatf::rt {

inline constexpr char magic[4] = {'\177', 'M', 'T', 'F'};
// Version 6 is version 5 whose state blocks may each be one zstd frame;
// version 5 is version 4 whose embedded DTD text is one zstd frame (writers
// that compress their chunks write 6, and 4 otherwise).
// Version 4 is version 3 with a CRC32C over every byte but the end frame's
// (checksum.hpp); version 3 streams segments that each decode alone (a
// state block opens each one); version 2 streams segments that depend on
// those before them; version 1 has its index at the end and counts in the
// header, patched on close. All six are read and written.
inline constexpr std::uint8_t container_version = 6;
// magic, class, byte order, name length, version, then the DTD's 8-byte fingerprint
inline constexpr std::size_t ident_size = 16;
// Bounds what a hostile prologue can make a reader allocate before it has seen any data.
inline constexpr std::uint64_t max_dtd_text = std::uint64_t(16) << 20;
// Bounds one segment's state block (a few bytes per field that metadata changed).
inline constexpr std::uint64_t max_state_bytes = std::uint64_t(16) << 20;
// Bounds what a hostile trace can make a reader allocate for one chunk, stored or decoded.
inline constexpr std::uint64_t max_chunk_bytes = std::uint64_t(1) << 28;

enum class Class : std::uint8_t { bits32 = 1, bits64 = 2 };

// One contiguous piece of a section's bytes. A section is the concatenation
// of its chunks in file order; the main record stream is section 0.
struct Chunk {
    std::uint8_t section = 0;
    std::uint8_t codec = 0;   // ChunkCodec (codec.hpp): 0 stored as is, 1 zstd, 2 zstd in byte planes
    std::uint64_t start = 0;  // file offset of the chunk's bytes
    std::uint64_t size = 0;   // stored bytes
    std::uint64_t decoded = 0;  // bytes once decoded (version 2; equal to size when stored)
    std::uint64_t entry = 0;  // file offset of its entry: in the section index (version 1) or its segment frame
    // Version 2, the chunk of its segment's start section: the index of the
    // segment's first record, which starts the chunk (see number_segment()).
    std::optional<std::uint64_t> first_record = std::nullopt;
    std::uint32_t segment = 0;  // version 2 and later: the index of its segment
    std::uint64_t frame = 0;    // version 2 and later: the file offset of its segment's frame
    std::uint32_t crc = 0;      // version 4: the CRC32C of its stored bytes
    std::uint8_t planes = 0;    // codec 2: its byte planes, 2 to 8 (the entry's first reserved byte)
};

// A segment (version 2 and later): the chunks of every section that a writer flushed at once.
struct Segment {
    std::uint64_t offset = 0;        // file offset of the segment frame
    std::uint64_t end = 0;           // file offset just past its last chunk
    std::uint64_t first_record = 0;  // index of its first record in the trace
    std::uint64_t records = 0;       // records whose bytes it holds
    std::uint8_t start_section = 0;  // the section being read when it begins
    std::vector<Chunk> chunks;       // at most one per section
    // Version 3: the state block (segment_state.hpp), at state_offset in the
    // file; its bytes are in `state` where the reader asked for them.
    std::uint64_t state_offset = 0, state_size = 0;
    std::vector<std::byte> state;
};

struct Header {
    Class cls = Class::bits64;
    ByteOrder order = ByteOrder::little;
    std::uint8_t version = container_version;
    std::uint64_t data_start = 0;       // first byte after the embedded DTD
    std::uint64_t record_count = 0;     // every record, predefined ones included (when known)
    std::uint64_t index_offset = 0;     // version 1: the section index; version 2: the end frame
    std::uint64_t dtd_fingerprint = 0;  // see fingerprint() in descriptor.hpp
    std::string dtd_name;
    std::string dtd_text;
    std::string dtd_stored;  // versions 5 and 6: the DTD text as the file holds it, a zstd frame (else empty)
    std::vector<Chunk> chunks;  // every chunk in file order, when the file was indexed
    std::vector<Segment> segments;  // versions 2 and later in a file: every segment, without its chunks and state bytes

    unsigned word() const { return cls == Class::bits32 ? 4 : 8; }
    // The offset of the DTD name in the file.
    std::uint64_t name_offset() const { return data_start - stored_text().size() - dtd_name.size(); }
    const std::string& stored_text() const { return version >= 5 ? dtd_stored : dtd_text; }
};

// A trace file being read: a regular file (read at offsets) or a pipe
// (read in order). Errors are TraceErrors naming the file.
class InputFile {
public:
    // "-" is standard input.
    explicit InputFile(const std::string& path);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    bool seekable() const { return seekable_; }
    std::uint64_t size() const { return size_; }  // seekable files only
    std::uint64_t position() const { return position_; }
    const std::string& name() const { return name_; }
    // Reads exactly n bytes at the position (a pipe cannot go back); `what`
    // names them for the error when the input ends first.
    void read(std::byte* out, std::size_t n, const char* what);
    // Moves the position (seekable files only).
    void seek(std::uint64_t offset);
    // Reads n bytes at `offset` (seekable files only).
    void read_at(std::uint64_t offset, std::byte* out, std::size_t n);
    // Up to n bytes at the position; fewer only at the end of the input.
    std::size_t read_some(std::byte* out, std::size_t n);

private:
    std::string name_;
    std::FILE* file_ = nullptr;
    bool owned_ = false, seekable_ = false;
    std::uint64_t size_ = 0, position_ = 0;
};

// ---- writing
std::vector<std::byte> encode_prologue(const Header& h);
std::vector<std::byte> encode_index(const Header& h);  // version 1
// A segment frame and its state block (version 3); its chunks' bytes follow
// it in the order of `s.chunks`.
std::vector<std::byte> encode_segment(const Header& h, const Segment& s);
// The end frame: the totals, the segment index and the footer.
std::vector<std::byte> encode_end(const Header& h, const std::vector<Segment>& segments, std::uint64_t records);

// ---- reading
// Reads and checks the prologue at the start of `in`. For a seekable file it
// also reads the index (version 1) or the end frame and every segment frame
// (version 2), filling `chunks` and `record_count`; throws TraceError.
Header read_header(InputFile& in);
// Reads the prologue only (for streaming, and for recovery).
Header read_prologue(InputFile& in);
// Reads the frame of segment `index` at in.position(), which is `offset` (a
// pipe reads in order), and checks it (version 4: with its state block,
// against their checksum); the chunks' bytes follow. With `keep_state` the
// state block is read into out.state. Returns false at the end frame, whose
// kind byte has then been consumed.
bool read_segment(InputFile& in, const Header& h, std::uint64_t offset, std::uint32_t index, Segment& out, bool keep_state);
// Version 4: why chunk `c`, whose stored bytes are `stored`, is damaged (they
// do not match the checksum of its entry), naming its segment; nothing when
// they match or the version has no checksums.
std::optional<std::string> chunk_damage(const Header& h, const Chunk& c, std::span<const std::byte> stored);
// chunk_damage() as the TraceError at the chunk's first byte, the reader at `record`.
void check_chunk(const Header& h, const Chunk& c, std::span<const std::byte> stored, std::uint64_t record);
// Reads `size` bytes at the position into a buffer that grows with the bytes
// that arrive, not to the size a frame claims: a short input that claims a
// large block costs no more memory than it holds.
ByteBuffer read_arriving(InputFile& in, std::uint64_t size, const char* what);
// Gives a segment read by read_segment() its first record's index, and marks
// the chunk where that record starts (the reader checks that it is there).
void number_segment(Segment& s, std::uint64_t first_record);
// Reads the rest of an end frame whose kind byte read_segment() consumed,
// checks it against the segments seen, and checks that the input ends there.
void read_end(InputFile& in, const Header& h, const std::vector<Segment>& seen, std::uint64_t records);

}  // namespace metatf::rt
