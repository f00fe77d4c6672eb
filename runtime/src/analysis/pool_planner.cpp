#include "pool_planner.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace metatf::rt::detail {

namespace {

// Stands for the fields that fed the writer's pool p before the window.
constexpr FieldKey before_window(unsigned p) { return ~FieldKey(0) - p; }

// The fields that feed each pool now, and the pool each field refers to now.
struct Current {
    std::map<FieldKey, std::uint8_t> feeds, refers;
};

Current current(TraceWriter& writer) {
    Current c;
    const DtdDesc& dtd = writer.dtd();
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        for (std::uint32_t f = 0; f < dtd.records[slot].field_count; ++f) {
            const FieldState& s = writer.states(slot)[f];
            if (s.feed != 0) c.feeds[field_key(slot, f)] = s.feed;
            if (codes(s.kind) && s.pool != 0) c.refers[field_key(slot, f)] = s.pool;
        }
    }
    return c;
}

// Fields whose values reach 2^16 somewhere in the window: references pay
// only where values are wide (addresses), and the passes below skip the rest.
std::set<FieldKey> wide_fields(TraceWriter& writer, const std::vector<WindowRecord>& records,
                               const std::function<bool(FieldKey)>& eligible) {
    std::set<FieldKey> wide;
    for (const WindowRecord& r : records) {
        const FieldState* states = writer.states(r.slot);
        for (std::size_t i = 0; i < r.count; ++i) {
            const GenericValue& v = r.values[i];
            const FieldState& s = states[v.field];
            const bool integer = is_integer(s.desc->type);
            if (integer && v.integer >= 65536) wide.insert(field_key(r.slot, v.field));
        }
    }
    std::erase_if(wide, [&](FieldKey k) { return !eligible(k); });
    return wide;
}

// Pass 1: how often each field takes a value that another field (or itself)
// took before and no field has taken since, and which fields those were.
struct Matches {
    std::map<FieldKey, std::uint64_t> values;
    std::map<FieldKey, std::map<FieldKey, std::uint64_t>> from;  // taker -> earlier field -> values
};

Matches match_values(const LivePools& pools, const std::vector<WindowRecord>& records, const std::set<FieldKey>& wide) {
    // The wide fields numbered densely (then the pools, as sources before the
    // window), so that the pass over every value counts in arrays, not maps.
    const std::vector<FieldKey> keys(wide.begin(), wide.end());
    std::unordered_map<FieldKey, std::size_t> number;
    for (std::size_t i = 0; i < keys.size(); ++i) number.emplace(keys[i], i);
    const std::size_t sources = keys.size() + max_pool;
    std::vector<std::uint8_t> filled;  // the pools that hold values from before the window
    for (std::uint8_t p = 1; p <= max_pool; ++p) {
        if (pools.live(p) != 0) filled.push_back(p);
    }
    std::vector<std::uint64_t> values(keys.size()), from(keys.size() * sources);
    std::unordered_map<std::uint64_t, std::size_t> untaken;  // value -> the field that took it last
    std::unordered_set<std::uint64_t> taken_before;
    // By record type and field: the field's number, or keys.size() when it is not wide.
    std::vector<std::vector<std::size_t>> numbers;
    const auto number_of = [&](std::uint32_t slot, std::uint32_t field) {
        if (slot >= numbers.size()) numbers.resize(slot + 1);
        std::vector<std::size_t>& fields = numbers[slot];
        if (field >= fields.size()) {
            const std::size_t known = fields.size();
            fields.resize(field + 1);
            for (std::size_t f = known; f <= field; ++f) {
                const auto it = number.find(field_key(slot, static_cast<std::uint32_t>(f)));
                fields[f] = it == number.end() ? keys.size() : it->second;
            }
        }
        return fields[field];
    };
    for (const WindowRecord& r : records) {
        for (std::size_t i = 0; i < r.count; ++i) {
            const std::size_t taker = number_of(r.slot, r.values[i].field);
            if (taker == keys.size()) continue;
            const std::uint64_t v = r.values[i].integer;
            ++values[taker];
            if (const auto it = untaken.find(v); it != untaken.end()) {
                ++from[taker * sources + it->second];
                untaken.erase(it);
            } else {
                for (const std::uint8_t p : filled) {
                    if (pools.holds(p, v) && taken_before.insert(v).second) ++from[taker * sources + keys.size() + p - 1];
                }
            }
            untaken[v] = taker;
        }
    }
    Matches m;
    for (std::size_t t = 0; t < keys.size(); ++t) {
        if (values[t] != 0) m.values[keys[t]] = values[t];
        for (std::size_t s = 0; s < sources; ++s) {
            const std::uint64_t n = from[t * sources + s];
            if (n != 0) m.from[keys[t]][s < keys.size() ? keys[s] : before_window(static_cast<unsigned>(s - keys.size() + 1))] = n;
        }
    }
    return m;
}

