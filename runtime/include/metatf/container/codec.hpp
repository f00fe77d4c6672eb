// Chunk codecs: how a chunk's bytes are stored in the file (the codec byte
// of its entry in a segment frame, docs/trace-format.md section 1). Each
// compressed chunk is one zstd frame of its own, so it decodes without the
// chunks before it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metatf/core/byte_buffer.hpp"

struct ZSTD_CCtx_s;

namespace metatf::rt {

// zstd_planes: zstd of the chunk's bytes set out in byte planes (the entry
// says how many): byte k of every element of a split stream's section
// together, so that zstd sees each byte's own values (docs/trace-format.md, section 1).
enum class ChunkCodec : std::uint8_t { stored = 0, zstd = 1, zstd_planes = 2 };

// The planes a zstd_planes chunk may have: the widths of elements.
inline constexpr unsigned min_planes = 2, max_planes = 8;

// The most bytes a zstd chunk of `stored` bytes may decode to: 16 MiB (the
// chunk size mtf writes when it compresses), and 1024 more per stored byte.
// zstd can go further on very regular data (a writer stores such a chunk as
// it is); the bound keeps what a reader allocates for a chunk in proportion
// to the bytes the file holds, past a chunk of that size.
constexpr std::uint64_t max_decoded(std::uint64_t stored) {
    constexpr std::uint64_t floor = std::uint64_t(16) << 20, per_byte = 1024;
    return stored > (~std::uint64_t(0) - floor) / per_byte ? ~std::uint64_t(0) : floor + per_byte * stored;
}

// The zstd levels a writer takes (WriterOptions::compress); 0 stores chunks as they are.
inline constexpr int max_compress_level = 22;

// Compresses chunks at one zstd level, each as one zstd frame with its
// content size and checksum, reusing zstd's context between them.
class Compressor {
public:
    explicit Compressor(int level);
    ~Compressor();
    Compressor(const Compressor&) = delete;
    Compressor& operator=(const Compressor&) = delete;

    // Compresses `in` into `out`; false, with `out` unspecified, when that
    // would not be smaller (the chunk is then better stored as it is).
    // Given `planes` of 2 to max_planes, it also compresses the bytes in
    // that many planes and keeps the smaller frame, setting `planes` to 0
    // when that is the plain one.
    bool compress(std::span<const std::byte> in, std::vector<std::byte>& out, std::uint8_t* planes = nullptr);

private:
    struct Free {
        void operator()(ZSTD_CCtx_s* c) const;
    };
    bool frame(std::span<const std::byte> in, std::vector<std::byte>& out);

    std::unique_ptr<ZSTD_CCtx_s, Free> context_;
    std::vector<std::byte> planar_, other_;  // a chunk set out in planes, and its frame
};

// Decodes a zstd chunk whose frame entry declares `decoded` bytes into
// `out`, or says why it cannot: it is not one whole zstd frame, or it
// expands to more or fewer bytes than declared (its contents are then
// unspecified). It takes decoded + 1 bytes, which the container has already
// bounded by max_decoded() of the chunk's stored size.
// A zstd_planes chunk (`planes` 2 to max_planes) is put back in order.
std::optional<std::string> decompress_chunk(std::span<const std::byte> in, std::uint64_t decoded, ByteBuffer& out, unsigned planes = 0);

namespace detail {
// Byte i of `in` to plane i % planes, the planes one after another; and back.
void to_planes(std::span<const std::byte> in, unsigned planes, std::byte* out);
void from_planes(std::span<const std::byte> in, unsigned planes, std::byte* out);
}  // namespace detail

// Whether `in` starts as a zstd frame does (its 4-byte magic number).
bool zstd_frame(std::span<const std::byte> in);
// The content size a zstd frame declares (0 when it declares none or is no frame).
std::uint64_t declared_size(std::span<const std::byte> in);
// Decodes a zstd frame that declares its content size, at most `most` bytes,
// into `out`, or says why it cannot (the DTD text of container versions 5
// and 6, their state blocks in version 6).
std::optional<std::string> decompress_frame(std::span<const std::byte> in, std::uint64_t most, std::vector<std::byte>& out);

}  // namespace metatf::rt
