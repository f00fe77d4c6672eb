#include "metatf/core/format.hpp"

#include <cctype>
#include <charconv>
#include <cstring>

namespace metatf::rt {

void append_fixed(std::string& out, std::uint64_t v, bool is_signed, unsigned scale, unsigned fewest) {
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
    std::size_t shown = scale;
    while (fewest != 0 && shown > fewest && buf[length - scale + shown - 1] == '0') --shown;
    out.append(buf + length - scale, shown);
}

void append_clock(std::string& out, std::uint64_t v, unsigned scale, unsigned fewest) {
    std::uint64_t unit = 1;
    for (unsigned i = 0; i < scale; ++i) unit *= 10;
    const std::uint64_t seconds = v / unit;
    append_digits(out, seconds / 3600, 10, 2);
    out += ':';
    append_digits(out, seconds / 60 % 60, 10, 2);
    out += ':';
    append_digits(out, seconds % 60, 10, 2);
    if (scale == 0) return;
    std::string fraction;
    append_fixed(fraction, v % unit, false, scale, fewest);  // "0.543726"
    out.append(fraction, 1);
}

void append_digits(std::string& out, std::uint64_t v, unsigned base, unsigned digits, bool upper) {
    char buf[24];
    char* end = std::to_chars(buf, buf + sizeof buf, v, static_cast<int>(base)).ptr;
    const auto n = static_cast<std::size_t>(end - buf);
    if (n < digits) out.append(digits - n, '0');
    if (upper) {
        for (char* c = buf; c != end; ++c) *c = static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    }
    out.append(buf, n);
}

}  // namespace metatf::rt
