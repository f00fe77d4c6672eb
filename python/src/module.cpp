// The compiled core of the Python package `metatf` (python/metatf): a trace
// of any DTD read into columns, with the runtime's DTD-driven reader, the
// DTD compiled from the text every trace carries. One pass over the trace
// per read; values go into C++ buffers that NumPy arrays then own, and no
// Python object is made per record (only per bytes value).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <thread>
#include <unordered_map>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


#include <metatf/analysis/auto_encoder.hpp>
#include <metatf/analysis/rules.hpp>
#include <metatf/container/split.hpp>
#include <metatf/core/error.hpp>
#include <metatf/io/columns.hpp>
#include <metatf/io/generic.hpp>
#include <metatf/io/reader.hpp>

#include "compile.hpp"
#include "lower/lower.hpp"
#include "column_memory.hpp"
#include "common.hpp"
#include "open/trace_dtd.hpp"

namespace py = pybind11;
namespace rt = metatf::rt;
using namespace metatf::python;

namespace {

// A trace error as Python sees it: ValueError with the runtime's message,
// which names the byte offset and record.
[[noreturn]] void raise(const std::string& path, const rt::TraceError& e) { raise_error(PyExc_ValueError, path + ": " + e.what()); }

// The DTD a trace carries, compiled and lowered, checked against the trace's
// fingerprint. The last 16 compiled are kept by the header's DTD name,
// fingerprint and text: a program that opens many traces of one format (a
// Dask read's partitions, a directory of runs) compiles its DTD once.
std::shared_ptr<const metatf::lower::LoweredDtd> embedded_dtd(const std::string& path, const rt::Header& h) {
    using Compiled = std::pair<std::string, std::shared_ptr<const metatf::lower::LoweredDtd>>;
    static std::mutex lock;
    static auto& compiled = *new std::vector<Compiled>;  // never destroyed: traces may outlive static destructors
    std::string key = h.dtd_name + '\n' + std::to_string(h.dtd_fingerprint) + '\n' + h.dtd_text;
    {
        const std::lock_guard hold(lock);
        for (const Compiled& c : compiled) {
            if (c.first == key) return c.second;
        }
    }
    std::shared_ptr<const metatf::lower::LoweredDtd> dtd;
    try {
        dtd = metatf::open::trace_dtd(h);
    } catch (const metatf::open::DtdError& e) {
        raise_error(PyExc_ValueError, path + ": " + e.what());
    }
    const std::lock_guard hold(lock);
    if (compiled.size() == 16) compiled.erase(compiled.begin());
    compiled.emplace_back(std::move(key), dtd);
    return dtd;
}

// The values of one field of one record type, in trace order.
struct Column {
    std::uint32_t field;
    rt::Type type;
    Block block;                     // integers as uint64 (signed ones in two's complement), floats as double
    rt::StringColumn strings;        // bytes fields
};

// The records read of one type: a block per column (the index first), or,
// packed, one block whose rows are the index and the columns, 8 bytes each
// (a NumPy structured array's records).
struct Table {
    Block index;  // each record's position in the trace, as mtf dump counts
    std::vector<Column> columns;
    std::vector<int> column_of;  // per field of the record: its column, or -1
    std::uint64_t rows = 0;
    bool bytes = false;  // some column is a bytes field
    bool packed = false;
    Block records;  // packed

