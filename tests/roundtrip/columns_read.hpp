// Reads a whole trace into columns two ways, for tests of rt::read_columns():
// as the Python module does (runs of records by read_columns(), the rest
// field by field through ColumnTarget::put()), and record by record through
// decode_values(), the reference. Both give, per record type, the rows of
// its fields outside groups: the record's index, then each field as a
// uint64 (a float's bits, a bytes value's string_id()).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <memory>
#include <vector>

#include <metatf/core/layout.hpp>
#include <metatf/io/columns.hpp>
#include <metatf/io/generic.hpp>

namespace metatf::test {

namespace rt = metatf::rt;

using Rows = std::vector<std::vector<std::uint64_t>>;  // per slot: its rows, one after another

struct ColumnsRead {
    Rows rows;
    std::uint64_t fast = 0;     // records read_columns() read
    std::uint64_t longest = 0;  // the most it read in one call
};

// The fields a row holds: those outside groups.
inline std::vector<std::uint32_t> row_fields(const rt::RecordDesc& r) {
    const std::vector<bool> top = rt::top_level_fields(r);
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < r.field_count; ++i) {
        if (top[i]) out.push_back(i);
    }
    return out;
}

// A number per distinct bytes value, the same for equal values in this process.
inline std::uint64_t string_id(std::string_view v) {
    static std::map<std::string, std::uint64_t, std::less<>> ids;
    const auto at = ids.find(v);
    return at != ids.end() ? at->second : ids.emplace(std::string(v), ids.size()).first->second;
}

// Each call of read_columns() may read at most `step` records; of each
// record's row fields, those whose place k (from 0) is a multiple of
// `keep_every` are kept, and the others are read and left at 0.
inline ColumnsRead read_by_columns(rt::TraceReader& reader, std::uint64_t step = UINT64_MAX, std::size_t keep_every = 1) {
    const rt::DtdDesc& d = reader.dtd();
    const std::uint64_t capacity = reader.header().record_count;
    struct Slot {
        std::vector<std::uint32_t> fields;
        std::vector<std::vector<std::uint64_t>> columns;  // index, then each field
        std::vector<rt::StringColumn> strings;            // per field: a bytes field's values
        std::unique_ptr<rt::ColumnTarget> target;
    };
    std::vector<Slot> slots(d.record_count);
    std::vector<rt::ColumnTarget*> targets(d.record_count, nullptr);
    for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
        if (d.records[slot].predefined != rt::Predefined::none) continue;
        Slot& s = slots[slot];
        s.fields = row_fields(d.records[slot]);
        s.columns.assign(s.fields.size() + 1, std::vector<std::uint64_t>(capacity));
        s.target = std::make_unique<rt::ColumnTarget>(d.records[slot]);
        s.target->keep_index(reinterpret_cast<std::byte*>(s.columns[0].data()), 8);
        s.strings.resize(s.fields.size());
        for (std::size_t k = 0; k < s.fields.size(); ++k) {
            if (k % keep_every != 0) continue;
            if (d.records[slot].fields[s.fields[k]].type == rt::Type::bytes) {
                s.target->keep(s.fields[k], s.strings[k]);
            } else {
                s.target->keep(s.fields[k], reinterpret_cast<std::byte*>(s.columns[k + 1].data()), 8);
            }
        }
        targets[slot] = s.target.get();
    }
    ColumnsRead out;
    rt::GenericRecord scratch;
    for (;;) {
        const std::uint64_t stop = step == UINT64_MAX ? UINT64_MAX : reader.record_index() + step;
        const std::uint64_t n = rt::read_columns(reader, targets, stop);
        out.fast += n;
        out.longest = std::max(out.longest, n);
        if (!reader.begin_record()) break;
        if (rt::ColumnTarget* t = targets[reader.slot()]) {
            t->begin_row(reader.record_index());
            rt::decode_values(reader, [&](const rt::GenericValue& v) { t->put(v); }, scratch.last);
            reader.end_record();
        } else {
            rt::decode_generic(reader, scratch);
        }
    }
    out.rows.resize(d.record_count);
    for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
        if (!targets[slot]) continue;
        Slot& s = slots[slot];
        for (std::size_t k = 0; k < s.fields.size(); ++k) {
            const auto& codes = s.strings[k].codes();
            for (std::size_t row = 0; row < codes.size(); ++row) {
                s.columns[k + 1][row] = string_id(s.strings[k].distinct()[static_cast<std::size_t>(codes[row])]);
            }
        }
        for (std::uint64_t row = 0; row < targets[slot]->rows(); ++row) {
            for (const auto& column : s.columns) out.rows[slot].push_back(column[row]);
        }
    }
    return out;
}

// `rows` with the fields read_by_columns() leaves at 0 for `keep_every`.
inline Rows without_dropped(const rt::DtdDesc& d, Rows rows, std::size_t keep_every) {
    for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
        const std::size_t width = row_fields(d.records[slot]).size() + 1;
        for (std::size_t i = 0; i < rows[slot].size(); ++i) {
            const std::size_t k = i % width;  // 0: the index
            if (k != 0 && (k - 1) % keep_every != 0) rows[slot][i] = 0;
        }
    }
    return rows;
}

inline Rows read_by_records(rt::TraceReader& reader) {
    const rt::DtdDesc& d = reader.dtd();
    Rows out(d.record_count);
    rt::GenericRecord scratch;
    while (reader.begin_record()) {
        const rt::RecordDesc& r = d.records[reader.slot()];
        if (r.predefined != rt::Predefined::none) {
            rt::decode_generic(reader, scratch);
            continue;
        }
        std::vector<std::uint64_t>& rows = out[reader.slot()];
        rows.push_back(reader.record_index());
        const std::vector<std::uint32_t> fields = row_fields(r);
        std::vector<std::uint64_t> row(r.field_count);
        rt::decode_values(reader, [&](const rt::GenericValue& v) {
            switch (r.fields[v.field].type) {
                case rt::Type::floating: row[v.field] = std::bit_cast<std::uint64_t>(v.real); break;
                case rt::Type::bytes:
                    row[v.field] = string_id({reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()});
                    break;
                default: row[v.field] = v.integer;
            }
        }, scratch.last);
        reader.end_record();
        for (const std::uint32_t f : fields) rows.push_back(row[f]);
    }
    return out;
}

}  // namespace metatf::test
