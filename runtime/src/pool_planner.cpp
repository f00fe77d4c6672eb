#include "pool_planner.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace metatf::rt::detail {

namespace {

// Stands for the fields that fed the writer's pool before the window.
constexpr FieldKey before_window = ~FieldKey(0);

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
            const bool integer = s.desc->type == Type::unsigned_int || s.desc->type == Type::signed_int;
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
    Matches m;
    std::unordered_map<std::uint64_t, FieldKey> untaken;  // value -> the field that took it last
    std::unordered_set<std::uint64_t> taken_before;
    for (const WindowRecord& r : records) {
        for (std::size_t i = 0; i < r.count; ++i) {
            const std::uint64_t v = r.values[i].integer;
            const FieldKey key = field_key(r.slot, r.values[i].field);
            if (!wide.count(key)) continue;
            ++m.values[key];
            if (const auto it = untaken.find(v); it != untaken.end()) {
                ++m.from[key][it->second];
                untaken.erase(it);
            } else if (pools.back_of(1, v) && taken_before.insert(v).second) {
                ++m.from[key][before_window];
            }
            untaken[v] = key;
        }
    }
    return m;
}

// Takers of at least half their values, best first, with the fields they
// take from (those of at least 1% of their matches; the pool's current feeders
// for values from before the window). A field cannot both take from a pool
// and feed another taker, except itself (then it moves its value to the front).
std::map<FieldKey, std::set<FieldKey>> choose_takers(const Matches& m, const std::set<FieldKey>& feeding_now) {
    struct Taker {
        FieldKey key;
        std::uint64_t hits;
        std::set<FieldKey> from;
    };
    std::vector<Taker> takers;
    for (const auto& [key, from] : m.from) {
        Taker t{key, 0, {}};
        for (const auto& [p, n] : from) t.hits += n;
        if (2 * t.hits < m.values.at(key)) continue;
        for (const auto& [p, n] : from) {
            if (100 * n < t.hits) continue;
            if (p == before_window) {
                t.from.insert(feeding_now.begin(), feeding_now.end());
            } else {
                t.from.insert(p);
            }
        }
        takers.push_back(std::move(t));
    }
    std::stable_sort(takers.begin(), takers.end(), [](const Taker& a, const Taker& b) { return a.hits > b.hits; });
    std::map<FieldKey, std::set<FieldKey>> chosen;
    std::set<FieldKey> feeders;
    for (Taker& t : takers) {
        if (feeders.count(t.key) && !t.from.count(t.key)) continue;
        if (std::any_of(t.from.begin(), t.from.end(), [&](FieldKey p) { return p != t.key && chosen.count(p); })) continue;
        feeders.insert(t.from.begin(), t.from.end());
        chosen.emplace(t.key, std::move(t.from));
    }
    return chosen;
}

// One value of a taker: its count back into the pool, if it would find it.
struct Reference {
    std::optional<std::uint64_t> back;
    std::uint64_t value;
};

// Pass 2: the references the takers would store with the feeders feeding pool
// 1, as the pool rules order them (docs/trace-format.md, section 5.1).
// Values live before the window count back from the writer's pool as it is
// now, a close bound.
std::map<FieldKey, std::vector<Reference>> simulate(const LivePools& pools, const std::vector<WindowRecord>& records,
                                                    const std::set<FieldKey>& takers, const std::set<FieldKey>& feeders) {
    std::map<FieldKey, std::vector<Reference>> out;
    LivePool local(true);
    std::unordered_set<std::uint64_t> taken_before;
    std::vector<std::size_t> leave;
    std::vector<std::uint64_t> join;
    for (const WindowRecord& r : records) {
        leave.clear();
        join.clear();
        for (std::size_t i = 0; i < r.count; ++i) {
            const std::uint64_t v = r.values[i].integer;
            const FieldKey key = field_key(r.slot, r.values[i].field);
            if (takers.count(key)) {
                Reference ref{std::nullopt, v};
                if (const auto p = local.find(v)) {
                    ref.back = local.back_of(*p);
                    leave.push_back(*p);
                } else if (const auto b = pools.back_of(1, v); b && taken_before.insert(v).second) {
                    ref.back = *b + local.live();
                }
                out[key].push_back(ref);
            }
            if (feeders.count(key)) join.push_back(v);
        }
        for (std::size_t p : leave) local.remove(p);
        for (std::uint64_t v : join) local.add(v);
    }
    return out;
}

// The cheapest width for a taker's references, and its cost.
std::pair<std::uint32_t, double> best_width(const std::vector<Reference>& refs, ZSTD_CCtx* cctx) {
    std::vector<std::byte> column, packed;
    std::pair<std::uint32_t, double> best{0, 0};
    for (std::uint32_t w = 1; w <= 4; ++w) {
        column.clear();
        const std::uint64_t escape = live_escape(w);
        const auto put = [&](std::uint64_t x, unsigned n) {
            for (unsigned i = 0; i < n; ++i) column.push_back(static_cast<std::byte>(x >> (8 * i)));
        };
        for (const Reference& r : refs) {
            if (r.back && *r.back < escape) {
                put(*r.back, w);
            } else {
                put(escape, w);
                put(r.value, 8);
            }
        }
        double cost = static_cast<double>(column.size());
        if (cctx) {
            packed.resize(ZSTD_compressBound(column.size()));
            const std::size_t n = ZSTD_compressCCtx(cctx, packed.data(), packed.size(), column.data(), column.size(), 1);
            if (!ZSTD_isError(n)) cost = std::min(cost, static_cast<double>(n));
        }
        if (best.first == 0 || cost < best.second) best = {w, cost};
    }
    return best;
}

}  // namespace

PoolChoice plan_pools(TraceWriter& writer, const std::vector<WindowRecord>& records, ZSTD_CCtx* cctx,
                      const std::function<bool(FieldKey)>& eligible, const std::function<double(FieldKey)>& other_cost) {
    const DtdDesc& dtd = writer.dtd();
    std::set<FieldKey> feeding_now;
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        for (std::uint32_t f = 0; f < dtd.records[slot].field_count; ++f) {
            if (writer.states(slot)[f].feed == 1) feeding_now.insert(field_key(slot, f));
        }
    }
    const std::set<FieldKey> wide = wide_fields(writer, records, eligible);
    const auto chosen = choose_takers(match_values(writer.pools(), records, wide), feeding_now);
    std::set<FieldKey> takers, feeders;
    for (const auto& [key, from] : chosen) {
        takers.insert(key);
        feeders.insert(from.begin(), from.end());
    }
    const auto refs = simulate(writer.pools(), records, takers, feeders);
    // A reference is kept where it beats the field's best other encoding,
    // metadata included (two records at most: width and live).
    const double metadata = 2.0 * (2.0 * dtd.tag_width + 2 + (writer.options().cls == Class::bits32 ? 4 : 8));
    PoolChoice choice;
    for (const auto& [key, list] : refs) {
        const auto [width, cost] = best_width(list, cctx);
        if (cost + metadata >= other_cost(key)) continue;
        choice.live.emplace(key, width);
        const auto& from = chosen.at(key);
        choice.feeders.insert(from.begin(), from.end());
    }
    return choice;
}

}  // namespace metatf::rt::detail