    std::size_t stride() const { return packed ? 8 * (columns.size() + 1) : 8; }
    // Where column `c` (-1: the index) starts in its block; every row `stride()` bytes on.
    std::byte* at(int c) const {
        if (packed) return records.data() + 8 * static_cast<std::size_t>(c + 1);
        return c < 0 ? index.data() : columns[static_cast<std::size_t>(c)].block.data();
    }
    // The blocks a read writes, one per number column and the index (or one, packed).
    std::size_t block_count() const {
        return packed ? 1 : 1 + static_cast<std::size_t>(std::ranges::count_if(columns, [](const Column& c) { return c.type != rt::Type::bytes; }));
    }
    // The blocks' starts, and room for `rows` rows in each.
    std::vector<std::byte*> reserve(std::uint64_t rows, bool huge) {
        if (packed) {
            records = std::move(Block::many(1, rows * stride(), huge).front());
            return {records.data()};
        }
        std::vector<Column*> numbers;
        for (Column& c : columns) {
            if (c.type != rt::Type::bytes) numbers.push_back(&c);
        }
        std::vector<Block> blocks = Block::many(numbers.size() + 1, rows * 8, huge);
        index = std::move(blocks[0]);
        std::vector<std::byte*> out{index.data()};
        for (std::size_t i = 0; i < numbers.size(); ++i) {
            numbers[i]->block = std::move(blocks[i + 1]);
            out.push_back(numbers[i]->block.data());
        }
        return out;
    }
    std::vector<std::byte*> blocks;  // as reserve() gave them
};

using Tables = std::vector<std::unique_ptr<Table>>;  // per slot; null for types not read

// One part's rows of one record type: written into the table's blocks from
// the part's first row on; bytes values kept apart, per column.
struct PartRows {
    rt::ColumnTarget target;
    std::vector<rt::StringColumn> strings;
};

// A part of a trace that one thread reads: the records of segments [first,
// end), at most `capacity` of them, whose rows go at row `row0` of the blocks.
struct Part {
    std::size_t first = 0, end = 0;
    std::uint64_t start = 0, stop = 0;  // its first record, and the first after it
    std::uint64_t row0 = 0, capacity = 0;
    std::vector<std::unique_ptr<PartRows>> rows;  // per slot: a type read; null for the others
    std::vector<rt::ColumnTarget*> fast;          // per slot: where read_columns() puts it
    std::exception_ptr error;
};

// Splits segments [first, end) of `segments` into up to `threads` runs of
// about as many records each (whole segments).
std::vector<std::pair<std::size_t, std::size_t>> split_segments(const std::vector<rt::Segment>& segments, std::size_t first,
                                                                 std::size_t end, std::size_t threads) {
    std::uint64_t total = 0;
    for (std::size_t k = first; k < end; ++k) total += segments[k].records;
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::uint64_t taken = 0;
    std::size_t start = first;
    for (std::size_t k = first; k < end; ++k) {
        taken += segments[k].records;
        // Past the share of the runs so far: this run ends here.
        if (out.size() + 1 < threads && taken * threads >= total * (out.size() + 1)) {
            out.emplace_back(start, k + 1);
            start = k + 1;
        }
    }
    if (start < end || out.empty()) out.emplace_back(start, end);
    return out;
}

py::object column_to_python(Column& c, std::uint64_t rows) {
    switch (c.type) {
        case rt::Type::unsigned_int: return c.block.to_numpy<std::uint64_t>(rows);
        case rt::Type::signed_int: return c.block.to_numpy<std::int64_t>(rows);
        case rt::Type::floating: return c.block.to_numpy<double>(rows);
        case rt::Type::bytes: {
            // Each distinct value once, and a code per row: a string of few
            // values (a host, an operation) costs no Python object per row.
            const std::vector<std::int32_t>& codes = c.strings.codes();
            py::array_t<std::int32_t> out(static_cast<py::ssize_t>(codes.size()));
            if (!codes.empty()) std::memcpy(out.mutable_data(), codes.data(), codes.size() * sizeof(std::int32_t));
            py::list distinct;
            for (const std::string& v : c.strings.distinct()) distinct.append(py::bytes(v));
            return py::make_tuple(out, distinct);
        }
    }
    return py::none();
}

class Trace {
public:
    explicit Trace(std::string path) : path_(std::move(path)) {
        try {
            rt::TraceReader reader(path_, [&](const rt::Header& h) -> const rt::DtdDesc& {
                dtd_ = embedded_dtd(path_, h);
                return dtd_->desc();
            });
            header_records_ = reader.header().record_count;
            version_ = reader.header().version;
            for (const rt::Segment& seg : reader.header().segments) segments_.emplace_back(seg.first_record, seg.records);
            if (version_ == 1) segments_.emplace_back(0, header_records_);  // one chunk: its layout has no segments
        } catch (const rt::TraceError& e) {
            raise(path_, e);
        }
    }

