#include "metatf/analysis/auto_encoder.hpp"

#include <zstd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "metatf/encoding/predefined.hpp"
#include "pool_planner.hpp"

namespace metatf::rt {

// One metadata record the plan writes: op with values a and b.
struct AutoEncoder::Change {
    std::uint32_t slot, field;
    MetaOp op;
    std::uint64_t a, b;
};

namespace {

// A candidate encoding of one field for the window: the metadata that sets
// it (none when it is the field's encoding now) and its cost.
struct Candidate {
    std::optional<MetaOp> op;  // the interpretation to set, if it changes
    std::uint64_t a = 0, b = 0;
    std::uint32_t width = 0;   // bytes each value takes
    double cost = 0;
    std::uint64_t unit = 0;    // the unit to set, 0 to keep the one in force
};

// Whether a metadata record can carry `v` as value i in a trace whose words are `word` bytes.
bool carries(const FieldState& s, MetaOp op, unsigned i, std::uint64_t v, unsigned word) {
    return metadata_value_signed(*s.desc, op, i) ? fits_signed(v, word) : fits_unsigned(v, word);
}

// std::gcd(divisor, v), with a shortcut for the common case of a column
// whose values all share the divisor found so far (sizes in 512s, times in µs).
std::uint64_t common_divisor(std::uint64_t divisor, std::uint64_t v) {
    return divisor != 0 && v % divisor == 0 ? divisor : std::gcd(divisor, v);
}

class FieldPlanner {
public:
    // `predict`: whether `predict` is among the candidates (References::predict).
    // `priors`: with a shared history, the previous value each value's delta counts from; else empty.
    FieldPlanner(const FieldState& now, const std::vector<std::uint64_t>& values, const std::vector<std::uint64_t>& priors,
                 const DtdDesc& dtd, unsigned word, ZSTD_CCtx* cctx, bool predict)
        : now_(now), values_(values), priors_(priors), dtd_(dtd), word_(word), cctx_(cctx), predict_(predict) {}

    // The cheapest encoding for the values, favouring the one in force.
    Candidate best() { return cheapest(candidates(true)); }
    // The cheapest that stores every value, under none, baseOffset or delta:
    // those a split stream's elements keep (MetaOp::split).
    Candidate best_stored() { return cheapest(candidates(false)); }

private:
    std::vector<Candidate> candidates(bool every_kind) {
        std::vector<Candidate> all;
        if (every_kind) stores_nothing(all);
        if (now_.kind == Interp::none || now_.kind == Interp::delta || now_.kind == Interp::base_offset) {
            add(all, std::nullopt, now_.value, 0);  // the encoding in force, continued
        }
        if (now_.kind != Interp::none) add(all, MetaOp::none, 0, 0);
        // A delta from the first value: set afresh, one that goes on would take a jump before the window.
        if (now_.kind != Interp::delta || now_.previous != values_.front()) add(all, MetaOp::delta, values_.front(), 0);
        if (every_kind && predict_) predicted(all);
        const auto [lo, hi] = range();
        add(all, MetaOp::base_offset, lo + (hi - lo) / 2, 0);
        // A base on the values' grid, so that the offsets have their common unit too.
        std::uint64_t grid = 0;
        for (auto v = values_.begin(); v != values_.end() && grid != 1; ++v) grid = common_divisor(grid, *v - lo);
        if (grid > 1 && (hi - lo) / 2 % grid != 0) add(all, MetaOp::base_offset, lo + (hi - lo) / 2 / grid * grid, 0);
        return all;
    }

    static Candidate cheapest(const std::vector<Candidate>& all) {
        if (all.empty()) return {};  // no metadata record can carry a change: keep the encoding
        const Candidate* pick = &all.front();
        for (const Candidate& c : all) {
            if (c.cost < pick->cost) pick = &c;  // the first of equal costs: the one in force
        }
        return *pick;
    }

    // The least and greatest value, compared as the field's type says.
    std::pair<std::uint64_t, std::uint64_t> range() const {
        const bool sign = now_.desc->type == Type::signed_int;
        const auto less = [sign](std::uint64_t x, std::uint64_t y) {
            return sign ? static_cast<std::int64_t>(x) < static_cast<std::int64_t>(y) : x < y;
        };
        const auto [lo, hi] = std::minmax_element(values_.begin(), values_.end(), less);
        return {*lo, *hi};
    }

