#include "metatf/io/columns.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace metatf::rt {

ColumnTarget::ColumnTarget(const RecordDesc& r) : record_(&r), by_field_(r.field_count) {
    int depth = 0;
    for (std::uint32_t k = 0; k < r.layout_count; ++k) {
        const LayoutStep& s = r.layout[k];
        if (s.op == LayoutStep::repeat && depth++ == 0) counts_.push_back(s.index);
        if (s.op == LayoutStep::end) --depth;
        if (s.op == LayoutStep::field && depth == 0) steps_.push_back({s.index, r.fields[s.index].type, nullptr, 0});
    }
}

void ColumnTarget::keep(std::uint32_t field, std::byte* data, std::size_t stride) {
    by_field_[field] = {field, record_->fields[field].type, data, stride};
    for (Kept& k : steps_) {
        if (k.field == field) k = by_field_[field];
    }
}

void ColumnTarget::keep(std::uint32_t field, StringColumn& column) {
    by_field_[field] = {field, Type::bytes, nullptr, 0, &column};
    for (Kept& k : steps_) {
        if (k.field == field) k = by_field_[field];
    }
}

void ColumnTarget::put(const GenericValue& v) {
    const Kept& k = by_field_[v.field];
    if (k.strings) k.strings->put(v.bytes);
    if (!k.data) return;
    store(k, k.type == Type::floating ? std::bit_cast<std::uint64_t>(v.real) : v.integer);
}

std::int32_t StringColumn::code_of(std::span<const std::byte> value) {
    const std::string_view v(reinterpret_cast<const char*>(value.data()), value.size());
    if (v.size() < 8) {
        // A short string (a host, an operation) is its own key: bytes and length in one word.
        std::uint64_t key = std::uint64_t(v.size()) << 56;
        std::memcpy(&key, v.data(), v.size());
        const auto [at, fresh] = short_.try_emplace(key, static_cast<std::int32_t>(distinct_.size()));
        if (fresh) distinct_.emplace_back(v);
        return at->second;
    }
    auto at = index_.find(v);
    if (at == index_.end()) {
        at = index_.emplace(std::string(v), static_cast<std::int32_t>(distinct_.size())).first;
        distinct_.emplace_back(v);
    }
    return at->second;
}

void StringColumn::append(const StringColumn& other) {
    std::vector<std::int32_t> renumber;
    renumber.reserve(other.distinct_.size());
    for (const std::string& v : other.distinct_) renumber.push_back(code_of(std::as_bytes(std::span(v))));
    codes_.reserve(codes_.size() + other.codes_.size());
    for (const std::int32_t c : other.codes_) codes_.push_back(renumber[static_cast<std::size_t>(c)]);
}

namespace {

// The refusal of a value the DTD fixes otherwise, with the reader moved to
// the record, so that the error names it as decode_values() would.
[[noreturn, gnu::noinline]] void refuse_at(TraceReader& reader, const TraceReader::Run& run, const std::byte* record,
                                           std::uint64_t records, std::uint32_t slot, const FieldState& s, std::uint64_t value,
                                           const std::byte* at) {
    reader.advance(record, records);
    reader.begin_record(TraceReader::Run{record, run.limit, run.end, run.tags, run.tag_count, 0, 0, 0}, slot);
    reader.refuse_fixed(s, value, at);
}

// The sections that strided fields read (RecordPlan::strided), as one
// read_columns() takes them: the chunk each has loaded, and how far into it
// the records read so far took its cursor, handed back with the records.
class StridedViews {
public:
    explicit StridedViews(TraceReader& reader) : reader_(reader) {}

    // The records read are handed back (TraceReader::advance()): so are the
    // values they took.
    void hand_back() {
        for (View& v : views_) {
            if (v.at != v.start) reader_.taken(v.section, v.at - v.start);
            v.start = v.at;
        }
    }

    // Whether the loaded chunks hold every value the record's strided fields read.
    bool fit(std::span<const ColumnTarget::SectionUse> uses) {
        for (const auto& u : uses) {
            const View* v = view(u.section);
            if (!v || v->at > v->bytes.size() || v->bytes.size() - v->at < u.need) return false;
        }
        return true;
    }
    // A strided field's value, of a record that fit().
    std::uint64_t value(const ColumnTarget::Strided& f, FieldState& s) {
        const View& v = *find(f.section);
        return s.from_element(load_uint(v.bytes.data() + v.at + f.before, f.width, ByteOrder::little));
    }
    // The record is read: its strided fields' cursors move on.
    void advance(std::span<const ColumnTarget::SectionUse> uses) {
        for (const auto& u : uses) find(u.section)->at += u.step;
    }

private:
    struct View {
        std::uint8_t section = 0;
        std::span<const std::byte> bytes;
        std::uint64_t start = 0, at = 0;  // the cursor's place in `bytes`: when first seen, and now
    };
    View* find(std::uint8_t section) {
        const auto v = std::ranges::find(views_, section, &View::section);
        return v == views_.end() ? nullptr : &*v;
    }
    // A split stream has a handful of sections: a short list serves.
    View* view(std::uint8_t section) {
        if (View* v = find(section)) return v->bytes.empty() ? nullptr : v;
        View v{section, {}, 0, 0};
        v.bytes = reader_.strided_chunk(section, v.start);
        v.at = v.start;
        views_.push_back(v);
        return v.bytes.empty() ? nullptr : &views_.back();
    }

