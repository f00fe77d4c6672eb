#include "metatf/container/checksum.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace metatf::rt {

namespace {

constexpr std::uint32_t polynomial = 0x82f63b78;  // Castagnoli's, bits reversed

// Slicing by 8: table[k][b] is the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t c = b;
        for (int i = 0; i < 8; ++i) c = c & 1 ? c >> 1 ^ polynomial : c >> 1;
        t[0][b] = c;
    }
    for (std::size_t k = 1; k < 8; ++k) {
        for (std::size_t b = 0; b < 256; ++b) t[k][b] = t[k - 1][b] >> 8 ^ t[0][t[k - 1][b] & 0xff];
    }
    return t;
}
constexpr auto tables = make_tables();

std::uint32_t crc_byte(std::uint32_t c, std::byte b) { return c >> 8 ^ tables[0][(c ^ std::to_integer<std::uint32_t>(b)) & 0xff]; }

// Any machine; bytes are taken in file order whatever its byte order.
std::uint32_t crc_portable(const std::byte* p, std::size_t n, std::uint32_t c) {
    for (; n >= 8; p += 8, n -= 8) {
        std::uint32_t lo = c, hi = 0;
        for (int i = 0; i < 4; ++i) lo ^= std::to_integer<std::uint32_t>(p[i]) << 8 * i;
        for (int i = 0; i < 4; ++i) hi |= std::to_integer<std::uint32_t>(p[4 + i]) << 8 * i;
        c = tables[7][lo & 0xff] ^ tables[6][lo >> 8 & 0xff] ^ tables[5][lo >> 16 & 0xff] ^ tables[4][lo >> 24] ^
            tables[3][hi & 0xff] ^ tables[2][hi >> 8 & 0xff] ^ tables[1][hi >> 16 & 0xff] ^ tables[0][hi >> 24];
    }
    for (; n > 0; ++p, --n) c = crc_byte(c, *p);
    return c;
}

#if defined(__x86_64__)
// SSE 4.2's crc32 instruction computes CRC32C, 8 bytes at a time (x86-64 is little-endian).
__attribute__((target("sse4.2"))) std::uint32_t crc_sse42(const std::byte* p, std::size_t n, std::uint32_t c) {
    std::uint64_t c64 = c;
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);
        c64 = _mm_crc32_u64(c64, word);
    }
    c = static_cast<std::uint32_t>(c64);
    for (; n > 0; ++p, --n) c = _mm_crc32_u8(c, std::to_integer<std::uint8_t>(*p));
    return c;
}

bool has_sse42() {
    static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("sse4.2"));
    return has;
}
#endif

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc) {
    std::uint32_t c = ~crc;
#if defined(__x86_64__)
    if (has_sse42()) return ~crc_sse42(bytes.data(), bytes.size(), c);
#endif
    return ~crc_portable(bytes.data(), bytes.size(), c);
}

std::uint32_t detail::crc32c_portable(std::span<const std::byte> bytes, std::uint32_t crc) {
    return ~crc_portable(bytes.data(), bytes.size(), ~crc);
}

}  // namespace metatf::rt