// Takers of at least half their values, best first, each with the fields it
// takes from (those of at least 1% of its matches; for values from before the
// window, the fields that fed their pool) and the pool those fields feed. A
// field feeds one pool: a taker whose fields feed two is left out. A taker
// keeps the pool it refers to now, or its fields' pool, so that windows agree.
struct Taker {
    FieldKey key;
    std::uint64_t hits = 0;
    std::set<FieldKey> from;
    std::uint8_t pool = 0;
};

std::vector<Taker> choose_takers(const Matches& m, const Current& now) {
    std::vector<Taker> takers;
    for (const auto& [key, from] : m.from) {
        Taker t;
        t.key = key;
        for (const auto& [p, n] : from) t.hits += n;
        if (2 * t.hits < m.values.at(key)) continue;
        for (const auto& [p, n] : from) {
            if (100 * n < t.hits) continue;
            if (p < before_window(max_pool)) {
                t.from.insert(p);
                continue;
            }
            for (const auto& [field, pool] : now.feeds) {
                if (before_window(pool) == p) t.from.insert(field);
            }
        }
        takers.push_back(std::move(t));
    }
    std::stable_sort(takers.begin(), takers.end(), [](const Taker& a, const Taker& b) { return a.hits > b.hits; });
    std::map<FieldKey, std::uint8_t> feeds;
    std::set<std::uint8_t> used;
    for (const auto& [field, pool] : now.feeds) used.insert(pool);
    for (const auto& [field, pool] : now.refers) used.insert(pool);
    std::vector<Taker> chosen;
    for (Taker& t : takers) {
        std::set<std::uint8_t> fed;
        for (FieldKey p : t.from) {
            if (feeds.count(p)) fed.insert(feeds[p]);
        }
        if (fed.size() > 1) continue;
        const auto referring = now.refers.find(t.key);
        if (!fed.empty()) {
            t.pool = *fed.begin();
        } else if (referring != now.refers.end()) {
            t.pool = referring->second;
        } else {
            for (std::uint8_t p = 1; p <= max_pool && t.pool == 0; ++p) {
                if (!used.count(p)) t.pool = p;
            }
            if (t.pool == 0) continue;
        }
        used.insert(t.pool);
        for (FieldKey p : t.from) feeds[p] = t.pool;
        chosen.push_back(std::move(t));
    }
    return chosen;
}

// One value of a taker: its count back into the pool, if it would find it.
// Pass 2: the counts the takers would store with their fields feeding their
// pools, as the pool rules order them (docs/trace-format.md, section 5.1).
// Values live before the window count back from the writer's pool as it is
// now, a close bound.
std::map<FieldKey, std::vector<Count>> simulate(const LivePools& pools, const std::vector<WindowRecord>& records,
                                                const std::vector<Taker>& takers) {
    std::map<FieldKey, std::uint8_t> refers, feeds;
    for (const Taker& t : takers) {
        refers[t.key] = t.pool;
        for (FieldKey p : t.from) feeds[p] = t.pool;
    }
    std::map<FieldKey, std::vector<Count>> out;
    std::vector<LivePool> local(max_pool + 1);
    std::unordered_set<std::uint64_t> taken_before;
    std::vector<std::pair<std::uint8_t, std::size_t>> leave;
    std::vector<std::pair<std::uint8_t, std::uint64_t>> join;
    for (const WindowRecord& r : records) {
        leave.clear();
        join.clear();
        for (std::size_t i = 0; i < r.count; ++i) {
            const std::uint64_t v = r.values[i].integer;
            const FieldKey key = field_key(r.slot, r.values[i].field);
            if (const auto it = refers.find(key); it != refers.end()) {
                LivePool& pool = local[it->second];
                Count c{std::nullopt, v};
                if (const auto p = pool.find(v)) {
                    c.back = pool.back_of(*p);
                    leave.emplace_back(it->second, *p);
                } else if (const auto b = pools.back_of(it->second, v); b && taken_before.insert(v).second) {
                    c.back = *b + pool.live();
                }
                out[key].push_back(c);
            }
            if (const auto it = feeds.find(key); it != feeds.end()) join.emplace_back(it->second, v);
        }
        for (const auto& [p, position] : leave) local[p].remove(position);
        for (const auto& [p, v] : join) local[p].add(v);
    }
    return out;
}

