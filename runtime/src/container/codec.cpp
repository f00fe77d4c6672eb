#include "metatf/container/codec.hpp"

#include <zstd.h>

#include <algorithm>

namespace metatf::rt {

void Compressor::Free::operator()(ZSTD_CCtx_s* c) const { ZSTD_freeCCtx(c); }

Compressor::Compressor(int level) : context_(ZSTD_createCCtx()) {
    if (!context_) throw std::bad_alloc();
    ZSTD_CCtx_setParameter(context_.get(), ZSTD_c_compressionLevel, level);
    // 4 bytes a chunk: a reader then tells a damaged chunk from one that decodes to other records.
    ZSTD_CCtx_setParameter(context_.get(), ZSTD_c_checksumFlag, 1);
}

Compressor::~Compressor() = default;

// Both ways, at the writer's level: planes make a column of time
// differences a tenth smaller, and a column of a heap trace's sizes a few
// percent larger (docs/trace-format.md, "Byte planes").
bool Compressor::compress(std::span<const std::byte> in, std::vector<std::byte>& out, std::uint8_t* planes) {
    const bool plain = frame(in, out);
    if (!planes || *planes < min_planes || *planes > max_planes) return plain;
    planar_.resize(in.size());
    detail::to_planes(in, *planes, planar_.data());
    if (frame(planar_, other_) && (!plain || other_.size() < out.size())) {
        out.swap(other_);
        return true;
    }
    *planes = 0;
    return plain;
}

bool Compressor::frame(std::span<const std::byte> in, std::vector<std::byte>& out) {
    out.resize(ZSTD_compressBound(in.size()));
    const std::size_t n = ZSTD_compress2(context_.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n) || n >= in.size() || in.size() > max_decoded(n)) return false;
    out.resize(n);
    return true;
}

namespace {

struct FreeD {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// What the messages call a frame: a chunk with its declared size in its
// entry, or a frame whose own header declares it (the DTD text and state
// blocks of versions 5 and 6).
struct Subject {
    const char* name;
    const char* declarer;
};
constexpr Subject chunk{"a zstd chunk", "its entry"};
constexpr Subject frame{"the zstd frame", "its header"};

// Decodes into `out`, which has room for decoded + 1 bytes: one byte past
// the declared size is room enough to see that a chunk expands to more.
// Room for all of it at once lets zstd decode straight into `out`, in one
// pass, rather than through a window of its own and a copy.
std::optional<std::string> decode_frame(ZSTD_DCtx* d, std::span<const std::byte> in, std::uint64_t decoded, std::byte* out, const Subject& s) {
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    ZSTD_outBuffer output{out, static_cast<std::size_t>(decoded + 1), 0};
    for (;;) {
        const std::size_t r = ZSTD_decompressStream(d, &output, &input);
        if (ZSTD_isError(r)) return std::string(s.name) + " does not decode: " + ZSTD_getErrorName(r);
        if (output.pos > decoded) return std::string(s.name) + " expands to more than the " + std::to_string(decoded) + " bytes " + s.declarer + " declares";
        if (r == 0) break;  // the frame is complete
        if (input.pos == input.size && output.pos < output.size) return std::string(s.name) + " is cut short";
    }
    if (input.pos != input.size) return std::string(s.name) + " has bytes after its end";
    if (output.pos != decoded) {
        return std::string(s.name) + " decodes to " + std::to_string(output.pos) + " bytes, not the " + std::to_string(decoded) + " " + s.declarer + " declares";
    }
    return std::nullopt;
}

// One context per thread, reused: a frame is decoded in one call.
std::optional<std::string> decode(std::span<const std::byte> in, std::uint64_t decoded, std::byte* out, const Subject& s) {
    thread_local std::unique_ptr<ZSTD_DCtx, FreeD> d;
    if (!d) d.reset(ZSTD_createDCtx());
    if (!d) throw std::bad_alloc();
    ZSTD_DCtx_reset(d.get(), ZSTD_reset_session_only);
    auto problem = decode_frame(d.get(), in, decoded, out, s);
    // A frame that missed the one-pass path (no content size, or a wrong one)
    // made zstd take a window of its own: not kept for the thread's lifetime.
    if (ZSTD_sizeof_DCtx(d.get()) > (std::size_t(1) << 20)) d.reset();
    return problem;
}

}  // namespace

std::optional<std::string> decompress_chunk(std::span<const std::byte> in, std::uint64_t decoded, ByteBuffer& out, unsigned planes) {
    // A chunk in planes decodes beside `out`, then goes back in place.
    ByteBuffer planar;
    ByteBuffer& into = planes < min_planes ? out : planar;
    auto problem = decode(in, decoded, into.overwrite(static_cast<std::size_t>(decoded + 1)), chunk);
    if (!problem && &into != &out) detail::from_planes({planar.data(), static_cast<std::size_t>(decoded)}, planes, out.overwrite(static_cast<std::size_t>(decoded)));
    out.resize(static_cast<std::size_t>(decoded), std::byte{0});
    return problem;
}

namespace detail {

// Plane k holds bytes k, k + planes, ...: ceil((n - k) / planes) of them.
void to_planes(std::span<const std::byte> in, unsigned planes, std::byte* out) {
    for (unsigned k = 0; k < planes; ++k) {
        for (std::size_t i = k; i < in.size(); i += planes) *out++ = in[i];
    }
}

void from_planes(std::span<const std::byte> in, unsigned planes, std::byte* out) {
    const std::byte* from = in.data();
    for (unsigned k = 0; k < planes; ++k) {
        for (std::size_t i = k; i < in.size(); i += planes) out[i] = *from++;
    }
}

}  // namespace detail

bool zstd_frame(std::span<const std::byte> in) {
    constexpr std::byte magic[4] = {std::byte{0x28}, std::byte{0xb5}, std::byte{0x2f}, std::byte{0xfd}};
    return in.size() >= 4 && std::equal(magic, magic + 4, in.begin());
}

std::uint64_t declared_size(std::span<const std::byte> in) {
    const unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
    return size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : size;
}

std::optional<std::string> decompress_frame(std::span<const std::byte> in, std::uint64_t most, std::vector<std::byte>& out) {
    const unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
    if (size == ZSTD_CONTENTSIZE_ERROR) return std::string("it is not a zstd frame");
    if (size == ZSTD_CONTENTSIZE_UNKNOWN) return std::string("the zstd frame does not declare its size");
    if (size > most) return "the zstd frame declares " + std::to_string(size) + " bytes, more than the " + std::to_string(most) + " a reader takes";
    out.resize(static_cast<std::size_t>(size + 1));
    auto problem = decode(in, size, out.data(), frame);
    out.resize(static_cast<std::size_t>(size));
    return problem;
}

}  // namespace metatf::rt
