#include "metatf/container.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "metatf/error.hpp"

namespace metatf::rt {

namespace {

// The fixed words after the 16-byte ident, each one machine word of the class.
enum Word { chunk_count, data_start, record_count, index_offset, text_length, word_count };

[[noreturn]] void header_error(ErrorKind kind, const std::string& message, std::uint64_t offset) {
    throw TraceError(kind, message, offset, -1, 0);
}

void put(std::vector<std::byte>& out, std::uint64_t v, unsigned width, ByteOrder order) {
    const std::size_t at = out.size();
    out.resize(at + width);
    store_uint(out.data() + at, v, width, order);
}

}  // namespace

std::uint64_t Header::prologue_size() const {
    return ident_size + word_count * word() + dtd_name.size() + dtd_text.size();
}

std::vector<std::byte> encode_prologue(const Header& h) {
    std::vector<std::byte> out;
    for (char c : magic) out.push_back(static_cast<std::byte>(c));
    out.push_back(static_cast<std::byte>(h.cls));
    out.push_back(static_cast<std::byte>(h.order));
    out.push_back(static_cast<std::byte>(h.dtd_name.size()));
    out.push_back(static_cast<std::byte>(container_version));
    put(out, h.dtd_fingerprint, 8, h.order);
    const unsigned w = h.word();
    put(out, h.chunks.size(), w, h.order);
    put(out, h.data_start, w, h.order);
    put(out, h.record_count, w, h.order);
    put(out, h.index_offset, w, h.order);
    put(out, h.dtd_text.size(), w, h.order);
    for (char c : h.dtd_name) out.push_back(static_cast<std::byte>(c));
    for (char c : h.dtd_text) out.push_back(static_cast<std::byte>(c));
    return out;
}

std::vector<std::byte> encode_index(const Header& h) {
    std::vector<std::byte> out;
    for (const Chunk& c : h.chunks) {
        put(out, c.section, h.word(), h.order);
        put(out, c.start, h.word(), h.order);
        put(out, c.size, h.word(), h.order);
    }
    return out;
}

Header read_header(File& file, std::uint64_t file_size) {
    Header h;
    std::byte ident[ident_size];
    if (file_size < ident_size) header_error(ErrorKind::bad_header, "the file is too short for a Meta-TF header", file_size);
    file.read_at(0, ident, ident_size);
    if (std::memcmp(ident, magic, sizeof magic) != 0) {
        header_error(ErrorKind::bad_magic, "not a Meta-TF trace (the file does not start with \\177MTF)", 0);
    }
    const auto cls = std::to_integer<unsigned>(ident[4]);
    const auto order = std::to_integer<unsigned>(ident[5]);
    if (cls != 1 && cls != 2) header_error(ErrorKind::bad_header, "unknown class " + std::to_string(cls), 4);
    if (order != 1 && order != 2) header_error(ErrorKind::bad_header, "unknown byte order " + std::to_string(order), 5);
    if (std::to_integer<unsigned>(ident[7]) != container_version) {
        header_error(ErrorKind::bad_header,
                     "container version " + std::to_string(std::to_integer<unsigned>(ident[7])) + " is not supported", 7);
    }
    h.cls = static_cast<Class>(cls);
    h.order = static_cast<ByteOrder>(order);
    h.dtd_fingerprint = load_uint(ident + 8, 8, h.order);
    const unsigned w = h.word();
    const std::uint64_t words_end = ident_size + word_count * w;
    if (file_size < words_end) header_error(ErrorKind::bad_header, "the header is truncated", file_size);
    std::byte words[word_count * 8];
    file.read_at(ident_size, words, word_count * w);
    auto word = [&](Word i) { return load_uint(words + i * w, w, h.order); };
    const std::uint64_t chunks = word(chunk_count), text = word(text_length);
    h.data_start = word(data_start);
    h.record_count = word(record_count);
    h.index_offset = word(index_offset);
    const std::uint64_t name_length = std::to_integer<unsigned>(ident[6]);
    const std::uint64_t prologue = words_end + name_length;
    if (text > file_size || prologue + text > file_size) {
        header_error(ErrorKind::bad_header, "the embedded DTD runs past the end of the file", words_end);
    }
    if (h.data_start != prologue + text) {
        header_error(ErrorKind::bad_header, "data starts at byte " + std::to_string(h.data_start) +
                                                ", not right after the embedded DTD", ident_size + w);
    }
    const std::uint64_t entry = 3ull * w;
    if (h.index_offset < h.data_start || h.index_offset > file_size || chunks > (file_size - h.index_offset) / entry ||
        h.index_offset + chunks * entry != file_size) {
        header_error(ErrorKind::bad_section, "the section index does not fit between the data and the end of the file",
                     ident_size + 3ull * w);
    }
    h.dtd_name.resize(name_length);
    file.read_at(words_end, reinterpret_cast<std::byte*>(h.dtd_name.data()), name_length);
    h.dtd_text.resize(text);
    file.read_at(prologue, reinterpret_cast<std::byte*>(h.dtd_text.data()), text);

    std::vector<std::byte> index(chunks * entry);
    file.read_at(h.index_offset, index.data(), index.size());
    std::uint64_t expected_start = h.data_start;
    for (std::uint64_t i = 0; i < chunks; ++i) {
        const std::byte* e = index.data() + i * entry;
        const std::uint64_t at = h.index_offset + i * entry;
        Chunk c;
        const std::uint64_t number = load_uint(e, w, h.order);
        c.start = load_uint(e + w, w, h.order);
        c.size = load_uint(e + 2 * w, w, h.order);
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
    return h;
}

// ---- File --------------------------------------------------------------------------

File::File(const std::string& path, const char* mode) : path_(path) {
    stream_ = std::fopen(path.c_str(), mode);
    if (!stream_) throw TraceError(ErrorKind::io, "cannot open '" + path + "': " + std::strerror(errno), 0, -1, 0);
}

File::~File() {
    if (stream_) std::fclose(static_cast<std::FILE*>(stream_));
}

std::uint64_t File::size() {
    auto* f = static_cast<std::FILE*>(stream_);
    if (std::fseek(f, 0, SEEK_END) != 0) throw TraceError(ErrorKind::io, "cannot seek in '" + path_ + "'", 0, -1, 0);
    const long end = std::ftell(f);
    if (end < 0) throw TraceError(ErrorKind::io, "cannot size '" + path_ + "'", 0, -1, 0);
    return static_cast<std::uint64_t>(end);
}

void File::read_at(std::uint64_t offset, std::byte* out, std::size_t n) {
    auto* f = static_cast<std::FILE*>(stream_);
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fread(out, 1, n, f) != n) {
        throw TraceError(ErrorKind::truncated, "cannot read " + std::to_string(n) + " bytes", offset, -1, 0);
    }
}

void File::write_at(std::uint64_t offset, const std::byte* data, std::size_t n) {
    auto* f = static_cast<std::FILE*>(stream_);
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fwrite(data, 1, n, f) != n) {
        throw TraceError(ErrorKind::io, "cannot write '" + path_ + "': " + std::strerror(errno), offset, -1, 0);
    }
    std::fseek(f, 0, SEEK_END);
}

void File::append(const std::byte* data, std::size_t n) {
    auto* f = static_cast<std::FILE*>(stream_);
    if (n != 0 && std::fwrite(data, 1, n, f) != n) {
        throw TraceError(ErrorKind::io, "cannot write '" + path_ + "': " + std::strerror(errno), position_, -1, 0);
    }
    position_ += n;
}

void File::flush() {
    if (std::fflush(static_cast<std::FILE*>(stream_)) != 0) {
        throw TraceError(ErrorKind::io, "cannot write '" + path_ + "': " + std::strerror(errno), position_, -1, 0);
    }
}

}  // namespace metatf::rt