    // default or stride, when every value is the same or a constant step apart:
    // they cost only the metadata that sets them, if any.
    void stores_nothing(std::vector<Candidate>& all) const {
        const std::uint64_t first = values_.front();
        if (std::all_of(values_.begin(), values_.end(), [&](std::uint64_t v) { return v == first; })) {
            if (now_.kind == Interp::default_value && now_.value == first) {
                all.push_back(Candidate{});
            } else if (carries(now_, MetaOp::default_value, 0, first, word_)) {
                all.push_back(Candidate{MetaOp::default_value, first, 0, 0, metadata_cost(MetaOp::default_value)});
            }
        }
        if (values_.size() < 3 || !priors_.empty()) return;  // a shared history's steps are not the column's
        const std::uint64_t step = values_[1] - first;
        for (std::size_t i = 1; i < values_.size(); ++i) {
            if (values_[i] - values_[i - 1] != step) return;
        }
        if (now_.kind == Interp::stride && static_cast<std::uint64_t>(now_.stride) == step && now_.previous + step == first) {
            all.push_back(Candidate{});
        } else if (carries(now_, MetaOp::stride, 0, first - step, word_)) {
            all.push_back(Candidate{MetaOp::stride, first - step, step, 0, metadata_cost(MetaOp::stride)});
        }
    }

    // `predict` with no pool and all seven predictors: the field's codes at
    // the width in force when it is predicted now (its history goes on), else
    // at 1 byte, where they estimate a tenth smaller than the rest (as for
    // references, pool_planner.cpp).
    void predicted(std::vector<Candidate>& all) {
        const bool now = now_.kind == Interp::predict && now_.pool == 0;
        // Setting predict needs a width to restore, and a DTD without tables (read out of sequence).
        if (!now && (now_.restore == 0 || table_section(dtd_, -1))) return;
        std::vector<detail::Count> values;
        values.reserve(values_.size());
        for (std::uint64_t v : values_) values.push_back({std::nullopt, v});
        const std::uint32_t width = now ? now_.width : 1;
        detail::code_column(values, width, true, all_predictors, now ? now_.history : PredictHistory{}, column_);
        const double cost = detail::column_cost(column_, cctx_);
        if (now && now_.value == all_predictors) {
            all.push_back({std::nullopt, 0, 0, width, cost});
        } else {
            const double set = metadata_cost(MetaOp::predict) + (now_.restore != 1 ? metadata_cost(MetaOp::width) : 0);
            all.push_back({MetaOp::predict, 0, all_predictors, 1, cost / 0.9 + set});
        }
    }

    // The bytes of a metadata record for `op`: its tag, the record's tag, field, property and values.
    double metadata_cost(MetaOp op) const { return 2.0 * dtd_.tag_width + 2 + word_ * metadata_value_count(op); }

    // Adds the candidates that `op` (nothing: the encoding in force) gives, if
    // a metadata record can set it, in each unit worth trying: at the fewest
    // bytes the values need, and at the width the field then has, when that
    // holds them too.
    void add(std::vector<Candidate>& all, std::optional<MetaOp> op, std::uint64_t a, std::uint64_t b) {
        FieldState s = now_;
        if (op && (!carries(now_, *op, 0, a, word_) || apply_metadata(s, *op, a, b, dtd_))) return;
        for (const std::uint64_t unit : units(s)) {
            s.unit = unit;
            std::uint32_t need = 1;
            bool whole = true;  // every value a whole number of units
            for (std::size_t i = 0; i < values_.size(); ++i) {
                const FieldFit fit = fit_value(s, values_[i], before(i, s.previous));
                need = std::max(need, fit.width);
                whole = whole && !fit.to_unit_one;
            }
            if (!whole) continue;
            const std::uint64_t set_unit = unit == now_.unit ? 0 : unit;
            const double set = (op ? metadata_cost(*op) : 0) + (set_unit ? metadata_cost(MetaOp::unit) : 0);
            all.push_back({op, a, b, need, set + cost(s, need) + (need != s.width ? metadata_cost(MetaOp::width) : 0), set_unit});
            if (need < s.width) all.push_back({op, a, b, s.width, set + cost(s, s.width), set_unit});
        }
    }

