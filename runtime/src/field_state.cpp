#include "metatf/field_state.hpp"

namespace metatf::rt {

FieldState FieldState::initial(const FieldDesc& d) {
    FieldState s;
    static_cast<Encoding&>(s) = d.initial;
    s.desc = &d;
    s.previous = d.initial.value;
    return s;
}

namespace {

std::optional<std::string> check_width(const FieldState& s, std::uint64_t w) {
    const Type t = s.desc->type;
    if (s.desc->width_from != no_field) return std::string("its width is the value of another field");
    if ((t == Type::unsigned_int || t == Type::signed_int) && w > 8) {
        return "width " + std::to_string(w) + " is more than 8 bytes";
    }
    if (t == Type::floating && w != 4 && w != 8) return "width " + std::to_string(w) + " is not 4 or 8";
    if (t == Type::bytes && w > 65535) return "width " + std::to_string(w) + " is more than 65535";
    return std::nullopt;
}

}  // namespace

std::optional<std::string> apply_metadata(FieldState& s, MetaOp op, std::uint64_t a, std::uint64_t b,
                                          const DtdDesc& dtd) {
    if (static_cast<unsigned>(op) > static_cast<unsigned>(MetaOp::section_stride)) {
        return "unknown metadata property " + std::to_string(static_cast<unsigned>(op));
    }
    if (op == MetaOp::width) {
        if (auto problem = check_width(s, a)) return problem;
        const auto w = static_cast<std::uint32_t>(a);
        // A field that stores nothing keeps width 0; the new width waits for a byte-storing interpretation.
        if (stores_bytes(s.kind)) s.width = w;
        if (w != 0) s.restore = w;
        return std::nullopt;
    }
    const Interp kind = interp_of(op);
    const bool integer = s.desc->type == Type::unsigned_int || s.desc->type == Type::signed_int;
    if (kind != Interp::none && !integer) {
        return std::string("interpretation '") + std::string(name(kind)) + "' applies to integer fields, not '" +
               std::string(name(s.desc->type)) + "'";
    }
    if (kind == Interp::section_offset || kind == Interp::section_stride) {
        if (a == 0 || a > 255 || !defines_section(dtd, static_cast<std::uint8_t>(a))) {
            return "there is no section " + std::to_string(a);
        }
        s.section = static_cast<std::uint8_t>(a);
    } else if (kind != Interp::none) {
        s.value = a;
    }
    if (kind == Interp::stride || kind == Interp::section_stride) s.stride = static_cast<std::int64_t>(b);
    if (kind == Interp::section_stride && (s.restore == 0 || s.stride <= 0)) {
        return s.restore == 0 ? std::string("sectionStride needs a known width for the section's elements")
                              : std::string("sectionStride needs a positive stride");
    }
    s.kind = kind;
    s.width = stores_bytes(kind) ? s.restore : 0;
    s.previous = s.value;
    return std::nullopt;
}

}  // namespace metatf::rt
