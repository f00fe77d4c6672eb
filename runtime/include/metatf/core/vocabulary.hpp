// The words every stage of Meta-TF shares: the syntax tree, the IR and its
// JSON, the back end, the runtime and the tools all use these enums and
// these spellings, defined here once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace metatf::rt {

enum class Type : std::uint8_t { unsigned_int, signed_int, floating, bytes };

constexpr bool is_integer(Type t) { return t == Type::unsigned_int || t == Type::signed_int; }

enum class Interp : std::uint8_t { none, default_value, base_offset, delta, stride, section_offset, section_stride, live, predict, intern };

// How a field is written in a DTD's native text form (docs/dtd-language.md, "Text forms").
enum class TextFormat : std::uint8_t {
    decimal,  // integers: decimal digits; with a scale, fixed point with `scale` fraction digits
    hex,      // integers: lower-case hexadecimal digits, no prefix
    chars,    // integers: one character, the value is its index in `chars`
    string,   // bytes: as many bytes as the length field says, or the token up to the next separator
    line,     // bytes, last field only: the rest of the line
    omit,     // not written: a length or count derived from the line
    enumeration,  // integers: the name the field's `enum` gives the value (`enum` in a DTD)
    clock,    // unsigned integers: a time of day or a duration, HH:MM:SS, with a scale's fraction (strace -tt)
    nested,   // bytes: up to the field's `after` text where it stands outside brackets and C strings (strace's arguments)
};

enum class Predefined : std::uint8_t { none, comment, section, metadata };

// The order a field's values keep from record to record (docs/dtd-language.md, "Rules").
enum class Order : std::uint8_t { none, nondecreasing, increasing };

// What the names of a field's values are (docs/dtd-language.md, "Rules"):
// an enumeration's values, a flag set's bits, or the bit fields packed in
// the value (`bits`), each a run of bits from the least significant up.
enum class Naming : std::uint8_t { values, flags, parts };

// The `property` codes of a metadata record (the paper's Appendix B).
enum class MetaOp : std::uint8_t {
    width = 0,
    none = 1,
    base_offset = 2,
    delta = 3,
    default_value = 4,
    section_offset = 5,
    stride = 6,
    section_stride = 7,
    live = 8,  // a = the pool the field's values are taken from
    feed = 9,  // a = the pool every value of the field is added to (0: none); not an interpretation
    unit = 10, // a = what one step of the stored integer is worth (1 and up); not an interpretation
    predict = 11,  // a = the pool a code may refer to (0: none), b = the predictors it uses (bits 0-6)
    intern = 12,   // a length field names its string by a code into a table (StringTable)
    // a = section, b = stride: the field's stored integers go to a split
    // stream, keeping the interpretation (none, baseOffset, delta) and unit in force
    split = 13,
};

inline constexpr MetaOp last_meta_op = MetaOp::split;
// Pools of live values are numbered 1 to max_pool (see live_pool.hpp).
inline constexpr unsigned max_pool = 4;

// Whether a field with this interpretation stores bytes in each record:
// `default`, `stride` and `sectionStride` store none (their width is 0).
constexpr bool stores_bytes(Interp k) {
    return k != Interp::default_value && k != Interp::stride && k != Interp::section_stride;
}

// Whether a field under `k` stores a code in its width that may be followed
// by an escaped value: `live` and `predict`, which need a width of 1 to 8.
constexpr bool codes(Interp k) { return k == Interp::live || k == Interp::predict; }

// The interpretation a metadata property sets (none for `width`, `feed` and
// `unit`, which set none; sectionStride for `split`, which keeps the one in
// force for the stored integers: Encoding::element).
constexpr Interp interp_of(MetaOp op) {
    constexpr std::array<Interp, 14> of = {Interp::none,          Interp::none,           Interp::base_offset, Interp::delta,
                                           Interp::default_value, Interp::section_offset, Interp::stride,      Interp::section_stride,
                                           Interp::live,          Interp::none,           Interp::none,        Interp::predict,
                                           Interp::intern,        Interp::section_stride};
    return static_cast<std::size_t>(op) < of.size() ? of[static_cast<std::size_t>(op)] : Interp::none;
}

// The metadata property that sets interpretation `k` (the inverse of interp_of()).
constexpr MetaOp op_of(Interp k) {
    constexpr std::array<MetaOp, 10> of = {MetaOp::none,          MetaOp::default_value, MetaOp::base_offset,    MetaOp::delta,
                                           MetaOp::stride,        MetaOp::section_offset, MetaOp::section_stride, MetaOp::live,
                                           MetaOp::predict,       MetaOp::intern};
    return of[static_cast<std::size_t>(k)];
}

namespace detail {

// Spellings in enumerator order.
inline constexpr std::array<std::string_view, 4> type_names = {"unsigned", "signed", "float", "bytes"};
inline constexpr std::array<std::string_view, 10> interp_names = {"none",   "default",       "baseOffset",    "delta",
                                                                  "stride", "sectionOffset", "sectionStride", "live",
                                                                  "predict", "intern"};
inline constexpr std::array<std::string_view, 9> text_format_names = {"decimal", "hex", "chars", "string", "line", "omit", "enum", "clock", "nested"};
inline constexpr std::array<std::string_view, 4> predefined_names = {"", "comment", "section", "metadata"};
inline constexpr std::array<std::string_view, 3> order_names = {"", "nondecreasing", "increasing"};

template <typename Enum, std::size_t N>
constexpr std::optional<Enum> lookup(const std::array<std::string_view, N>& names, std::string_view s) {
    for (std::size_t i = 0; i < N; ++i) {
        if (!names[i].empty() && names[i] == s) return static_cast<Enum>(i);
    }
    return std::nullopt;
}

}  // namespace detail

// The DTD's spelling of each word ("" for Predefined::none and Order::none).
constexpr std::string_view name(Type t) { return detail::type_names[static_cast<std::size_t>(t)]; }
constexpr std::string_view name(Interp k) { return detail::interp_names[static_cast<std::size_t>(k)]; }
constexpr std::string_view name(TextFormat f) { return detail::text_format_names[static_cast<std::size_t>(f)]; }
constexpr std::string_view name(Predefined p) { return detail::predefined_names[static_cast<std::size_t>(p)]; }
constexpr std::string_view name(Order o) { return detail::order_names[static_cast<std::size_t>(o)]; }
// A metadata property: "width", "feed", "unit", "split", or the interpretation it sets.
constexpr std::string_view name(MetaOp op) {
    if (op == MetaOp::split) return "split";
    return op == MetaOp::width ? "width" : op == MetaOp::feed ? "feed" : op == MetaOp::unit ? "unit" : name(interp_of(op));
}

// The word a DTD spells `s`, if any.
template <typename Enum>
constexpr std::optional<Enum> from_name(std::string_view s) {
    if constexpr (std::is_same_v<Enum, Type>) return detail::lookup<Type>(detail::type_names, s);
    if constexpr (std::is_same_v<Enum, Interp>) return detail::lookup<Interp>(detail::interp_names, s);
    if constexpr (std::is_same_v<Enum, TextFormat>) return detail::lookup<TextFormat>(detail::text_format_names, s);
    if constexpr (std::is_same_v<Enum, Predefined>) return detail::lookup<Predefined>(detail::predefined_names, s);
    if constexpr (std::is_same_v<Enum, Order>) return detail::lookup<Order>(detail::order_names, s);
}

}  // namespace metatf::rt