    const rt::DtdDesc& dtd() const { return dtd_->desc(); }
    std::uint64_t record_count() const { return header_records_; }
    int version() const { return version_; }
    // Per segment (a chunk that decodes alone in version 3): its first record
    // and record count; a version-1 trace is one chunk.
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& segments() const { return segments_; }

    // Reads every record of the types `slots` names (all user types when
    // empty), with the top-level fields `fields` names (all when empty):
    // {record name: (positions in the trace, {field: array, ...})}, from the
    // records of segments [first, end) (end -1: to the end), read by up to
    // `threads` threads (0: one per core), refused with MemoryError when the
    // result would take more than `budget` bytes (0: no limit).
    // `progress(done, total)` is called now and then with records read, with the GIL held.
    py::dict read(const std::vector<std::string>& names, const std::vector<std::string>& fields, const py::object& progress,
                  std::size_t first, std::int64_t end, std::size_t threads, std::uint64_t budget) {
        const rt::DtdDesc& d = dtd();
        for (const std::string& n : names) {
            if (!user_record(d, n)) throw py::key_error("the trace's DTD '" + std::string(d.name) + "' has no record type '" + n + "'");
        }
        std::vector<std::unique_ptr<Table>> tables(d.record_count);
        for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
            const rt::RecordDesc& r = d.records[slot];
            if (r.predefined != rt::Predefined::none) continue;
            if (names.empty() || std::find(names.begin(), names.end(), r.name) != names.end()) tables[slot] = make_table(r, fields, !names.empty());
        }
        scan(tables, progress, first, end, threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads, budget);
        py::dict out;
        for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
            if (!tables[slot]) continue;
            Table& t = *tables[slot];
            py::dict columns;
            for (Column& c : t.columns) columns[d.records[slot].fields[c.field].path] = column_to_python(c, t.rows);
            out[d.records[slot].name] = py::make_tuple(t.index.to_numpy<std::uint64_t>(t.rows), columns);
        }
        return out;
    }

    // The records of type `name` as the bytes of a NumPy structured array
    // with 8-byte fields, the index first, then `fields` (all top-level
    // fields when empty), and those fields' names; None when one is a bytes
    // field (read() then). As read() otherwise.
    py::object read_packed(const std::string& name, const std::vector<std::string>& fields, const py::object& progress,
                           std::size_t first, std::int64_t end, std::size_t threads, std::uint64_t budget) {
        const rt::DtdDesc& d = dtd();
        const auto found = user_record(d, name);
        if (!found) throw py::key_error("the trace's DTD '" + std::string(d.name) + "' has no record type '" + name + "'");
        std::vector<std::unique_ptr<Table>> tables(d.record_count);
        const std::uint32_t slot = *found;
        tables[slot] = make_table(d.records[slot], fields, true);
        Table& t = *tables[slot];
        if (t.bytes) return py::none();
        t.packed = true;
        scan(tables, progress, first, end, threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads, budget);
        py::list names;
        for (const Column& c : t.columns) names.append(d.records[slot].fields[c.field].path);
        return py::make_tuple(t.records.to_numpy<std::uint8_t>(t.rows * t.stride()), names);
    }

