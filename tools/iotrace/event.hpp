// One file I/O event as a thread records it (tools/tracing's logs copy it as
// bytes). Only an open owns memory: its path, malloc'd, freed once written.
#pragma once

#include <cstdint>

namespace metatf::iotrace {

// Each kind is one CHARISMA record (docs/formats.md, "metatf-iotrace").
enum class Kind : std::uint8_t {
    client_join,   // clientJoin: the thread's first event
    client_leave,  // clientLeave: the thread's exit
    open,          // clientOpen
    close,         // clientClose
    read,          // readWrite
    write,         // readWrite, the write bit set
    extend,        // extend: ftruncate/truncate to a larger size
    truncate,      // truncate: to a smaller or equal size
    link,          // link
    unlink,        // unlink
    fcntl,         // fcntl
};

struct Event {
    Kind kind;
    std::uint8_t open_flags;  // open: CHARISMA's bits
    std::int32_t fd;          // open, close, read, write, fcntl
    std::int32_t request;     // fcntl: the command
    std::int32_t arg;         // fcntl: the integer argument (0 for a pointer)
    std::uint64_t start;      // CLOCK_MONOTONIC ns: when the call began
    std::uint64_t end;        // read, write: when it returned
    std::uint64_t file_id;    // open, extend, truncate, link, unlink
    std::int64_t offset;      // read, write: the file position of the first byte
    std::int64_t size;        // read, write: bytes moved; open, close: file size; extend, truncate: the old size
    std::int64_t new_size;    // extend, truncate
    std::uint64_t memory;     // read, write: the buffer's address
    std::uint64_t count;      // link, unlink: the new link count; open: creation time (s)
    char* path;               // open: the absolute path, malloc'd
};

}  // namespace metatf::iotrace
