// Spelling shared by the runtime's text form and messages and by the tools:
// a name in quotes, and integers in fixed point.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace metatf::rt {

// A name or token as messages show it: 'name'.
inline std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// 10^scale; a scale is at most 19, so it fits.
constexpr std::uint64_t power_of_ten(unsigned scale) {
    std::uint64_t p = 1;
    for (unsigned i = 0; i < scale; ++i) p *= 10;
    return p;
}

// Appends an integer field's value: two's complement when signed, and with
// `scale` fraction digits after a point when scaled ("-1.050" for -1050 at scale 3).
// With `fewest` (1 to scale), zeros at the end of the fraction are dropped
// down to that many digits ("-1.05" with fewest 2; a text form's `decimal digits 2`).
void append_fixed(std::string& out, std::uint64_t v, bool is_signed, unsigned scale, unsigned fewest = 0);

// Appends `v` in base 10 or 16 with at least `digits` digits, zeros in front,
// hex letters in upper case when `upper` (a text form's `hex digits 8 upper`).
void append_digits(std::string& out, std::uint64_t v, unsigned base, unsigned digits = 0, bool upper = false);

// A DTD's fingerprint as messages and tools show it: 0x and 16 hex digits.
inline std::string fingerprint_text(std::uint64_t fingerprint) {
    std::string out = "0x";
    append_digits(out, fingerprint, 16, 16);
    return out;
}
// `v` (in units of 10^-scale seconds) as a time of day: HH:MM:SS, hours of
// two digits or more, then the fraction as append_fixed() writes it.
void append_clock(std::string& out, std::uint64_t v, unsigned scale, unsigned fewest = 0);

}  // namespace metatf::rt