    // The units worth trying under `s`: the one in force, 1, and the greatest
    // unit every stored difference is a whole number of.
    std::vector<std::uint64_t> units(const FieldState& s) const {
        if (!unit_applies(s.kind)) return {s.unit};
        std::vector<std::uint64_t> out{s.unit};
        if (s.unit != 1) out.push_back(1);
        const bool sign = stores_signed(s.desc->type, s.kind);
        std::uint64_t common = 0;
        for (std::size_t i = 0; i < values_.size() && common != 1; ++i) {
            const std::uint64_t d = values_[i] - s.add - (before(i, s.previous) & s.keep);
            common = common_divisor(common, sign && static_cast<std::int64_t>(d) < 0 ? 0 - d : d);
        }
        if (common > 1 && common <= max_unit && common != s.unit) out.push_back(common);
        return out;
    }

    // The bytes the values take at `width` under `s`, after compression when the trace is compressed.
    double cost(FieldState s, std::uint32_t width) {
        const auto raw = static_cast<double>(values_.size()) * width;
        if (!cctx_) return raw;  // the bytes themselves: no need to make them
        column_.resize(values_.size() * width);
        std::byte* out = column_.data();
        const std::uint64_t first = s.previous;
        const bool sign = stores_signed(s.desc->type, s.kind);
        for (std::size_t k = 0; k < values_.size(); ++k) {
            s.previous = before(k, first);
            std::uint64_t stored = plan_stored(s, values_[k]);
            if (s.unit != 1 && unit_applies(s.kind)) stored = divide_by_unit(stored, s.unit, sign).value_or(stored);
            for (unsigned i = 0; i < width; ++i) *out++ = static_cast<std::byte>(stored >> (8 * i));
        }
        return std::min(raw, static_cast<double>(compressed_size()));
    }

    std::size_t compressed_size() {
        packed_.resize(ZSTD_compressBound(column_.size()));
        const std::size_t n = ZSTD_compressCCtx(cctx_, packed_.data(), packed_.size(), column_.data(), column_.size(), 1);
        return ZSTD_isError(n) ? column_.size() : n;
    }

    // The value value i's delta or stride counts from: the one before it, or
    // the first's `first`; with a shared history, the history's.
    std::uint64_t before(std::size_t i, std::uint64_t first) const {
        if (!priors_.empty()) return priors_[i];
        return i == 0 ? first : values_[i - 1];
    }