    TraceReader& reader_;
    std::vector<View> views_;
};

}  // namespace

// detail::groups_empty() and counts_answerable() over the lists a target keeps.
bool ColumnTarget::groups_empty(const FieldState* states, const std::byte* p) const {
    for (const std::uint32_t count : counts_) {
        if (plan_peek(states[count], p) != 0) return false;
    }
    return true;
}

bool ColumnTarget::counts_answerable(TraceReader& reader, const FieldState* states, const std::byte* p, std::int32_t stretch,
                                     std::size_t length) const {
    for (const Kept& k : steps_) {
        const FieldState& s = states[k.field];
        if (static_cast<std::int32_t>(k.field) == stretch) p += length;  // the fields after a string's bytes
        if (codes(s.kind) && !reader.answerable(s, p)) return false;
    }
    return true;
}

// plain_: whether the record's kept fields are all numbers read as the plan
// says (times a unit) and nothing more: no live count, fed pool or fixed
// value to check (a strided field leaves the plan not fixed). The encodings do not change within one
// read_columns() (a metadata record ends it).
void ColumnTarget::prepare(const FieldState* states, const RecordPlan& plan) {
    if (prepared_for_ == states) return;
    prepared_for_ = states;
    plain_ = plan.fixed && !plan.pools && std::all_of(steps_.begin(), steps_.end(), [&](const Kept& k) {
        const FieldState& s = states[k.field];
        return k.type != Type::bytes && !codes(s.kind) && s.feed == 0 && !s.desc->fixed;
    });
    strided_.clear();
    uses_.clear();
    for (const Kept& k : steps_) {
        if (k.field >= 64 || !(plan.strided >> k.field & 1)) continue;
        const FieldState& s = states[k.field];
        auto use = std::ranges::find(uses_, s.section, &SectionUse::section);
        if (use == uses_.end()) use = uses_.insert(use, SectionUse{s.section, 0, 0});
        // Each read takes the element at the cursor, then moves it `stride`
        // elements on. A stride past any chunk (a crafted trace's, which
        // could wrap the sums) makes the record's values never fit: the
        // field-by-field path reads it, and reports what is wrong.
        strided_.push_back({s.section, s.restore, use->step});
        const auto stride = static_cast<std::uint64_t>(s.stride);
        if (use->step > max_chunk_bytes || stride > max_chunk_bytes) {
            use->need = ~std::uint64_t(0);
            continue;
        }
        use->need = std::max(use->need, use->step + s.restore);
        use->step += stride * s.restore;
    }
}

std::uint64_t ColumnTarget::read_plain(FieldState* states, const RecordPlan& plan, const std::byte* pos, const std::byte* end,
                                       std::uint64_t index, std::uint64_t most) {
    // The run: records of this type one after another (one where the groups'
    // counts must be read record by record).
    const std::byte tag = *pos;
    const std::size_t record = std::size_t(plan.size) + 1;
    std::uint64_t n = 1;
    const std::byte* next = pos + record;
    while (!plan.counted && n < most && static_cast<std::size_t>(end - next) >= record + 8 && *next == tag) {
        next += record;
        ++n;
    }
    // Then field by field: a copy of a field's state stays in registers, which
    // the stores into the columns would otherwise make the compiler reload.
    if (index_.data) {
        for (std::uint64_t i = 0; i < n; ++i, ++index) std::memcpy(index_.data + (rows_ + i) * index_.stride, &index, 8);
    }
    for (const Kept& k : steps_) {
        FieldState s = states[k.field];
        const std::byte* p = pos + 1;
        std::byte* out = k.data ? k.data + rows_ * k.stride : nullptr;
        if (k.type == Type::floating) {  // no state to keep: read only if kept
            for (std::uint64_t i = 0; out && i < n; ++i, p += record) {
                const auto bits = std::bit_cast<std::uint64_t>(detail::planned_float(s, p));
                std::memcpy(out + i * k.stride, &bits, 8);
            }
            continue;
        }
        for (std::uint64_t i = 0; i < n; ++i, p += record) {
            s.previous = plan_peek(s, p);
            if (out) std::memcpy(out + i * k.stride, &s.previous, 8);
        }
        states[k.field].previous = s.previous;
    }
    rows_ += n;
    return n;
}

