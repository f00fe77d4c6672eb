// Errors of the trace runtime: every one says where in the trace it happened.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace metatf::rt {

enum class ErrorKind {
    io,              // the file could not be opened, read or written
    bad_magic,       // not a Meta-TF trace
    bad_header,      // a header field is impossible (class, byte order, offsets, counts)
    bad_section,     // the section index or a section record is wrong
    wrong_dtd,       // the trace was written with another DTD than this reader's
    truncated,       // a record or chunk ends before its data does
    unknown_tag,     // no record of the current section has this tag
    bad_metadata,    // a metadata record names a missing record, field or property, or an illegal change
    bad_value,       // a value does not fit its field's encoding (writer), or a count is impossible (reader)
    usage,           // the API was used wrongly (writing after close, a record in the wrong section)
    output,          // a writer's output file could not be made, written or committed; the message names it
    checksum,        // bytes that do not match their checksum (container version 4): the file was damaged
};

const char* error_kind_name(ErrorKind k);

// Where an error happened. `offset` is a byte offset in the file; `record`
// counts records from 0 in reading (or writing) order; `section` is the
// section being read when it happened (-1 when none applies).
//
// Some errors have no place in the trace: an I/O failure (opening, reading,
// writing the file), and one raised at byte 0 in no section before any record
// (the file as a whole is wrong). Their `has_position` is false and what()
// is the message alone; otherwise what() is "byte N[, section S], record R: message".
struct TraceError : std::runtime_error {
    TraceError(ErrorKind kind, std::string message, std::uint64_t offset, int section, std::uint64_t record);
    // With the position said to be there or not, whatever its values: a
    // native file's first record is at byte 0, record 0, in no section.
    TraceError(ErrorKind kind, std::string message, std::uint64_t offset, int section, std::uint64_t record, bool has_position);
    // An error with no position in the trace.
    TraceError(ErrorKind kind, std::string message);

    ErrorKind kind;
    std::string message;  // without the position
    std::uint64_t offset;
    int section;
    std::uint64_t record;
    bool has_position;
};

}  // namespace metatf::rt
