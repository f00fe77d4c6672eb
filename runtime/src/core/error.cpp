#include "metatf/core/error.hpp"

namespace metatf::rt {

const char* error_kind_name(ErrorKind k) {
    switch (k) {
        case ErrorKind::io: return "io";
        case ErrorKind::output: return "output";
        case ErrorKind::bad_magic: return "bad_magic";
        case ErrorKind::bad_header: return "bad_header";
        case ErrorKind::bad_section: return "bad_section";
        case ErrorKind::wrong_dtd: return "wrong_dtd";
        case ErrorKind::truncated: return "truncated";
        case ErrorKind::unknown_tag: return "unknown_tag";
        case ErrorKind::bad_metadata: return "bad_metadata";
        case ErrorKind::bad_value: return "bad_value";
        case ErrorKind::usage: return "usage";
        case ErrorKind::checksum: return "checksum";
    }
    return "io";
}

namespace {

bool positioned(ErrorKind kind, std::uint64_t offset, int section, std::uint64_t record) {
    return kind != ErrorKind::io && kind != ErrorKind::output && (offset != 0 || section >= 0 || record != 0);
}

std::string describe(const std::string& message, std::uint64_t offset, int section, std::uint64_t record) {
    std::string out = "byte " + std::to_string(offset);
    if (section >= 0) out += ", section " + std::to_string(section);
    out += ", record " + std::to_string(record);
    return out + ": " + message;
}

}  // namespace

TraceError::TraceError(ErrorKind k, std::string m, std::uint64_t o, int s, std::uint64_t r)
    : TraceError(k, std::move(m), o, s, r, positioned(k, o, s, r)) {}

TraceError::TraceError(ErrorKind k, std::string m, std::uint64_t o, int s, std::uint64_t r, bool p)
    : std::runtime_error(p ? describe(m, o, s, r) : m), kind(k), message(std::move(m)), offset(o), section(s), record(r),
      has_position(p) {}

TraceError::TraceError(ErrorKind k, std::string m) : TraceError(k, std::move(m), 0, -1, 0) {}

}  // namespace metatf::rt
