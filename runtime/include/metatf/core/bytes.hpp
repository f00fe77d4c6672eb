// Integers of 0 to 8 bytes in either byte order.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>
#include <cstring>
#include <span>
#include <type_traits>

namespace metatf::rt {

enum class ByteOrder : std::uint8_t { little = 1, big = 2 };

// Forces inlining where the per-field cost is the whole cost. Without
// optimization it would only slow the build and stepping through.
#if defined(__GNUC__) && defined(__OPTIMIZE__)
#define METATF_INLINE inline __attribute__((always_inline))
#else
#define METATF_INLINE inline
#endif

// Reads exactly W bytes in the machine's order, zero-extended. Loading into
// an integer of the exact size avoids a store-to-load stall.
template <unsigned W>
METATF_INLINE std::uint64_t load_native(const std::byte* p) {
    if constexpr (W == 0) {
        return 0;
    } else if constexpr (W == 1) {
        return std::to_integer<std::uint64_t>(*p);
    } else {
        using U = std::conditional_t<W == 2, std::uint16_t, std::conditional_t<W <= 4, std::uint32_t, std::uint64_t>>;
        if constexpr (W == 2 || W == 4 || W == 8) {
            U v;
            std::memcpy(&v, p, W);
            return v;
        } else {
            std::uint64_t v = 0;
            std::memcpy(&v, p, W);
            return std::endian::native == std::endian::little ? v : v >> (8 * (8 - W));
        }
    }
}

// Reads `width` (0..8) bytes at `p` as an unsigned integer.
METATF_INLINE std::uint64_t load_uint(const std::byte* p, unsigned width, ByteOrder order) {
    if (order == ByteOrder::little && std::endian::native == std::endian::little) {
        switch (width) {
            case 0: return 0;
            case 1: return load_native<1>(p);
            case 2: return load_native<2>(p);
            case 4: return load_native<4>(p);
            case 8: return load_native<8>(p);
            case 3: return load_native<3>(p);
            case 5: return load_native<5>(p);
            case 6: return load_native<6>(p);
            default: return load_native<7>(p);
        }
    }
    if (order == ByteOrder::big && std::endian::native == std::endian::little) {
        switch (width) {
            case 2: return __builtin_bswap16(static_cast<std::uint16_t>(load_native<2>(p)));
            case 4: return __builtin_bswap32(static_cast<std::uint32_t>(load_native<4>(p)));
            case 8: return __builtin_bswap64(load_native<8>(p));
            default: break;
        }
    }
    std::uint64_t v = 0;
    if (order == ByteOrder::little) {
        for (unsigned i = width; i-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
        return v;
    }
    for (unsigned i = 0; i < width; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

// Writes the low W bytes of `v` in the machine's order.
template <unsigned W>
METATF_INLINE void store_native(std::byte* p, std::uint64_t v) {
    if constexpr (W == 2 || W == 4 || W == 8) {
        using U = std::conditional_t<W == 2, std::uint16_t, std::conditional_t<W == 4, std::uint32_t, std::uint64_t>>;
        const auto u = static_cast<U>(v);
        std::memcpy(p, &u, W);
    } else if constexpr (W == 1) {
        *p = static_cast<std::byte>(v & 0xff);
    } else if constexpr (W != 0) {
        for (unsigned i = 0; i < W; ++i, v >>= 8) {
            p[std::endian::native == std::endian::little ? i : W - 1 - i] = static_cast<std::byte>(v & 0xff);
        }
    }
}

// Writes the low `width` (0..8) bytes of `v` at `p`.
METATF_INLINE void store_uint(std::byte* p, std::uint64_t v, unsigned width, ByteOrder order) {
    if (order == ByteOrder::little) {
        if constexpr (std::endian::native == std::endian::little) {
            switch (width) {
                case 0: return;
                case 1: return store_native<1>(p, v);
                case 2: return store_native<2>(p, v);
                case 4: return store_native<4>(p, v);
                case 8: return store_native<8>(p, v);
                default: break;
            }
        }
        for (unsigned i = 0; i < width; ++i, v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
        return;
    }
    for (unsigned i = width; i-- > 0; v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
}

// Appends the low `width` bytes of `v` to `out`.
inline void append_uint(std::vector<std::byte>& out, std::uint64_t v, unsigned width, ByteOrder order) {
    const std::size_t at = out.size();
    out.resize(at + width);
    store_uint(out.data() + at, v, width, order);
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

// The fewest bytes (0 to 8) that `v` survives a round trip through, as
// fits_signed() or fits_unsigned() says: a count of significant bits, where
// a signed value needs one more for its sign.
inline unsigned bytes_needed(std::uint64_t v, bool sign) {
    if (v == 0) return 0;
    const bool negative = sign && static_cast<std::int64_t>(v) < 0;
    const unsigned bits = static_cast<unsigned>(std::bit_width(negative ? ~v : v)) + (sign ? 1 : 0);
    return std::min(8u, (bits + 7) / 8);
}

// A float field's value from its 4 or 8 stored bytes, and back. A 4-byte
// NaN keeps its payload bit for bit: converting a signalling NaN between
// float and double would set its quiet bit, and the bytes would not come back.
inline double float_from_bits(std::uint64_t bits, unsigned width) {
    if (width != 4) return std::bit_cast<double>(bits);
    const auto b32 = static_cast<std::uint32_t>(bits);
    if ((b32 & 0x7f800000u) != 0x7f800000u || (b32 & 0x007fffffu) == 0) return std::bit_cast<float>(b32);
    return std::bit_cast<double>((std::uint64_t(b32 >> 31) << 63) | 0x7ff0000000000000ull | (std::uint64_t(b32 & 0x007fffffu) << 29));
}

inline std::uint64_t float_to_bits(double value, unsigned width) {
    const auto bits = std::bit_cast<std::uint64_t>(value);
    if (width != 4) return bits;
    if (value == value) return std::bit_cast<std::uint32_t>(static_cast<float>(value));
    // A NaN: its top 23 payload bits, and a set bit if they are all zero (it stays a NaN).
    const auto payload = static_cast<std::uint32_t>((bits >> 29) & 0x007fffffu);
    return ((bits >> 63) << 31) | 0x7f800000u | (payload != 0 ? payload : 1u);
}

// Byte strings compare by content.
inline bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace metatf::rt
