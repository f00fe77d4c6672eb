// Walks a record's layout (RecordDesc::layout, a flat program of field,
// repeat and end steps) in order: the one walk that the generic decoder and
// encoder, the text reader and writer and mtf's output all use.
#pragma once

#include "descriptor.hpp"

namespace metatf::rt {

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

}  // namespace metatf::rt