    const FieldState& now_;
    const std::vector<std::uint64_t>& values_;
    const std::vector<std::uint64_t>& priors_;
    const DtdDesc& dtd_;
    unsigned word_;
    ZSTD_CCtx* cctx_;
    bool predict_;
    std::vector<std::byte> column_, packed_;
};


// A split stream's field as if its stored integers were in the record.
FieldState as_stored(const FieldState& now) {
    FieldState in = now;
    in.kind = now.element;
    in.width = in.restore;
    in.derive();
    return in;
}

// One metadata record for a field: op with values a and b.
struct Setting {
    MetaOp op;
    std::uint64_t a, b;
};

// The metadata that keeps split field `now` split, its elements under `c`,
// the cheapest interpretation a split keeps (FieldPlanner::best_stored()):
// set in the record, then split again.
std::vector<Setting> split_settings(const FieldState& now, const Candidate& c) {
    std::vector<Setting> out;
    if (c.width == 0) return out;  // no metadata record could carry a change
    if (c.op) out.push_back({*c.op, c.a, c.b});
    if (c.unit != 0) out.push_back({MetaOp::unit, c.unit, 0});
    if (c.width != now.restore) out.push_back({MetaOp::width, c.width, 0});
    if (c.op) out.push_back({MetaOp::split, now.section, static_cast<std::uint64_t>(now.stride)});
    return out;
}

// Appends to `priors` (per field of `r`) the previous value each history
// field of a record (its `count` values) counts from, and moves the
// histories on past it, as the writer will.
void follow_histories(const RecordDesc& r, const GenericValue* values, std::size_t count, Histories& histories,
                      std::vector<std::vector<std::uint64_t>>& priors) {
    priors.resize(r.field_count);
    std::vector<std::uint64_t> last(r.field_count);
    for (std::size_t i = 0; i < count; ++i) {
        const FieldDesc& d = r.fields[values[i].field];
        last[values[i].field] = values[i].integer;
        if (d.history == no_field) continue;
        const std::uint64_t key = Histories::key_in(d, last.data());
        priors[values[i].field].push_back(histories.previous(d.history, key));
        histories.set(d.history, key, values[i].integer);
    }
}

// The width an intern field takes for the window's `strings`, when
// interning them pays (docs/compactness.md): a string seen before (in the
// writer's table, or earlier in the window) costs its code instead of its
// length and bytes, saving the bytes; a new one costs the escape more. To
// turn intern on, the bytes saved must be over twice the escapes' (plain
// strings compress too, and every segment names its strings afresh) and the
// metadata record's (`change` bytes); once `in_force`, it stays unless the
// escapes cost more than the bytes saved and a record to turn it off.
std::optional<std::uint32_t> intern_width(const StringTable* table, const std::vector<std::span<const std::byte>>& strings,
                                          bool in_force, std::size_t change) {
    std::unordered_set<std::string_view> seen;
    const auto view = [](std::span<const std::byte> s) { return std::string_view(reinterpret_cast<const char*>(s.data()), s.size()); };
    std::size_t longest = 0, saved = 0;
    for (const auto s : strings) {
        longest = std::max(longest, s.size());
        if ((table && table->find(s)) || !seen.insert(view(s)).second) saved += s.size();
    }
    auto width = std::max<std::uint32_t>(bytes_needed(longest, false), 1);
    if (live_escape(width) <= (table ? table->size() : 0) + seen.size()) ++width;  // room for the new codes
    const std::size_t escapes = seen.size() * width;
    if (width > 8 || (in_force ? escapes > saved + change : 2 * escapes + change >= saved)) return std::nullopt;
    return width;
}

// Whether the encodings of record type `slot` may change. Records in a table
// are read back with the DTD's initial encodings, so their types keep them:
// those of the table's section, and the global ones, which may be written anywhere.
bool may_change(const DtdDesc& dtd, std::uint32_t slot) {
    const std::uint8_t section = dtd.records[slot].section;
    return dtd.records[slot].predefined == Predefined::none && !table_section(dtd, section == 0 ? -1 : section);
}

}  // namespace

AutoEncoder::AutoEncoder(TraceWriter& writer, std::size_t window, References references)
    : writer_(writer), window_(std::max<std::size_t>(window, 1)), references_(references) {
    if (writer.options().strict) {
        throw TraceError(ErrorKind::usage, "a strict writer keeps its encodings: it cannot have them chosen from the data");
    }
}

void AutoEncoder::write(const GenericRecord& record) {
    if (writer_.dtd().records[record.slot].predefined == Predefined::comment && record.values.size() == 2) {
        return comment(comment_text(record));  // a native file's header, or a comment copied from a trace
    }
    events_.push_back({Event::record, record.slot, values_.size(), record.values.size()});
    for (const GenericValue& v : record.values) {
        offsets_.push_back(bytes_.size());
        sizes_.push_back(v.bytes.size());
        bytes_.insert(bytes_.end(), v.bytes.begin(), v.bytes.end());
        values_.push_back({v.field, v.integer, v.real, {}});
    }
    if (++records_ >= window_) flush();
}

void AutoEncoder::comment(std::string_view text) {
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    events_.push_back({Event::comment, 0, bytes_.size(), text.size()});
    bytes_.insert(bytes_.end(), p, p + text.size());
}

void AutoEncoder::section(std::uint8_t number) { events_.push_back({Event::section, number, 0, 0}); }

void AutoEncoder::flush() {
    replay(plan());
    events_.clear();
    values_.clear();
    offsets_.clear();
    sizes_.clear();
    bytes_.clear();
    records_ = 0;
}

std::vector<AutoEncoder::Change> AutoEncoder::plan() const {
    const DtdDesc& dtd = writer_.dtd();
    const unsigned word = writer_.options().cls == Class::bits32 ? 4 : 8;
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(writer_.options().compress > 0 ? ZSTD_createCCtx() : nullptr,
                                                             &ZSTD_freeCCtx);
    // Each record type's integer values in the window, field by field, in the order they are written.
    std::vector<std::vector<std::vector<std::uint64_t>>> columns(dtd.record_count);
    // With shared histories, the previous value each of a field's values counts from.
    std::vector<std::vector<std::vector<std::uint64_t>>> priors(dtd.record_count);
    Histories histories = writer_.histories();
    std::vector<detail::WindowRecord> records;
    for (const Event& e : events_) {
        if (e.kind != Event::record) continue;
        records.push_back({e.slot, values_.data() + e.first, e.count});
        auto& fields = columns[e.slot];
        fields.resize(dtd.records[e.slot].field_count);
        for (std::size_t i = e.first; i < e.first + e.count; ++i) fields[values_[i].field].push_back(values_[i].integer);
        if (has_history(dtd.records[e.slot])) follow_histories(dtd.records[e.slot], values_.data() + e.first, e.count, histories, priors[e.slot]);
    }
    // Strings whose length field may be intern: their values in the window, by length field.
    // Which fields may be is the DTD's to say, found once per record type (none in a DTD with tables).
    std::vector<std::vector<bool>> internable(dtd.record_count);
    const bool tables = table_section(dtd, -1);
    for (std::uint32_t slot = 0; slot < dtd.record_count && !tables; ++slot) {
        if (!may_change(dtd, slot)) continue;
        const RecordDesc& r = dtd.records[slot];
        for (std::uint32_t f = 0; f < r.field_count; ++f) internable[slot].push_back(!intern_problem(r, f));
    }
    std::map<detail::FieldKey, std::vector<std::span<const std::byte>>> strings;
    for (const Event& e : events_) {
        if (e.kind != Event::record || internable[e.slot].empty()) continue;
        const RecordDesc& r = dtd.records[e.slot];
        for (std::size_t i = e.first; i < e.first + e.count; ++i) {
            const std::int32_t from = r.fields[values_[i].field].width_from;
            if (r.fields[values_[i].field].type != Type::bytes || from == no_field || !internable[e.slot][static_cast<std::size_t>(from)]) continue;
            strings[detail::field_key(e.slot, static_cast<std::uint32_t>(from))].emplace_back(bytes_.data() + offsets_[i], sizes_[i]);
        }
    }
    std::vector<Change> elements;
    for (const auto& [key, values] : strings) {
        const auto slot = static_cast<std::uint32_t>(key >> 32), f = static_cast<std::uint32_t>(key);
        const FieldState& now = writer_.states(slot)[f];
        if (now.kind == Interp::section_stride) continue;  // a split stream's field keeps it
        const auto width = intern_width(writer_.strings(slot, f), values, now.kind == Interp::intern, 2 * dtd.tag_width + 2);
        if (!width) continue;
        // The width first: a field that stores nothing has none to restore.
        if (*width != now.restore) elements.push_back({slot, f, MetaOp::width, *width, 0});
        if (now.kind != Interp::intern) elements.push_back({slot, f, MetaOp::intern, 0, 0});
        columns[slot][f].clear();  // not weighed as numbers
    }
    // The best encoding of each field that may change, then which of them are cheaper as references.
    // A split stream's field keeps it, at the fewest bytes its elements need.
    std::map<detail::FieldKey, Candidate> best;
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        if (!may_change(dtd, slot)) continue;
        for (std::uint32_t f = 0; f < columns[slot].size(); ++f) {
            const FieldState& now = writer_.states(slot)[f];
            const std::vector<std::uint64_t>& values = columns[slot][f];
            if (values.empty() || !is_integer(now.desc->type) || now.kind == Interp::section_offset) continue;
            static const std::vector<std::uint64_t> own;  // no shared history
            const std::vector<std::uint64_t>& prior = f < priors[slot].size() ? priors[slot][f] : own;
            if (now.kind == Interp::section_stride && now.element == Interp::section_stride) {
                std::uint32_t need = 1;  // the paper's sectionStride: the values themselves
                for (std::uint64_t v : values) need = std::max(need, fit_value(now, v, 0).width);
                if (need != now.restore) elements.push_back({slot, f, MetaOp::width, need, 0});
                continue;
            }
            if (now.kind == Interp::section_stride) {
                const FieldState stored = as_stored(now);
                const Candidate c = FieldPlanner(stored, values, prior, dtd, word, cctx.get(), false).best_stored();
                for (const auto& [op, a, b] : split_settings(now, c)) elements.push_back({slot, f, op, a, b});
                continue;
            }
            best.emplace(detail::field_key(slot, f),
                         FieldPlanner(now, values, prior, dtd, word, cctx.get(), references_ == References::predict).best());
        }
    }
    detail::PoolChoice pools;
    if (references_ != References::none && !table_section(dtd, -1)) {
        pools = detail::plan_pools(
            writer_, records, cctx.get(), references_ == References::predict, [&](detail::FieldKey k) { return best.count(k) != 0; },
            [&](detail::FieldKey k) { return best.at(k).cost; });
    }
    std::vector<Change> changes = std::move(elements);
    for (const auto& [key, c] : best) {
        const auto slot = static_cast<std::uint32_t>(key >> 32), f = static_cast<std::uint32_t>(key);
        const FieldState& now = writer_.states(slot)[f];
        const auto feeds = pools.feeders.find(key);
        const std::uint8_t feed = feeds == pools.feeders.end() ? 0 : feeds->second;
        if (feed != now.feed) changes.push_back({slot, f, MetaOp::feed, feed, 0});
        if (const auto live = pools.live.find(key); live != pools.live.end()) {
            const auto [pool, width, predict, set] = live->second;
            const Interp kind = predict ? Interp::predict : Interp::live;
            // The width first: a field that stores nothing has none to restore.
            if (width != (codes(now.kind) ? now.width : now.restore)) changes.push_back({slot, f, MetaOp::width, width, 0});
            if (now.kind != kind || now.pool != pool || (predict && now.value != set)) changes.push_back({slot, f, op_of(kind), pool, set});
            continue;
        }
        if (c.op) changes.push_back({slot, f, *c.op, c.a, c.b});
        if (c.unit != 0) changes.push_back({slot, f, MetaOp::unit, c.unit, 0});
        const std::uint32_t width_then = c.op ? (stores_bytes(interp_of(*c.op)) ? now.restore : 0) : now.width;
        if (c.width != 0 && c.width != width_then && (!c.op || stores_bytes(interp_of(*c.op)))) {
            changes.push_back({slot, f, MetaOp::width, c.width, 0});
        }
    }
    return changes;
}

