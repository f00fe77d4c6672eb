// Walks a record's layout (RecordDesc::layout, a flat program of field,
// repeat and end steps) in order: the one walk that the generic decoder and
// encoder, the text reader and writer and mtf's output all use.
#pragma once

#include <cstdint>
#include <vector>

#include "metatf/core/descriptor.hpp"

namespace metatf::rt {

// Per field of `r`: whether it lies outside every repeated group (such a
// field has one value a record, and a column where records become rows).
inline std::vector<bool> top_level_fields(const RecordDesc& r) {
    std::vector<bool> top(r.field_count, false);
    int depth = 0;
    for (std::uint32_t k = 0; k < r.layout_count; ++k) {
        const LayoutStep& s = r.layout[k];
        if (s.op == LayoutStep::repeat) ++depth;
        if (s.op == LayoutStep::end) --depth;
        if (s.op == LayoutStep::field && depth == 0) top[s.index] = true;
    }
    return top;
}

// Per field of `r`: the bytes field it is the length of and nothing else
// (no group's count, no other field's length), where both are top-level and
// the length comes first; else no_field. Such a length says no more than its
// string does: data views leave it out (read_pandas) and writers derive it
// (metatf.Writer), docs/python.md.
inline std::vector<std::int32_t> string_lengths(const RecordDesc& r) {
    std::vector<std::int32_t> out(r.field_count, no_field);
    std::vector<int> uses(r.field_count, 0);  // as a length or a count
    std::vector<bool> seen(r.field_count, false), top(r.field_count, false);
    int depth = 0;
    for (std::uint32_t k = 0; k < r.layout_count; ++k) {
        const LayoutStep& s = r.layout[k];
        if (s.op == LayoutStep::repeat) {
            uses[s.index] += 2;  // a count is no string's length
            ++depth;
        }
        if (s.op == LayoutStep::end) --depth;
        if (s.op != LayoutStep::field) continue;
        seen[s.index] = true;
        top[s.index] = depth == 0;
        const std::int32_t from = r.fields[s.index].width_from;
        if (from == no_field || r.fields[s.index].type != Type::bytes) continue;
        const auto length = static_cast<std::uint32_t>(from);
        ++uses[length];
        if (depth == 0 && top[length] && seen[length]) out[length] = static_cast<std::int32_t>(s.index);
    }
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        if (uses[i] != 1) out[i] = no_field;
    }
    return out;
}

namespace detail {

// The index of the `end` step that closes the repeat starting at step `i`.
inline std::uint32_t layout_end(const RecordDesc& r, std::uint32_t i) {
    int depth = 0;
    for (std::uint32_t j = i; j < r.layout_count; ++j) {
        if (r.layout[j].op == LayoutStep::repeat) ++depth;
        if (r.layout[j].op == LayoutStep::end && --depth == 0) return j;
    }
    return r.layout_count;
}

template <typename Visitor>
void walk_steps(const RecordDesc& r, std::uint32_t from, std::uint32_t to, Visitor& v) {
    for (std::uint32_t i = from; i < to; ++i) {
        const LayoutStep& step = r.layout[i];
        if (step.op == LayoutStep::field) {
            v.field(step.index);
            continue;
        }
        const std::uint32_t end = layout_end(r, i);
        v.group(i, [&r, &v, i, end] { walk_steps(r, i + 1, end, v); });
        i = end;
    }
}

}  // namespace detail

// Calls v.field(index) for each field step and v.group(step, element) for
// each repeated group, in layout order. `step` is the group's repeat step
// (r.layout[step].index is its count field); element() walks the group's body
// once, and the visitor calls it once per element: it decides how many there
// are (from the count, or from the values or text it has), and may call it
// not at all.
template <typename Visitor>
void walk_layout(const RecordDesc& r, Visitor& v) {
    detail::walk_steps(r, 0, r.layout_count, v);
}

// How a writer of values (the text and native writers) walks a group whose
// count says `count`: `count` elements, stopping early where an element that
// starts with a field finds another value next (the values hold fewer
// elements: the caller refuses the record), or at an element that takes no
// values (the rest take none either). Returns the elements the values hold,
// `count` when they hold them all. `next_field()` is the field of the next
// value, or -1 when none is left; `position()` how many values have been taken.
template <typename Position, typename NextField, typename Element>
std::uint64_t walk_written_group(const RecordDesc& r, std::uint32_t step, std::uint64_t count, Position&& position,
                                 NextField&& next_field, Element&& element) {
    const LayoutStep& first = r.layout[step + 1];
    for (std::uint64_t k = 0; k < count; ++k) {
        if (first.op == LayoutStep::field && next_field() != static_cast<std::int64_t>(first.index)) return k;
        const auto before = position();
        element();
        if (position() == before) break;
    }
    return count;
}

}  // namespace metatf::rt
