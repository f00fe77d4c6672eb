#include "metatf/format.hpp"

#include <charconv>
#include <cstring>

namespace metatf::rt {

void append_fixed(std::string& out, std::uint64_t v, bool is_signed, unsigned scale) {
    const bool negative = is_signed && static_cast<std::int64_t>(v) < 0;
    if (negative) out += '-';
    // Leading zeros leave at least one digit before the point: 5 at scale 3 is 0.005.
    char buf[48];  // 20 digits and up to 20 zeros
    std::memset(buf, '0', scale + 1);
    char digits[24];
    const char* end = std::to_chars(digits, digits + sizeof digits, negative ? 0 - v : v).ptr;
    const auto n = static_cast<std::size_t>(end - digits);
    const std::size_t length = n > scale ? n : scale + 1;
    std::memcpy(buf + length - n, digits, n);
    out.append(buf, length - scale);
    if (scale == 0) return;
    out += '.';
    out.append(buf + length - scale, scale);
}

}  // namespace metatf::rt