std::uint64_t read_columns(TraceReader& reader, std::span<ColumnTarget* const> targets, std::uint64_t stop) {
    for (ColumnTarget* t : targets) {
        if (t) t->prepared_for_ = nullptr;  // encodings may have changed since the last call
    }
    if (reader.dtd().tag_width != 1 || reader.record_index() >= stop) return 0;
    const TraceReader::Run run = reader.run();
    const std::uint64_t first = reader.record_index(), most = stop - first;
    const std::byte* pos = run.pos;
    std::uint64_t n = 0;
    StridedViews sections(reader);
    while (n < most && pos < run.end) {
        const std::int64_t found = run.slot_of(std::to_integer<std::uint64_t>(*pos));
        if (found < 0 || !targets[static_cast<std::size_t>(found)]) break;
        const auto slot = static_cast<std::uint32_t>(found);
        ColumnTarget& t = *targets[slot];
        const RecordPlan& plan = reader.plan(slot);
        const std::byte* p = pos + 1;
        const std::size_t room = static_cast<std::size_t>(run.end - p);
        if ((!plan.fixed && plan.stretch == no_field && plan.strided == 0) || room < std::size_t(plan.size) + 8) break;
        FieldState* states = reader.states(slot);
        t.prepare(states, plan);
        if (!t.uses_.empty() && !sections.fit(t.uses_)) break;
        // A string's length, peeked: its bytes move the fields after it. An
        // intern length's code names a string of its table, with no bytes
        // here; after the escape, a new string is read field by field.
        std::size_t stretch = 0;
        const FieldState* interned = nullptr;
        std::uint64_t code = 0;
        if (plan.stretch != no_field) {
            if (plan.counted) break;  // the groups' counts are peeked at their offsets: not past the bytes
            const FieldState& length = states[reader.dtd().records[slot].fields[plan.stretch].width_from];
            const std::uint64_t peeked = plan_peek(length, p);
            if (length.kind == Interp::intern) {
                if (peeked == live_escape(length.width)) break;
                interned = &length;
                code = peeked;
            } else {
                stretch = peeked;
            }
            if (stretch > room - plan.size - 8) break;
        }
        // A code past the table: the field-by-field path reports it.
        const StringTable* table = interned ? &reader.table_of(slot, *interned) : nullptr;
        if (table && code >= table->size()) break;
        if (plan.counted && !t.groups_empty(states, p)) break;
        if (plan.pools && !t.counts_answerable(reader, states, p, plan.stretch, stretch)) break;
        const auto refuse = [&](const FieldState& s, std::uint64_t value, const std::byte* at) {
            sections.hand_back();
            refuse_at(reader, run, pos, n, slot, s, value, at);
        };
        if (t.plain_) {
            const std::uint64_t read = t.read_plain(states, plan, pos, run.end, first + n, most - n);
            pos += read * (std::size_t(plan.size) + 1);
            n += read;
            continue;
        }
        t.begin_row(first + n);
        const std::byte* at = p;  // the record's start, as far as the fields' offsets know
        const ColumnTarget::Strided* strided = t.strided_.data();
        for (const ColumnTarget::Kept& k : t.steps_) {
            FieldState& s = states[k.field];
            std::uint64_t bits = 0;
            switch (k.type) {
                case Type::unsigned_int:
                case Type::signed_int:
                    if (s.kind == Interp::section_stride) {
                        if (s.desc->breaks_fixed(bits = sections.value(*strided++, s))) refuse(s, bits, at + s.offset);
                    } else if (&s != interned) {
                        bits = detail::planned_integer(reader, s, at, plan.immediate, refuse);
                    } else if (s.desc->breaks_fixed(bits = table->at(code).size())) {
                        refuse(s, bits, at + s.offset);
                    }
                    break;
                case Type::floating: bits = std::bit_cast<std::uint64_t>(detail::planned_float(s, at)); break;
                case Type::bytes: {
                    const bool stretched = static_cast<std::int32_t>(k.field) == plan.stretch;
                    const std::size_t width = stretched ? stretch : planned_bytes(s, states);
                    if (k.strings && stretched && table) {
                        k.strings->put(*table, code, reader.segment_starts());
                    } else if (k.strings) {
                        k.strings->put({at + s.offset, width});
                    }
                    if (stretched) at += stretch;
                    continue;
                }
            }
            if (k.data) t.store(k, bits);
        }
        if (plan.pools && reader.pools().pending()) reader.pools().end_record();
        sections.advance(t.uses_);
        pos = p + plan.size + stretch;
        ++n;
    }
    sections.hand_back();
    reader.advance(pos, n);
    return n;
}

}  // namespace metatf::rt