private:
    // The columns of `fields` (all top-level fields when empty); a field the
    // record lacks is an error when the record was asked for by name.
    std::unique_ptr<Table> make_table(const rt::RecordDesc& r, const std::vector<std::string>& fields, bool named) const {
        auto t = std::make_unique<Table>();
        t->column_of.assign(r.field_count, -1);
        const std::vector<bool> top = rt::top_level_fields(r);
        const auto add = [&](std::uint32_t i) {
            t->column_of[i] = static_cast<int>(t->columns.size());
            t->columns.push_back({i, r.fields[i].type, {}, {}});
            t->bytes = t->bytes || r.fields[i].type == rt::Type::bytes;
        };
        if (fields.empty()) {
            for (std::uint32_t i = 1; i < r.field_count; ++i) {
                if (top[i]) add(i);
            }
            return t;
        }
        for (const std::string& name : fields) {
            std::uint32_t i = 1;
            while (i < r.field_count && r.fields[i].path != name) ++i;
            if (i == r.field_count && !named) continue;
            if (i == r.field_count) throw py::key_error("record type '" + std::string(r.name) + "' has no field '" + name + "'");
            if (!top[i]) throw py::value_error("field '" + name + "' of record type '" + std::string(r.name) + "' is inside a repeated group, which has no column");
            if (t->column_of[i] < 0) add(i);
        }
        return t;
    }

    // Reads the records of segments [first, end) (end -1: to the end of
    // the trace) into `tables`. A version-3 trace's segments decode alone, so
    // up to `threads` threads each read a run of them, writing their rows in
    // place in the tables' blocks; the rows are closed up in trace order at
    // the end. The GIL is released while they read; this thread wakes now
    // and then to report progress and to stop them on Ctrl-C.
    // A read that would take more than `budget` bytes (0: no limit) is refused before it starts.
    void scan(Tables& tables, const py::object& progress, std::size_t first, std::int64_t end, std::size_t threads, std::uint64_t budget) {
        std::vector<Part> parts;
        std::uint64_t total = 0;
        try {
            rt::TraceReader probe(path_, [&](const rt::Header&) -> const rt::DtdDesc& { return dtd(); });
            const rt::Header& h = probe.header();
            // A version-1 trace is one chunk, all its records.
            const std::size_t count = h.version == 1 ? 1 : h.segments.size();
            auto first_record = [&](std::size_t k) { return k >= count ? h.record_count : h.version == 1 ? 0 : h.segments[k].first_record; };
            if (end >= 0 && static_cast<std::size_t>(end) < first) throw py::value_error("a chunk range ends before it starts");
            if (first > count) throw py::index_error("chunk " + std::to_string(first) + " is past the trace's " + std::to_string(count));
            const std::size_t last = end < 0 ? count : std::min<std::size_t>(static_cast<std::size_t>(end), count);
            if (first != 0 && first != last) probe.seek_segment(first);  // refuses a start the trace cannot be read from
            const std::size_t runs = h.version >= 3 ? std::clamp<std::size_t>(threads, 1, last - first) : 1;
            std::uint64_t rows = 0, decoded = 0;
            for (const auto& [a, b] : first == last ? std::vector<std::pair<std::size_t, std::size_t>>{}
                                      : runs == 1   ? std::vector<std::pair<std::size_t, std::size_t>>{{first, last}}
                                                    : split_segments(h.segments, first, last, runs)) {
                Part part{a, b, first_record(a), first_record(b), rows, 0, {}, {}, nullptr};
                // Every record takes a byte at least: a frame cannot make a read reserve more rows than that.
                std::uint64_t bytes = 0;
                for (const rt::Chunk& c : h.chunks) bytes += h.version == 1 || (c.segment >= a && c.segment < b) ? c.decoded : 0;
                part.capacity = std::min(part.stop - std::min(part.start, part.stop), bytes);
                rows += part.capacity;
                decoded += bytes;
                parts.push_back(std::move(part));
            }
            if (!parts.empty()) total = parts.back().stop - std::min(parts.front().start, parts.back().stop);
            check_budget(tables, rows, decoded, budget);
            try {
                // Each record is a row of one table: about `rows` rows of a table's average width.
                std::size_t fronts = 0, read = 0;
                std::uint64_t widths = 0;
                for (auto& t : tables) {
                    if (!t) continue;
                    if (rows > SIZE_MAX / (8 * t->block_count() + t->stride())) throw std::bad_alloc();
                    fronts += runs * t->block_count();
                    widths += 8 * t->block_count() + (t->packed ? t->stride() - 8 : 0);
                    ++read;
                }
                const std::uint64_t width = read != 0 ? widths / read : 0;
                const bool huge = width != 0 && huge_columns(fronts, rows > UINT64_MAX / width ? UINT64_MAX : rows * width);
                for (auto& t : tables) {
                    if (t) t->blocks = t->reserve(rows, huge);
                }
            } catch (const std::bad_alloc&) {
                const std::string message = path_ + ": the trace's frames count " + std::to_string(rows) +
                                            " records, more than this machine can reserve columns for (read fewer segments or record types)";
                PyErr_SetString(PyExc_MemoryError, message.c_str());
                throw py::error_already_set();
            }
            for (Part& part : parts) add_rows(part, tables);
        } catch (const rt::TraceError& e) {
            raise(path_, e);
        }
        std::atomic<std::uint64_t> done{0};
        std::atomic<bool> interrupted{false};
        std::atomic<std::size_t> failed{parts.size()};  // the first part that failed
        std::vector<std::future<void>> workers;
        try {
            for (std::size_t i = 0; i < parts.size(); ++i) {
                workers.push_back(std::async(std::launch::async, [&, i] { read_part(parts[i], i, done, interrupted, failed); }));
            }
            for (std::size_t joined = 0; joined < workers.size();) {
                {
                    py::gil_scoped_release unlocked;
                    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
                    while (joined < workers.size() && std::chrono::steady_clock::now() < until) {
                        if (workers[joined].wait_for(std::chrono::milliseconds(2)) == std::future_status::ready) ++joined;
                    }
                }
                if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C stops a long read
                if (!progress.is_none()) progress(std::min(done.load(), total), total);
            }
        } catch (...) {
            // Ctrl-C, a progress callback that raised, or no thread to start:
            // the workers stop at their next check, and are waited for
            // without the GIL (their futures would wait anyway).
            interrupted = true;
            {
                py::gil_scoped_release unlocked;
                for (auto& w : workers) w.wait();
            }
            throw;
        }
        for (Part& part : parts) {
            if (!part.error) continue;
            try {
                std::rethrow_exception(part.error);
            } catch (const rt::TraceError& e) {
                raise(path_, e);
            }
        }
        {
            py::gil_scoped_release unlocked;
            close_up(parts, tables, threads);
        }
        if (!progress.is_none()) progress(total, total);
    }

    // About what a read's result takes in memory, per record and in all
    // bytes values' data (`decoded`, the trace's bytes of records, bounds
    // it). A record goes to one type's table, so a record costs the widest
    // row; several types read together become one frame whose row has every
    // field of them all, with pandas' mask byte a number.
    std::pair<std::uint64_t, bool> row_cost(const Tables& tables) const {
        constexpr std::uint64_t bytes_value = 80;  // a std::string, then a Python bytes object and its pointer
        std::vector<std::pair<std::string_view, std::uint64_t>> merged;  // field path, cost
        std::uint64_t widest = 0;
        bool bytes = false;
        std::size_t count = 0;
        for (std::size_t slot = 0; slot < tables.size(); ++slot) {
            const auto& t = tables[slot];
            if (!t) continue;
            ++count;
            std::uint64_t row = 8;
            for (const Column& c : t->columns) {
                const std::uint64_t cost = c.type == rt::Type::bytes ? bytes_value : 8;
                row += cost;
                bytes = bytes || c.type == rt::Type::bytes;
                const std::string_view path = dtd().records[slot].fields[c.field].path;
                const auto at = std::find_if(merged.begin(), merged.end(), [&](const auto& m) { return m.first == path; });
                if (at == merged.end()) merged.emplace_back(path, cost + 1);
                else at->second = std::max(at->second, cost + 1);
            }
            widest = std::max(widest, row);
        }
        if (count < 2) return {widest, bytes};
        std::uint64_t row = 9;  // the index, and the record type's code
        for (const auto& m : merged) row += m.second;
        return {std::max(widest, row), bytes};
    }

    void check_budget(const Tables& tables, std::uint64_t rows, std::uint64_t decoded, std::uint64_t budget) const {
        if (budget == 0) return;
        const auto [row, bytes] = row_cost(tables);
        const double estimate = static_cast<double>(rows) * static_cast<double>(row) + (bytes ? static_cast<double>(decoded) : 0);
        if (estimate <= static_cast<double>(budget)) return;
        char size[32];
        std::snprintf(size, sizeof size, estimate < 1e9 ? "%.1f MB" : "%.1f GB", estimate < 1e9 ? estimate / 1e6 : estimate / 1e9);
        raise_error(PyExc_MemoryError, path_ + ": the read would take about " + size + " (" + std::to_string(rows) + " records of up to " +
                                           std::to_string(row) + " bytes each" + (bytes ? ", and their bytes values" : "") +
                                           "), past its memory budget of " + std::to_string(budget) +
                                           " bytes; pass max_memory=N (bytes) to raise it, or read fewer segments, record types or fields");
    }

    // The targets of `part`: its rows of each type read at row part.row0 of
    // the type's blocks, bytes values in the part's string columns. A type
    // not read has no target.
    void add_rows(Part& part, const Tables& tables) const {
        const rt::DtdDesc& d = dtd();
        part.rows.resize(d.record_count);
        part.fast.assign(d.record_count, nullptr);
        for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
            if (!tables[slot]) continue;
            Table& t = *tables[slot];
            auto rows = std::make_unique<PartRows>(PartRows{rt::ColumnTarget(d.records[slot]), {}});
            const std::size_t stride = t.stride(), row0 = part.row0 * stride;
            rows->target.keep_index(t.at(-1) + row0, stride);
            rows->strings.resize(t.columns.size());
            for (std::size_t c = 0; c < t.columns.size(); ++c) {
                if (t.columns[c].type == rt::Type::bytes) {
                    rows->target.keep(t.columns[c].field, rows->strings[c]);
                } else {
                    rows->target.keep(t.columns[c].field, t.at(static_cast<int>(c)) + row0, stride);
                }
            }
            part.fast[slot] = &rows->target;
            part.rows[slot] = std::move(rows);
        }
    }

    // Moves each part's rows to follow the rows of the parts before it (a
    // part has as many rows as records only when every record is of the
    // type), the blocks shared among threads, and counts the rows.
    static void close_up(std::vector<Part>& parts, Tables& tables, std::size_t threads) {
        struct Move {
            std::byte* data;
            std::size_t stride, slot;
        };
        std::vector<Move> moves;
        std::vector<std::vector<std::uint64_t>> at(tables.size());  // per slot and part: where its rows go
        for (std::size_t slot = 0; slot < tables.size(); ++slot) {
            if (!tables[slot]) continue;
            Table& t = *tables[slot];
            for (Part& part : parts) {
                PartRows& rows = *part.rows[slot];
                at[slot].push_back(t.rows);
                t.rows += rows.target.rows();
                for (std::size_t c = 0; c < t.columns.size(); ++c) {
                    if (t.columns[c].type == rt::Type::bytes) t.columns[c].strings.append(rows.strings[c]);
                }
            }
            for (std::byte* block : t.blocks) moves.push_back({block, t.stride(), slot});
        }
        // In part order: a part's rows move down over where the part before it had them.
        const auto move = [&](std::size_t from, std::size_t step) {
            for (std::size_t m = from; m < moves.size(); m += step) {
                for (std::size_t i = 1; i < parts.size(); ++i) {
                    const std::uint64_t to = at[moves[m].slot][i], rows = parts[i].rows[moves[m].slot]->target.rows();
                    const std::size_t stride = moves[m].stride;
                    if (to != parts[i].row0 && rows != 0) std::memmove(moves[m].data + to * stride, moves[m].data + parts[i].row0 * stride, rows * stride);
                }
            }
        };
        if (parts.size() < 2) return;  // one part: its rows are in place
        const std::size_t step = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(moves.size(), 1));
        std::vector<std::future<void>> helpers;
        for (std::size_t k = 1; k < step; ++k) helpers.push_back(std::async(std::launch::async, move, k, step));
        move(0, step);
        for (auto& h : helpers) h.get();
    }

    // One thread's run of segments, read with a reader of its own: runs of
    // records whose layout is fixed (but for a string) by read_columns(), the
    // others one at a time. It stops early on Ctrl-C, or when an earlier part
    // failed (whose error is then the first in trace order).
    void read_part(Part& part, std::size_t i, std::atomic<std::uint64_t>& done,
                   const std::atomic<bool>& interrupted, std::atomic<std::size_t>& failed) {
        try {
            rt::TraceReader reader(path_, [&](const rt::Header&) -> const rt::DtdDesc& { return dtd(); });
            if (part.first != 0) reader.seek_segment(part.first);
            rt::GenericRecord other;  // records with no table, the predefined ones among them
            std::uint64_t counted = reader.record_index();
            // The last part reads to the end, where the reader checks that the records and the frames agree.
            const bool to_end = part.stop >= reader.header().record_count;
            // No more records than the part has room for: a frame that counts too few is found below.
            const std::uint64_t limit = reader.record_index() + part.capacity;
            for (;;) {
                rt::read_columns(reader, part.fast, limit);
                if (reader.record_index() - counted >= 0x10000) {
                    done += reader.record_index() - counted;
                    counted = reader.record_index();
                    if (interrupted || failed.load() < i) return;
                }
                if (reader.record_index() >= limit || !reader.begin_record()) break;
                const std::uint32_t slot = reader.slot();
                if (PartRows* rows = part.rows[slot].get()) {
                    read_row(reader, *rows, other);
                } else {
                    rt::decode_generic(reader, other);
                }
            }
            if (reader.record_index() >= limit) {
                if (!to_end) {
                    reader.check_segment_end(part.end);
                } else {
                    // Records past what the frames count: read on, keeping none, to the reader's check at the end.
                    while (reader.begin_record()) rt::decode_generic(reader, other);
                }
            }
            done += reader.record_index() - counted;
        } catch (...) {
            part.error = std::current_exception();
            for (std::size_t f = failed.load(); i < f && !failed.compare_exchange_weak(f, i);) {
            }
        }
    }

    // The record the reader has begun, field by field, into its part's rows.
    static void read_row(rt::TraceReader& reader, PartRows& rows, rt::GenericRecord& scratch) {
        rows.target.begin_row(reader.record_index());
        rt::decode_values(reader, [&](const rt::GenericValue& v) { rows.target.put(v); }, scratch.last);
        reader.end_record();
    }

    std::string path_;
    std::shared_ptr<const metatf::lower::LoweredDtd> dtd_;
    std::uint64_t header_records_ = 0;
    int version_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> segments_;
};

}  // namespace

