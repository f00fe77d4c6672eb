// What TraceReader's input side (reader_input.cpp) and its decoding
// (reader.cpp) share: a section's stream of chunks, and chunks on their
// way in.
#pragma once

#include <deque>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "metatf/io/reader.hpp"

namespace metatf::rt {

// A zstd chunk checked and decompressed ahead of its use, on a thread of its
// own; its error, if any, is raised when the chunk is reached, so that it
// names the record reached as if it had been decoded then.
struct Decoded {
    ByteBuffer bytes;
    std::optional<std::string> problem;
    ErrorKind kind = ErrorKind::bad_section;  // checksum, for a damaged chunk

    // An error at the chunk, naming the record reached.
    void raise(const Chunk& c, std::uint64_t record) const {
        if (problem) throw TraceError(kind, *problem, c.start, c.section, record);
    }
};

// A pipe: a chunk read and not yet used, with the state block of the
// segment it starts, if it does.
struct Arrived {
    Chunk chunk;
    ByteBuffer bytes;
    std::vector<std::byte> state;
};

// One section's bytes as the reader walks through them, chunk by chunk.
struct TraceReader::Stream {
    enum class Mode { unused, records, values } mode = Mode::unused;
    std::vector<std::size_t> chunks;  // a file: indices into header_.chunks, in order
    std::size_t next_chunk = 0;
    std::deque<Arrived> pending;      // a pipe: chunks read, not yet used
    ByteBuffer buffer;                 // the current chunk
    std::uint64_t buffer_file_offset = 0;
    std::uint64_t buffer_stream_offset = 0;  // section offset of buffer[0]
    std::size_t read = 0;                    // bytes of buffer consumed (records)
    std::uint64_t cursor = 0;                // values: section offset of the next element
    std::vector<std::byte> whole;            // the section as a table, from section offset whole_start
    std::uint64_t whole_start = 0;
    bool whole_loaded = false;               // a file: loaded once, whole
    bool table = false;                      // a pipe: every chunk is also appended to `whole`
    bool split = false;                      // a section the trace's writer added for split streams
    std::future<Decoded> ahead;              // a file: chunks[next_chunk], being decompressed
};

}  // namespace metatf::rt
