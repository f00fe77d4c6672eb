// The base trace of the malformed-trace and writer-error tests: four HATF
// 1.0 records under the DTD's initial encodings, the formats they are
// written in, and where their bytes are (docs/trace-format.md).
#pragma once

#include <cstring>
#include <string>

#include <hatf10.hpp>

#include "trace_support.hpp"

namespace metatf::test::hatf_base {

namespace rt = metatf::rt;

// The base trace and its records' sizes under hatf10's initial encodings.
inline constexpr std::uint64_t comment_size = 1 + 2 + 9;  // tag, length (2 bytes in HATF 1.0), "malformed"
inline constexpr std::uint64_t alloc_size = 1 + 4 + 4;    // tag, size, address
inline constexpr std::uint64_t free_size = 1 + 4;         // tag, address
inline constexpr std::uint64_t base_records = 4;
inline constexpr std::uint64_t base_data = comment_size + 2 * alloc_size + free_size;

inline void write_base(const std::string& path, rt::WriterOptions options = {}) {
    hatf10::Writer w(path, options);
    w.comment("malformed");
    w.write(hatf10::Alloc{.size = 24, .address = 0x1000});
    w.write(hatf10::Alloc{.size = 32, .address = 0x2000});
    w.write(hatf10::Free{.address = 0x1000});
    w.close();
}

struct Format {
    const char* name;
    rt::Class cls;
    rt::ByteOrder order;
    // Version 1: the byte offsets below were worked out for its layout; version 2's frames have tests of their own.
    rt::WriterOptions options(std::size_t chunk_bytes = std::size_t(1) << 20) const {
        return {cls, order, chunk_bytes, {true, {}}, 1};
    }
    unsigned word() const { return cls == rt::Class::bits32 ? 4 : 8; }
};
inline constexpr Format formats[] = {
    {"64-bit little-endian", rt::Class::bits64, rt::ByteOrder::little},
    {"32-bit big-endian", rt::Class::bits32, rt::ByteOrder::big},
};

// Where a hatf10 trace's data starts: ident, five words, name, DTD text.
inline std::uint64_t hatf10_data_start(unsigned word) {
    return TraceBytes::ident + 5 * word + std::strlen(hatf10::dtd.name) + std::strlen(hatf10::dtd.text);
}

// Where a version-2 hatf10 trace's first segment frame starts: ident, one word, name, DTD text.
inline std::uint64_t hatf10_first_frame(unsigned word) {
    return TraceBytes::ident + word + std::strlen(hatf10::dtd.name) + std::strlen(hatf10::dtd.text);
}

}  // namespace metatf::test::hatf_base