PYBIND11_MODULE(_metatf, m) {
    m.doc() = "The compiled core of metatf: traces of any DTD read into NumPy columns.";
    py::class_<Trace>(m, "Trace")
        .def(py::init<std::string>(), py::arg("path"))
        .def_property_readonly("dtd_name", [](const Trace& t) { return to_str(t.dtd().name); })
        .def_property_readonly("dtd_text", [](const Trace& t) { return to_str(t.dtd().text); })
        .def_property_readonly("dtd_bytes", [](const Trace& t) { return py::bytes(t.dtd().text); })
        .def_property_readonly("record_count", &Trace::record_count)
        .def("records", [](const Trace& t) { return describe_records(t.dtd()); })
        .def("value_names", [](const Trace& t, const std::string& r, const std::string& f, const py::array_t<std::uint64_t>& v) { return value_names(t.dtd(), r, f, v); })
        .def_property_readonly("version", &Trace::version)
        .def_property_readonly("segments", &Trace::segments)
        .def("read", &Trace::read, py::arg("records"), py::arg("fields"), py::arg("progress") = py::none(), py::arg("first") = 0,
             py::arg("end") = -1, py::arg("threads") = 0, py::arg("budget") = 0)
        .def("read_packed", &Trace::read_packed, py::arg("record"), py::arg("fields"), py::arg("progress") = py::none(),
             py::arg("first") = 0, py::arg("end") = -1, py::arg("threads") = 0, py::arg("budget") = 0);
    m.def("small_codes", &small_codes, py::arg("values"));
    bind_writer(m);
}