void AutoEncoder::replay(const std::vector<Change>& changes) {
    std::vector<bool> changed(writer_.dtd().record_count);
    GenericRecord record;
    for (const Event& e : events_) {
        switch (e.kind) {
            case Event::comment:
                writer_.comment(std::string_view(reinterpret_cast<const char*>(bytes_.data() + e.first), e.count));
                break;
            case Event::section: writer_.section(static_cast<std::uint8_t>(e.slot)); break;
            case Event::record:
                // A record type's metadata goes before its first record: then its section is the current one.
                if (!changed[e.slot]) {
                    changed[e.slot] = true;
                    for (const Change& c : changes) {
                        if (c.slot == e.slot) writer_.metadata(c.slot, c.field, c.op, c.a, c.b);
                    }
                }
                record.slot = e.slot;
                record.values.assign(values_.begin() + static_cast<std::ptrdiff_t>(e.first),
                                     values_.begin() + static_cast<std::ptrdiff_t>(e.first + e.count));
                for (std::size_t i = 0; i < e.count; ++i) {
                    record.values[i].bytes = std::span<const std::byte>(bytes_.data() + offsets_[e.first + i], sizes_[e.first + i]);
                }
                encode_generic(writer_, record);
                break;
        }
    }
}

}  // namespace metatf::rt