// The cheapest width for a taker's references under `live`, or under
// `predict` (from `history`) with no predictors or all seven, and its cost.
// All seven must estimate a tenth smaller: a miss a predictor turns into a
// code often costs more after compression than its difference would
// (docs/compactness.md).
Reference best_width(std::uint8_t pool, bool predict, const std::vector<Count>& refs, ZSTD_CCtx* cctx,
                     const PredictHistory& history, double& cost) {
    std::vector<std::byte> column;
    Reference best{pool, 0};
    const auto price = [&](std::uint64_t set, double margin) {
        for (std::uint32_t w = 1; w <= 4; ++w) {
            code_column(refs, w, predict, set, history, column);
            const double c = column_cost(column, cctx) * margin;
            if (best.width == 0 || c < cost) {
                best = {pool, w, predict, set};
                cost = c;
            }
        }
    };
    price(0, 1);
    if (predict) price(all_predictors, 1 / 0.9);
    return best;
}

}  // namespace

void code_column(const std::vector<Count>& values, std::uint32_t width, bool predict, std::uint64_t set, PredictHistory history,
                 std::vector<std::byte>& column) {
    column.clear();
    const auto put = [&](std::uint64_t x, unsigned n) {
        for (unsigned i = 0; i < n; ++i) column.push_back(static_cast<std::byte>(x >> (8 * i)));
    };
    const std::uint64_t escape = live_escape(width);
    // Smaller tables than a trace's: an estimate. Kept from call to call,
    // since clear() takes constant time and allocating them does not.
    thread_local PredictTables tables(12);
    tables.clear();
    const auto first = static_cast<std::uint64_t>(predict ? std::popcount(set) : 0);  // the codes before the references
    for (const Count& c : values) {
        std::optional<std::uint64_t> code;
        if (c.back && *c.back < escape - first) code = first + *c.back;
        if (predict && !code) code = tables.code_of(set, c.value, 0, history);
        put(code.value_or(escape), width);
        if (!code && !predict) put(c.value, 8);
        if (!code && predict) {
            std::array<std::byte, max_varint_bytes> bytes;
            column.insert(column.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(put_varint(bytes.data(), history.escape(c.value))));
        }
        if (predict && set != 0) tables.update(set, 0, history, c.value);
    }
}

double column_cost(const std::vector<std::byte>& column, ZSTD_CCtx* cctx) {
    const auto raw = static_cast<double>(column.size());
    if (!cctx) return raw;
    std::vector<std::byte> packed(ZSTD_compressBound(column.size()));
    const std::size_t n = ZSTD_compressCCtx(cctx, packed.data(), packed.size(), column.data(), column.size(), 1);
    return ZSTD_isError(n) ? raw : std::min(raw, static_cast<double>(n));
}

PoolChoice plan_pools(TraceWriter& writer, const std::vector<WindowRecord>& records, ZSTD_CCtx* cctx, bool predict,
                      const std::function<bool(FieldKey)>& eligible, const std::function<double(FieldKey)>& other_cost) {
    const DtdDesc& dtd = writer.dtd();
    const std::set<FieldKey> wide = wide_fields(writer, records, eligible);
    const std::vector<Taker> takers = choose_takers(match_values(writer.pools(), records, wide), current(writer));
    const auto counts = simulate(writer.pools(), records, takers);
    // A reference is kept where it beats the field's best other encoding,
    // metadata included (two records at most: width and live).
    const double metadata = 2.0 * (2.0 * dtd.tag_width + 2 + (writer.options().cls == Class::bits32 ? 4 : 8));
    PoolChoice choice;
    for (const Taker& t : takers) {
        const FieldState& now = writer.states(static_cast<std::uint32_t>(t.key >> 32))[static_cast<std::uint32_t>(t.key)];
        double cost = 0;
        const Reference r = best_width(t.pool, predict, counts.at(t.key), cctx, now.kind == Interp::predict ? now.history : PredictHistory{}, cost);
        if (cost + metadata >= other_cost(t.key)) continue;
        choice.live.emplace(t.key, r);
        for (FieldKey p : t.from) choice.feeders[p] = t.pool;
    }
    return choice;
}

}  // namespace metatf::rt::detail
