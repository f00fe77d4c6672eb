// CRC32C (Castagnoli), the checksum of container version 4: it detects every
// change of one to 32 adjacent bits with certainty (docs/trace-format.md,
// section 1.3).
#pragma once

#include <cstdint>
#include <span>

namespace metatf::rt {

// The CRC32C of `bytes` continued from `crc` (the CRC of the bytes before
// them; 0 to start), with the usual pre- and post-inversion: crc32c("123456789") is 0xe3069283.
std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0);

namespace detail {
// The table-driven CRC32C, which crc32c() uses where the machine has no
// instruction for it; exposed so that tests check it on any machine.
std::uint32_t crc32c_portable(std::span<const std::byte> bytes, std::uint32_t crc = 0);
}  // namespace detail

}  // namespace metatf::rt
