#include "metatf/container/container.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "metatf/container/checksum.hpp"
#include "metatf/container/codec.hpp"
#include "metatf/core/error.hpp"

namespace metatf::rt {

namespace {

// Version 1's fixed words after the ident, each one machine word of the class.
enum Word { chunk_count, data_start, record_count, index_offset, text_length, word_count };

constexpr std::byte segment_kind{'S'}, end_kind{'E'};
constexpr char end_magic[4] = {'\177', 'E', 'N', 'D'};
constexpr std::size_t frame_fixed = 8;  // kind, start section, chunk count (2), reserved (4) or checksum (version 4)
constexpr std::size_t sum_size = 4;     // a CRC32C, in the trace's byte order
constexpr std::size_t frame_sum_at = 4;

[[noreturn]] void header_error(ErrorKind kind, const std::string& message, std::uint64_t offset) {
    throw TraceError(kind, message, offset, -1, 0);
}

void put_text(std::vector<std::byte>& out, const std::string& s) {
    for (char c : s) out.push_back(static_cast<std::byte>(c));
}

bool all_zero(const std::byte* p, std::size_t n) {
    return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

std::uint64_t take(InputFile& in, const Header& h, unsigned width, const char* what) {
    std::byte b[8];
    in.read(b, width, what);
    return load_uint(b, width, h.order);
}

// A chunk entry before its two sizes: section, codec, reserved (2), and in version 4 the chunk's checksum.
std::uint64_t chunk_fixed(const Header& h) { return h.version >= 4 ? 4 + sum_size : 4; }
std::uint64_t entry_size(const Header& h) { return chunk_fixed(h) + 2 * h.word(); }
std::uint64_t frame_size(const Header& h, std::size_t chunks) { return frame_fixed + 2 * h.word() + chunks * entry_size(h); }

// Version 4: where the prologue's checksum is, after the ident and the DTD text's length.
std::uint64_t prologue_sum_at(const Header& h) { return ident_size + h.word(); }

// The CRC32C of `bytes` with the 4 bytes at `at`, where it is stored, taken as 0.
std::uint32_t sum_without(std::span<const std::byte> bytes, std::size_t at) {
    constexpr std::byte zero[sum_size] = {};
    std::uint32_t crc = crc32c(bytes.first(at));
    crc = crc32c(zero, crc);
    return crc32c(bytes.subspan(at + sum_size), crc);
}

std::uint32_t stored_sum(const Header& h, const std::byte* at) { return static_cast<std::uint32_t>(load_uint(at, sum_size, h.order)); }
void store_sum(const Header& h, std::vector<std::byte>& out, std::size_t at, std::uint32_t crc) { store_uint(out.data() + at, crc, sum_size, h.order); }

std::string segment_name(std::uint32_t index, std::uint64_t frame) {
    return "segment " + std::to_string(index) + " at byte " + std::to_string(frame);
}

// Version 1: the words, then the section index at the end of the file.
void read_index_v1(InputFile& in, Header& h, const std::byte* words) {
    const unsigned w = h.word();
    const std::uint64_t file_size = in.size();
    auto word = [&](Word i) { return load_uint(words + i * w, w, h.order); };
    const std::uint64_t chunks = word(chunk_count);
    h.record_count = word(record_count);
    h.index_offset = word(index_offset);
    if (word(Word::data_start) != h.data_start) {
        header_error(ErrorKind::bad_header, "data starts at byte " + std::to_string(word(Word::data_start)) +
                                                ", not right after the embedded DTD", ident_size + w);
    }
    const std::uint64_t entry = 3ull * w;
    if (h.index_offset < h.data_start || h.index_offset > file_size || chunks > (file_size - h.index_offset) / entry ||
        h.index_offset + chunks * entry != file_size) {
        header_error(ErrorKind::bad_section, "the section index does not fit between the data and the end of the file",
                     ident_size + 3ull * w);
    }
    std::vector<std::byte> index(chunks * entry);
    in.read_at(h.index_offset, index.data(), index.size());
    std::uint64_t expected_start = h.data_start;
    for (std::uint64_t i = 0; i < chunks; ++i) {
        const std::byte* e = index.data() + i * entry;
        const std::uint64_t at = h.index_offset + i * entry;
        Chunk c;
        c.entry = at;
        const std::uint64_t number = load_uint(e, w, h.order);
        c.start = load_uint(e + w, w, h.order);
        c.size = load_uint(e + 2 * w, w, h.order);
        c.decoded = c.size;
        if (number > 255) header_error(ErrorKind::bad_section, "section number " + std::to_string(number) + " is out of range", at);
        if (c.start != expected_start || c.size > h.index_offset - c.start) {
            header_error(ErrorKind::bad_section, "chunk " + std::to_string(i) + " of the section index is out of place", at);
        }
        c.section = static_cast<std::uint8_t>(number);
        expected_start = c.start + c.size;
        h.chunks.push_back(c);
    }
    if (expected_start != h.index_offset) {
        header_error(ErrorKind::bad_section, "the section index does not cover the data", h.index_offset);
    }
}

// Versions 2 and 3 in a file: the footer must be there (the writer finished), then
// every segment frame is read in turn, skipping the chunks' bytes.
void read_segments_v2(InputFile& in, Header& h) {
    const unsigned w = h.word();
    const std::uint64_t footer = w + sizeof end_magic;
    std::byte tail[12];
    const bool has_footer = in.size() >= h.data_start + footer;
    if (has_footer) in.read_at(in.size() - footer, tail, footer);
    if (!has_footer || std::memcmp(tail + w, end_magic, sizeof end_magic) != 0) {
        header_error(ErrorKind::truncated,
                     "the trace has no end frame: its writer did not finish it ('mtf recover' saves its complete segments)",
                     in.size());
    }
    std::vector<Segment> seen;
    std::uint64_t records = 0;
    in.seek(h.data_start);
    for (Segment s; read_segment(in, h, in.position(), static_cast<std::uint32_t>(seen.size()), s, false);) {
        number_segment(s, records);
        records += s.records;
        h.chunks.insert(h.chunks.end(), s.chunks.begin(), s.chunks.end());
        in.seek(s.end);
        s.chunks.clear();
        seen.push_back(std::move(s));
    }
    h.index_offset = in.position() - 1;
    read_end(in, h, seen, records);
    h.record_count = records;
    h.segments = std::move(seen);
}

}  // namespace

std::vector<std::byte> encode_prologue(const Header& h) {
    std::vector<std::byte> out;
    put_text(out, std::string(magic, sizeof magic));
    out.push_back(static_cast<std::byte>(h.cls));
    out.push_back(static_cast<std::byte>(h.order));
    out.push_back(static_cast<std::byte>(h.dtd_name.size()));
    out.push_back(static_cast<std::byte>(h.version));
    append_uint(out, h.dtd_fingerprint, 8, h.order);
    const unsigned w = h.word();
    if (h.version == 1) {
        append_uint(out, h.chunks.size(), w, h.order);
        append_uint(out, h.data_start, w, h.order);
        append_uint(out, h.record_count, w, h.order);
        append_uint(out, h.index_offset, w, h.order);
    }
    append_uint(out, h.stored_text().size(), w, h.order);
    if (h.version >= 4) out.resize(out.size() + sum_size);
    put_text(out, h.dtd_name);
    put_text(out, h.stored_text());
    if (h.version >= 4) store_sum(h, out, prologue_sum_at(h), sum_without(out, prologue_sum_at(h)));
    return out;
}

std::vector<std::byte> encode_index(const Header& h) {
    std::vector<std::byte> out;
    for (const Chunk& c : h.chunks) {
        append_uint(out, c.section, h.word(), h.order);
        append_uint(out, c.start, h.word(), h.order);
        append_uint(out, c.size, h.word(), h.order);
    }
    return out;
}

std::vector<std::byte> encode_segment(const Header& h, const Segment& s) {
    std::vector<std::byte> out{segment_kind, std::byte{s.start_section}};
    append_uint(out, s.chunks.size(), 2, h.order);
    out.resize(frame_fixed);
    append_uint(out, s.records, h.word(), h.order);
    append_uint(out, s.state.size(), h.word(), h.order);
    for (const Chunk& c : s.chunks) {
        out.insert(out.end(), {std::byte{c.section}, std::byte{c.codec}, std::byte{c.planes}, std::byte{0}});
        if (h.version >= 4) append_uint(out, c.crc, sum_size, h.order);
        append_uint(out, c.size, h.word(), h.order);
        append_uint(out, c.decoded, h.word(), h.order);
    }
    out.insert(out.end(), s.state.begin(), s.state.end());
    if (h.version >= 4) store_sum(h, out, frame_sum_at, sum_without(out, frame_sum_at));
    return out;
}

std::vector<std::byte> encode_end(const Header& h, const std::vector<Segment>& segments, std::uint64_t records) {
    std::vector<std::byte> out{end_kind};
    out.resize(frame_fixed);
    append_uint(out, records, h.word(), h.order);
    append_uint(out, segments.size(), h.word(), h.order);
    for (const Segment& s : segments) {
        append_uint(out, s.offset, h.word(), h.order);
        append_uint(out, s.first_record, h.word(), h.order);
    }
    append_uint(out, h.index_offset, h.word(), h.order);
    put_text(out, std::string(end_magic, sizeof end_magic));
    return out;
}

namespace {

// Versions 5 and 6: the DTD text from its zstd frame, which starts at `at` in the file.
void decompress_dtd(Header& h, std::uint64_t at) {
    const auto frame = std::as_bytes(std::span(h.dtd_stored.data(), h.dtd_stored.size()));
    if (!zstd_frame(frame)) header_error(ErrorKind::bad_header, "the embedded DTD of a version-" + std::to_string(h.version) + " trace is not a zstd frame", at);
    std::vector<std::byte> text;
    if (auto problem = decompress_frame(frame, std::min(max_dtd_text, max_decoded(frame.size())), text)) {
        header_error(ErrorKind::bad_header, "the embedded DTD does not decode: " + *problem, at);
    }
    h.dtd_text.assign(reinterpret_cast<const char*>(text.data()), text.size());
}

}  // namespace

Header read_prologue(InputFile& in) {
    Header h;
    std::byte ident[ident_size];
    const std::size_t got = in.read_some(ident, ident_size);
    if (std::memcmp(ident, magic, std::min(got, sizeof magic)) == 0 && got < ident_size) {
        header_error(ErrorKind::bad_header, "the file is too short for a Meta-TF header", got);
    }
    if (std::memcmp(ident, magic, sizeof magic) != 0) {
        header_error(ErrorKind::bad_magic, "not a Meta-TF trace (the file does not start with \\177MTF)", 0);
    }
    const auto cls = std::to_integer<unsigned>(ident[4]);
    const auto order = std::to_integer<unsigned>(ident[5]);
    if (cls != 1 && cls != 2) header_error(ErrorKind::bad_header, "unknown class " + std::to_string(cls), 4);
    if (order != 1 && order != 2) header_error(ErrorKind::bad_header, "unknown byte order " + std::to_string(order), 5);
    h.version = std::to_integer<std::uint8_t>(ident[7]);
    if (h.version < 1 || h.version > container_version) {
        header_error(ErrorKind::bad_header, "container version " + std::to_string(h.version) + " is not supported", 7);
    }
    if (h.version == 1 && !in.seekable()) {
        header_error(ErrorKind::usage, "a version-1 trace keeps its index at the end; read it from a file, not a pipe", 7);
    }
    h.cls = static_cast<Class>(cls);
    h.order = static_cast<ByteOrder>(order);
    h.dtd_fingerprint = load_uint(ident + 8, 8, h.order);
    const unsigned w = h.word();
    const unsigned words = h.version == 1 ? word_count : 1;
    std::byte buffer[word_count * 8];
    in.read(buffer, words * w, "the header's words");
    const std::uint64_t text = load_uint(buffer + (words - 1) * w, w, h.order);
    const std::uint64_t name_length = std::to_integer<unsigned>(ident[6]);
    const std::uint64_t sum = h.version >= 4 ? sum_size : 0;
    const std::uint64_t prologue = ident_size + words * w + sum + name_length;
    if (text > max_dtd_text) {
        header_error(ErrorKind::bad_header, "the embedded DTD is " + std::to_string(text) + " bytes long, more than the " +
                                                std::to_string(max_dtd_text) + " (16 MiB) a reader takes", ident_size + (words - 1) * w);
    }
    if (in.seekable() && prologue + text > in.size()) {
        header_error(ErrorKind::bad_header, "the embedded DTD runs past the end of the file", ident_size + words * w);
    }
    std::byte stored[sum_size];
    if (sum) in.read(stored, sum, "the header's checksum");
    h.dtd_name.resize(name_length);
    in.read(reinterpret_cast<std::byte*>(h.dtd_name.data()), name_length, "the DTD name");
    std::string& kept = h.version >= 5 ? h.dtd_stored : h.dtd_text;
    kept.resize(text);
    in.read(reinterpret_cast<std::byte*>(kept.data()), text, "the embedded DTD");
    h.data_start = prologue + text;
    // The bytes read, encoded again, carry the checksum they should have had.
    if (sum && stored_sum(h, stored) != stored_sum(h, encode_prologue(h).data() + prologue_sum_at(h))) {
        header_error(ErrorKind::checksum, "the header and the embedded DTD do not match their checksum", prologue_sum_at(h));
    }
    if (h.version >= 5) decompress_dtd(h, prologue);
    if (h.version == 1) read_index_v1(in, h, buffer);
    return h;
}

Header read_header(InputFile& in) {
    Header h = read_prologue(in);
    if (h.version >= 2 && in.seekable()) read_segments_v2(in, h);
    return h;
}

namespace {

// Two bytes in `order`. (load_uint's run-time width makes GCC warn, without
// optimization, that its wider cases would read past a short buffer.)
std::uint64_t load_u16(const std::byte* p, ByteOrder order) {
    const unsigned first = std::to_integer<unsigned>(p[0]), second = std::to_integer<unsigned>(p[1]);
    return order == ByteOrder::little ? first | second << 8 : first << 8 | second;
}

}  // namespace

ByteBuffer read_arriving(InputFile& in, std::uint64_t size, const char* what) {
    ByteBuffer out;
    while (out.size() < size) {
        const std::size_t have = out.size();
        const std::uint64_t step = std::min<std::uint64_t>(size - have, std::max<std::size_t>(have, std::size_t(1) << 16));
        in.read(out.extend(static_cast<std::size_t>(step)), static_cast<std::size_t>(step), what);
    }
    return out;
}

bool read_segment(InputFile& in, const Header& h, std::uint64_t offset, std::uint32_t index, Segment& out, bool keep_state) {
    const unsigned w = h.word();
    std::vector<std::byte> frame(frame_fixed + 2 * w);
    if (in.read_some(frame.data(), 1) == 0) {
        header_error(ErrorKind::truncated,
                     "the trace ends without its end frame: its writer did not finish it ('mtf recover' saves its complete segments)",
                     offset);
    }
    if (frame[0] == end_kind) return false;
    if (frame[0] != segment_kind) {
        header_error(ErrorKind::bad_section, "a segment frame should start here, not byte " +
                                                 std::to_string(std::to_integer<unsigned>(frame[0])), offset);
    }
    in.read(frame.data() + 1, frame.size() - 1, "a segment frame");
    out = Segment{};
    out.offset = offset;
    out.start_section = std::to_integer<std::uint8_t>(frame[1]);
    const std::uint64_t chunks = load_u16(frame.data() + 2, h.order);
    // First what bounds the bytes read: the chunk count and the state block's size.
    if (chunks == 0 || chunks > 256) {
        header_error(ErrorKind::bad_section, "a segment of " + std::to_string(chunks) + " chunks", offset + 2);
    }
    if (h.version < 4 && !all_zero(frame.data() + 4, 4)) {
        header_error(ErrorKind::bad_section, "a segment frame whose reserved bytes are not 0", offset + 4);
    }
    out.records = load_uint(frame.data() + frame_fixed, w, h.order);
    out.state_size = load_uint(frame.data() + frame_fixed + w, w, h.order);
    if (out.state_size != 0 && h.version < 3) {
        header_error(ErrorKind::bad_section, "a version-2 segment frame with a state block", offset + frame_fixed + w);
    }
    if (out.state_size > max_state_bytes) {
        header_error(ErrorKind::bad_section, "a state block of " + std::to_string(out.state_size) + " bytes, more than the " +
                                                 std::to_string(max_state_bytes) + " a reader takes", offset + frame_fixed + w);
    }
    if (in.seekable() && out.state_size > in.size()) {
        header_error(ErrorKind::truncated, "a state block of " + std::to_string(out.state_size) + " bytes runs past the end of the file",
                     offset + frame_fixed + w);
    }
    const std::size_t entries_at = frame.size();
    frame.resize(frame_size(h, chunks));
    in.read(frame.data() + entries_at, frame.size() - entries_at, "a segment frame");
    out.state_offset = offset + frame.size();
    // Then, in version 4, whether the frame and its state block are what the writer wrote.
    if (keep_state || h.version >= 4) {
        const ByteBuffer state = read_arriving(in, out.state_size, "a state block");
        out.state.assign(state.begin(), state.end());
    }
    if (h.version >= 4 && stored_sum(h, frame.data() + frame_sum_at) != crc32c(out.state, sum_without(frame, frame_sum_at))) {
        header_error(ErrorKind::checksum, segment_name(index, offset) + ": its frame and state block do not match their checksum",
                     offset + frame_sum_at);
    }
    if (!keep_state) out.state = {};
    // Then what they say.
    std::uint64_t at = out.state_offset + out.state_size;
    bool present[256] = {};
    for (std::uint64_t i = 0; i < chunks; ++i) {
        const std::uint64_t entry = offset + frame_size(h, i);
        const std::byte* head = frame.data() + (entry - offset);
        Chunk c;
        c.section = std::to_integer<std::uint8_t>(head[0]);
        c.codec = std::to_integer<std::uint8_t>(head[1]);
        c.entry = entry;
        c.segment = index;
        c.frame = offset;
        if (h.version >= 4) c.crc = stored_sum(h, head + 4);
        const std::uint64_t sizes_at = chunk_fixed(h);
        c.size = load_uint(head + sizes_at, w, h.order);
        c.decoded = load_uint(head + sizes_at + w, w, h.order);
        if (present[c.section]) header_error(ErrorKind::bad_section, "a segment with two chunks of section " + std::to_string(c.section), entry);
        present[c.section] = true;
        if (c.codec > static_cast<std::uint8_t>(ChunkCodec::zstd_planes)) {
            header_error(ErrorKind::bad_section, "a chunk stored with codec " + std::to_string(c.codec) + ", which this reader does not know", entry + 1);
        }
        if (c.codec == static_cast<std::uint8_t>(ChunkCodec::zstd_planes)) {
            c.planes = std::to_integer<std::uint8_t>(head[2]);
            if (c.planes < min_planes || c.planes > max_planes) {
                header_error(ErrorKind::bad_section, "a chunk in " + std::to_string(c.planes) + " byte planes (2 to 8 there may be)", entry + 2);
            }
        }
        if (!all_zero(head + 2 + (c.planes != 0), 2 - (c.planes != 0))) {
            header_error(ErrorKind::bad_section, "a chunk entry whose reserved bytes are not 0", entry + 2 + (c.planes != 0));
        }
        if (c.codec == 0 && c.decoded != c.size) header_error(ErrorKind::bad_section, "a stored chunk whose two sizes differ", entry + sizes_at);
        if (in.seekable() && (c.size > in.size() || at > in.size() - c.size)) {
            header_error(ErrorKind::truncated, "a chunk of " + std::to_string(c.size) + " bytes runs past the end of the file", entry + sizes_at);
        }
        // A zstd chunk's claim is bounded before anything is allocated for it (a stored one's by its size).
        if (c.codec != 0 && c.decoded > max_chunk_bytes) {
            header_error(ErrorKind::bad_section, "a chunk that decodes to " + std::to_string(c.decoded) + " bytes, more than the " +
                                                     std::to_string(max_chunk_bytes) + " a reader takes",
                         entry + sizes_at + w);
        }
        if (c.codec != 0 && c.decoded > max_decoded(c.size)) {
            header_error(ErrorKind::bad_section, "a zstd chunk of " + std::to_string(c.size) + " bytes that decodes to " +
                                                     std::to_string(c.decoded) + ", more than the " + std::to_string(max_decoded(c.size)) +
                                                     " a reader takes from it",
                         entry + sizes_at + w);
        }
        c.start = at;
        at += c.size;
        out.chunks.push_back(c);
    }
    // The segment's first record is in its start section, so that section has a chunk here.
    if (!present[out.start_section]) {
        header_error(ErrorKind::bad_section, "a segment that starts in section " + std::to_string(out.start_section) +
                                                 " but holds no chunk of it", offset + 1);
    }
    out.end = at;
    return true;
}

std::optional<std::string> chunk_damage(const Header& h, const Chunk& c, std::span<const std::byte> stored) {
    if (h.version < 4 || crc32c(stored) == c.crc) return std::nullopt;
    return segment_name(c.segment, c.frame) + ": its chunk of section " + std::to_string(c.section) + " does not match its checksum";
}

void check_chunk(const Header& h, const Chunk& c, std::span<const std::byte> stored, std::uint64_t record) {
    if (auto damage = chunk_damage(h, c, stored)) throw TraceError(ErrorKind::checksum, *damage, c.start, c.section, record);
}

void number_segment(Segment& s, std::uint64_t first_record) {
    s.first_record = first_record;
    for (Chunk& c : s.chunks) {
        if (c.section == s.start_section) c.first_record = first_record;
    }
}

void read_end(InputFile& in, const Header& h, const std::vector<Segment>& seen, std::uint64_t records) {
    const unsigned w = h.word();
    const std::uint64_t offset = in.position() - 1;
    std::byte reserved[frame_fixed - 1];
    in.read(reserved, sizeof reserved, "the end frame");
    if (!all_zero(reserved, sizeof reserved)) header_error(ErrorKind::bad_header, "an end frame whose reserved bytes are not 0", offset + 1);
    const std::uint64_t total = take(in, h, w, "the end frame");
    const std::uint64_t count = take(in, h, w, "the end frame");
    if (total != records) {
        header_error(ErrorKind::bad_header, "the end frame counts " + std::to_string(total) + " records, but the segments hold " +
                                                std::to_string(records), offset + frame_fixed);
    }
    if (count != seen.size()) {
        header_error(ErrorKind::bad_header, "the end frame counts " + std::to_string(count) + " segments, but the trace has " +
                                                std::to_string(seen.size()), offset + frame_fixed + w);
    }
    for (std::size_t i = 0; i < seen.size(); ++i) {
        const std::uint64_t at = in.position();
        const std::uint64_t where = take(in, h, w, "the end frame"), first = take(in, h, w, "the end frame");
        if (where != seen[i].offset || first != seen[i].first_record) {
            header_error(ErrorKind::bad_header, "entry " + std::to_string(i) + " of the segment index is wrong",
                         where != seen[i].offset ? at : at + w);
        }
    }
    const std::uint64_t at = in.position();
    std::byte tail[sizeof end_magic];
    const std::uint64_t back = take(in, h, w, "the end frame");
    in.read(tail, sizeof tail, "the end frame");
    if (back != offset) header_error(ErrorKind::bad_header, "the footer does not point to the end frame", at);
    if (std::memcmp(tail, end_magic, sizeof tail) != 0) header_error(ErrorKind::bad_header, "the footer does not end with \\177END", at + w);
    // The end frame is the last thing in the trace, in a file as in a pipe.
    if (in.read_some(tail, 1) != 0) header_error(ErrorKind::bad_header, "bytes follow the end frame", in.position() - 1);
}

// ---- InputFile ------------------------------------------------------------------------

InputFile::InputFile(const std::string& path) : name_(path == "-" ? "stdin" : path) {
    if (path == "-") {
        file_ = stdin;
    } else {
        file_ = std::fopen(path.c_str(), "rb");
        if (!file_) throw TraceError(ErrorKind::io, "cannot open '" + path + "': " + std::strerror(errno));
        owned_ = true;
    }
    struct stat st{};
    if (::fstat(::fileno(file_), &st) != 0) throw TraceError(ErrorKind::io, "cannot read '" + name_ + "'");
    if (S_ISDIR(st.st_mode)) throw TraceError(ErrorKind::io, "'" + name_ + "' is a directory");
    seekable_ = S_ISREG(st.st_mode);
    size_ = seekable_ ? static_cast<std::uint64_t>(st.st_size) : 0;
}

InputFile::~InputFile() {
    if (owned_) std::fclose(file_);
}

std::size_t InputFile::read_some(std::byte* out, std::size_t n) {
    const std::size_t got = std::fread(out, 1, n, file_);
    position_ += got;
    if (got < n && std::ferror(file_)) {
        throw TraceError(ErrorKind::io, "cannot read '" + name_ + "': " + std::strerror(errno), position_, -1, 0);
    }
    return got;
}

void InputFile::read(std::byte* out, std::size_t n, const char* what) {
    if (read_some(out, n) != n) {
        throw TraceError(ErrorKind::truncated, std::string("the trace ends in the middle of ") + what, position_, -1, 0);
    }
}

void InputFile::seek(std::uint64_t offset) {
    if (offset > size_ || std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) {
        throw TraceError(ErrorKind::truncated, "offset " + std::to_string(offset) + " is past the end of the file", offset, -1, 0);
    }
    position_ = offset;
}

void InputFile::read_at(std::uint64_t offset, std::byte* out, std::size_t n) {
    seek(offset);
    read(out, n, "a chunk");
}

}  // namespace metatf::rt
