// The Meta-TF trace file around the records: header, embedded DTD, section
// index. docs/trace-format.md describes the layout byte by byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bytes.hpp"

namespace metatf::rt {

inline constexpr char magic[4] = {'\177', 'M', 'T', 'F'};
inline constexpr std::uint8_t container_version = 1;
// magic, class, byte order, name length, version, then the DTD's 8-byte fingerprint
inline constexpr std::size_t ident_size = 16;

enum class Class : std::uint8_t { bits32 = 1, bits64 = 2 };

// One contiguous piece of a section's bytes. A section is the concatenation
// of its chunks in index order; the main record stream is section 0.
struct Chunk {
    std::uint8_t section = 0;
    std::uint64_t start = 0;  // file offset
    std::uint64_t size = 0;
};

struct Header {
    Class cls = Class::bits64;
    ByteOrder order = ByteOrder::little;
    std::uint64_t data_start = 0;    // first byte of the first chunk
    std::uint64_t record_count = 0;  // every record, predefined ones included
    std::uint64_t index_offset = 0;  // the section index, after the data
    std::uint64_t dtd_fingerprint = 0;  // see fingerprint() in descriptor.hpp
    std::string dtd_name;
    std::string dtd_text;
    std::vector<Chunk> chunks;

    unsigned word() const { return cls == Class::bits32 ? 4 : 8; }
    // Bytes from the start of the file to the end of the DTD text.
    std::uint64_t prologue_size() const;
};

// Serializes the fixed part, name and DTD text (the bytes before data_start).
std::vector<std::byte> encode_prologue(const Header& h);
// Serializes the section index (written at index_offset).
std::vector<std::byte> encode_index(const Header& h);

// Reads and checks a header from an open file of `file_size` bytes; throws TraceError.
class File;
Header read_header(File& file, std::uint64_t file_size);

// A thin wrapper over a C stream: reads and writes at offsets, errors as TraceError.
class File {
public:
    File(const std::string& path, const char* mode);
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    std::uint64_t size();
    void read_at(std::uint64_t offset, std::byte* out, std::size_t n);
    void write_at(std::uint64_t offset, const std::byte* data, std::size_t n);
    void append(const std::byte* data, std::size_t n);
    std::uint64_t position() const { return position_; }
    void flush();
    const std::string& path() const { return path_; }

private:
    std::string path_;
    void* stream_ = nullptr;
    std::uint64_t position_ = 0;  // append position
};

}  // namespace metatf::rt
