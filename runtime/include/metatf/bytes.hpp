// Integers of 0 to 8 bytes in either byte order.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace metatf::rt {

enum class ByteOrder : std::uint8_t { little = 1, big = 2 };

// Copies n (0..8) bytes with a fixed-size copy per case, which compilers turn
// into plain loads and stores instead of a call to memcpy.
inline void copy_small(void* to, const void* from, unsigned n) {
    switch (n) {
        case 8: std::memcpy(to, from, 8); return;
        case 4: std::memcpy(to, from, 4); return;
        case 2: std::memcpy(to, from, 2); return;
        case 1: std::memcpy(to, from, 1); return;
        case 0: return;
        case 3: std::memcpy(to, from, 3); return;
        case 5: std::memcpy(to, from, 5); return;
        case 6: std::memcpy(to, from, 6); return;
        default: std::memcpy(to, from, 7); return;
    }
}

// Reads `width` (0..8) bytes at `p` as an unsigned integer.
inline std::uint64_t load_uint(const std::byte* p, unsigned width, ByteOrder order) {
    std::uint64_t v = 0;
    if (order == ByteOrder::little) {
        if constexpr (std::endian::native == std::endian::little) {
            copy_small(&v, p, width);
            return v;
        }
        for (unsigned i = width; i-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
        return v;
    }
    for (unsigned i = 0; i < width; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

// Writes the low `width` (0..8) bytes of `v` at `p`.
inline void store_uint(std::byte* p, std::uint64_t v, unsigned width, ByteOrder order) {
    if (order == ByteOrder::little) {
        if constexpr (std::endian::native == std::endian::little) {
            copy_small(p, &v, width);
            return;
        }
        for (unsigned i = 0; i < width; ++i, v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
        return;
    }
    for (unsigned i = width; i-- > 0; v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
}

// The two's complement value of the low `width` bytes of `raw`.
inline std::uint64_t sign_extend(std::uint64_t raw, unsigned width) {
    if (width == 0 || width >= 8) return raw;
    const unsigned shift = 64 - 8 * width;
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(raw << shift) >> shift);
}

// Whether `v` survives a round trip through `width` bytes.
inline bool fits_unsigned(std::uint64_t v, unsigned width) { return width >= 8 || (v >> (8 * width)) == 0; }

inline bool fits_signed(std::uint64_t v, unsigned width) {
    if (width >= 8) return true;
    if (width == 0) return v == 0;
    const std::uint64_t mask = (std::uint64_t(1) << (8 * width)) - 1;
    return sign_extend(v & mask, width) == v;
}

// Byte strings compare by content.
inline bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace metatf::rt
