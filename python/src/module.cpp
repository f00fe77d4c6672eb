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
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <metatf/auto_encoder.hpp>
#include <metatf/columns.hpp>
#include <metatf/error.hpp>
#include <metatf/generic.hpp>
#include <metatf/reader.hpp>
#include <metatf/rules.hpp>

#include "compile.hpp"
#include "lower/lower.hpp"

namespace py = pybind11;
namespace rt = metatf::rt;

namespace {

// A trace error as Python sees it: ValueError with the runtime's message,
// which names the byte offset and record.
[[noreturn]] void raise(const std::string& path, const rt::TraceError& e) { throw py::value_error(path + ": " + e.what()); }

// The DTD a trace carries, compiled and lowered, checked against the trace's fingerprint.
std::unique_ptr<metatf::lower::LoweredDtd> embedded_dtd(const std::string& path, const rt::Header& h) {
    const metatf::Compilation c = metatf::compile_embedded(h);
    if (!c.schema) throw py::value_error(path + ": the trace's embedded DTD has errors: " + metatf::first_error(c));
    auto dtd = std::make_unique<metatf::lower::LoweredDtd>(metatf::lower::lower(*c.schema));
    if (rt::fingerprint(dtd->desc()) != h.dtd_fingerprint) {
        throw py::value_error(path + ": the trace's embedded DTD does not lay out records as the trace says (a damaged header?)");
    }
    return dtd;
}

// Memory for one column of a read: address space for every row the read
// may return, whose pages the kernel maps as they are first written. So a
// read holds memory in proportion to the rows it returns, and each thread
// writes its rows in place. Trimmed to the rows at the end and handed to
// NumPy, which unmaps it.
class Block {
public:
    Block() = default;
    explicit Block(std::size_t bytes) {
        if (bytes == 0) return;
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        data_ = static_cast<std::byte*>(p);
        size_ = bytes;
        // Threads write patches of rows far apart: with huge pages (THP
        // "always") each patch would take 2 MiB.
        madvise(p, bytes, MADV_NOHUGEPAGE);
    }
    Block(Block&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    Block& operator=(Block&& o) noexcept {
        release();
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
        return *this;
    }
    ~Block() { release(); }
    std::byte* data() const { return data_; }

    // The first `count` values as a NumPy array of T that owns their pages
    // (the rest are unmapped); this is then empty.
    template <typename T>
    py::array_t<T> to_numpy(std::size_t count) {
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const std::size_t used = (count * sizeof(T) + page - 1) / page * page;
        if (used == 0) {
            release();
            return py::array_t<T>(0);
        }
        if (used < size_) munmap(data_ + used, size_ - used);
        auto* pages = new Pages{std::exchange(data_, nullptr), used};
        size_ = 0;
        py::capsule owner(pages, [](void* p) {
            auto* pages = static_cast<Pages*>(p);
            munmap(pages->data, pages->size);
            delete pages;
        });
        return py::array_t<T>(static_cast<py::ssize_t>(count), reinterpret_cast<T*>(pages->data), owner);
    }

private:
    struct Pages {
        std::byte* data;
        std::size_t size;
    };
    void release() {
        if (data_) munmap(data_, size_);
        data_ = nullptr;
        size_ = 0;
    }

    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

// The values of one field of one record type, in trace order.
struct Column {
    std::uint32_t field;
    rt::Type type;
    Block block;                     // integers as uint64 (signed ones in two's complement), floats as double
    std::vector<std::string> bytes;  // bytes fields
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
    // The blocks' starts, and room for `rows` rows in each.
    std::vector<std::byte*> reserve(std::uint64_t rows) {
        if (packed) {
            records = Block(rows * stride());
            return {records.data()};
        }
        index = Block(rows * 8);
        std::vector<std::byte*> out{index.data()};
        for (Column& c : columns) {
            if (c.type == rt::Type::bytes) continue;
            c.block = Block(rows * 8);
            out.push_back(c.block.data());
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
    std::vector<std::vector<std::string>> bytes;
};

// A part of a trace that one thread reads: the records of segments [first,
// end), at most `capacity` of them, whose rows go at row `row0` of the blocks.
struct Part {
    std::size_t first = 0, end = 0;
    std::uint64_t start = 0, stop = 0;  // its first record, and the first after it
    std::uint64_t row0 = 0, capacity = 0;
    std::vector<std::unique_ptr<PartRows>> rows;  // per slot: a type read; null for the others
    std::vector<rt::ColumnTarget*> fast;          // per slot: where read_columns() puts it (types read without a bytes column)
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
            py::array out(py::dtype("O"), std::vector<py::ssize_t>{static_cast<py::ssize_t>(c.bytes.size())});
            auto* cells = static_cast<PyObject**>(out.mutable_data());
            for (std::size_t i = 0; i < c.bytes.size(); ++i) {
                cells[i] = py::bytes(c.bytes[i]).release().ptr();
            }
            return out;
        }
    }
    return py::none();
}

py::dict describe_field(const rt::DtdDesc& d, std::uint32_t slot, std::uint32_t i, bool repeated) {
    const rt::FieldDesc& f = d.records[slot].fields[i];
    py::dict out;
    out["name"] = f.path;
    out["index"] = i;
    out["type"] = std::string(rt::name(f.type));
    out["scale"] = f.scale;
    out["repeated"] = repeated;
    const rt::TextFormDesc* form = d.text_form;
    const bool has_text = form && form->records[slot].mnemonic;
    out["text"] = has_text ? std::string(rt::name(form->records[slot].fields[i].format)) : std::string();
    out["chars"] = has_text ? std::string(form->records[slot].fields[i].chars) : std::string();
    py::dict names;
    std::string naming;
    if (f.rules && f.rules->name_count) {
        naming = f.rules->naming == rt::Naming::values ? "enum" : f.rules->naming == rt::Naming::flags ? "flags" : "bits";
        for (std::uint32_t k = 0; k < f.rules->name_count; ++k) names[py::str(f.rules->names[k].name)] = f.rules->names[k].value;
    }
    out["naming"] = naming;
    out["names"] = names;
    return out;
}

// The DTD's record types that a trace's user holds, with their fields:
// [{"name", "tag", "fields": [{"name", "index", "type", "scale", "text", "names", "naming", "repeated"}]}].
py::list describe_records(const rt::DtdDesc& d) {
    py::list out;
    for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
        const rt::RecordDesc& r = d.records[slot];
        if (r.predefined != rt::Predefined::none) continue;
        const std::vector<bool> top = rt::top_level_fields(r);
        py::list fields;
        for (std::uint32_t i = 1; i < r.field_count; ++i) fields.append(describe_field(d, slot, i, !top[i]));
        py::dict rec;
        rec["name"] = r.name;
        rec["tag"] = r.tag;
        rec["fields"] = fields;
        out.append(rec);
    }
    return out;
}

// Field `field` of record type `record`, which has names (an enum, flags or parts).
const rt::FieldDesc& named_field(const rt::DtdDesc& d, const std::string& record, const std::string& field) {
    for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
        const rt::RecordDesc& r = d.records[slot];
        for (std::uint32_t i = 0; r.name == record && i < r.field_count; ++i) {
            if (r.fields[i].path == field && r.fields[i].rules && r.fields[i].rules->name_count) return r.fields[i];
        }
    }
    throw py::key_error("record type '" + record + "' has no field '" + field + "' with names");
}

// The names dump shows for `values` of a field with an enum, flags or
// parts (rt::value_name); a value its enum does not name is its number.
std::vector<std::string> value_names(const rt::DtdDesc& d, const std::string& record, const std::string& field,
                                     const py::array_t<std::uint64_t>& values) {
    const rt::FieldDesc& f = named_field(d, record, field);
    std::vector<std::string> out;
    const auto v = values.unchecked<1>();
    for (py::ssize_t k = 0; k < v.shape(0); ++k) {
        std::string n = rt::value_name(*f.rules, v(k));
        if (n.empty()) n = f.type == rt::Type::signed_int ? std::to_string(static_cast<std::int64_t>(v(k))) : std::to_string(v(k));
        out.push_back(std::move(n));
    }
    return out;
}

// An enumeration's value that has no name, as value_names() writes it: its number.
std::optional<std::uint64_t> unnamed_number(const std::string& text, bool is_signed) {
    std::uint64_t u = 0;
    std::int64_t i = 0;
    const char* end = text.data() + text.size();
    if (is_signed) {
        const auto [at, ec] = std::from_chars(text.data(), end, i);
        return ec == std::errc{} && at == end && !text.empty() ? std::optional(static_cast<std::uint64_t>(i)) : std::nullopt;
    }
    const auto [at, ec] = std::from_chars(text.data(), end, u);
    return ec == std::errc{} && at == end && !text.empty() ? std::optional(u) : std::nullopt;
}

// The numbers the names `names` stand for, as value_names() writes them (rt::named_value).
py::array_t<std::uint64_t> named_values(const rt::DtdDesc& d, const std::string& record, const std::string& field,
                                        const std::vector<std::string>& names) {
    const rt::FieldDesc& f = named_field(d, record, field);
    py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(names.size()));
    auto v = out.mutable_unchecked<1>();
    for (std::size_t k = 0; k < names.size(); ++k) {
        auto value = rt::named_value(*f.rules, names[k]);
        if (!value && f.rules->naming == rt::Naming::values) value = unnamed_number(names[k], f.type == rt::Type::signed_int);
        if (!value) throw py::value_error("'" + names[k] + "' names no value of field '" + field + "' of record type '" + record + "'");
        v(static_cast<py::ssize_t>(k)) = *value;
    }
    return out;
}

// A column of small numbers (all below 2^16) as the codes of a categorical:
// its distinct values in order, and each value's position among them, in
// the narrowest signed type that holds it; None when some value is larger.
// Two passes and a table, with no sort and no copy of the column.
py::object small_codes(const py::array_t<std::uint64_t, py::array::c_style>& values) {
    const std::uint64_t* v = values.data();
    const auto n = static_cast<std::size_t>(values.size());
    std::vector<std::int32_t> code(std::size_t(1) << 16, -1);
    std::size_t distinct = 0;
    {
        py::gil_scoped_release unlocked;
        for (std::size_t i = 0; i < n; ++i) {
            if (v[i] >> 16) {
                distinct = SIZE_MAX;
                break;
            }
            code[v[i]] = 0;
        }
    }
    if (distinct == SIZE_MAX) return py::none();
    std::vector<std::uint64_t> unique;
    for (std::size_t k = 0; k < code.size(); ++k) {
        if (code[k] == 0) {
            code[k] = static_cast<std::int32_t>(unique.size());
            unique.push_back(k);
        }
    }
    const auto fill = [&]<typename Code>(Code) -> py::object {
        py::array_t<Code> codes(static_cast<py::ssize_t>(n));
        Code* out = codes.mutable_data();
        {
            py::gil_scoped_release unlocked;
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Code>(code[v[i]]);
        }
        return codes;
    };
    py::object codes = unique.size() <= 127 ? fill(std::int8_t{}) : unique.size() <= 32767 ? fill(std::int16_t{}) : fill(std::int32_t{});
    return py::make_tuple(py::array_t<std::uint64_t>(static_cast<py::ssize_t>(unique.size()), unique.data()), codes);
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
    // `threads` threads (0: one per core). `progress(done, total)` is called
    // now and then with records read, with the GIL held.
    py::dict read(const std::vector<std::string>& names, const std::vector<std::string>& fields, const py::object& progress,
                  std::size_t first, std::int64_t end, std::size_t threads) {
        const rt::DtdDesc& d = dtd();
        for (const std::string& n : names) {
            if (!slot_named(n)) throw py::key_error("the trace's DTD '" + std::string(d.name) + "' has no record type '" + n + "'");
        }
        std::vector<std::unique_ptr<Table>> tables(d.record_count);
        for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
            const rt::RecordDesc& r = d.records[slot];
            if (r.predefined != rt::Predefined::none) continue;
            if (names.empty() || std::find(names.begin(), names.end(), r.name) != names.end()) tables[slot] = make_table(r, fields, !names.empty());
        }
        scan(tables, progress, first, end, threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads);
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
                           std::size_t first, std::int64_t end, std::size_t threads) {
        const rt::DtdDesc& d = dtd();
        if (!slot_named(name)) throw py::key_error("the trace's DTD '" + std::string(d.name) + "' has no record type '" + name + "'");
        std::vector<std::unique_ptr<Table>> tables(d.record_count);
        std::uint32_t slot = 0;
        while (d.records[slot].name != name || d.records[slot].predefined != rt::Predefined::none) ++slot;
        tables[slot] = make_table(d.records[slot], fields, true);
        Table& t = *tables[slot];
        if (t.bytes) return py::none();
        t.packed = true;
        scan(tables, progress, first, end, threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads);
        py::list names;
        for (const Column& c : t.columns) names.append(d.records[slot].fields[c.field].path);
        return py::make_tuple(t.records.to_numpy<std::uint8_t>(t.rows * t.stride()), names);
    }

private:
    bool slot_named(const std::string& name) const {
        const rt::DtdDesc& d = dtd();
        for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
            if (d.records[slot].name == name && d.records[slot].predefined == rt::Predefined::none) return true;
        }
        return false;
    }

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
    void scan(Tables& tables, const py::object& progress, std::size_t first, std::int64_t end, std::size_t threads) {
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
            std::uint64_t rows = 0;
            for (const auto& [a, b] : first == last ? std::vector<std::pair<std::size_t, std::size_t>>{}
                                      : runs == 1   ? std::vector<std::pair<std::size_t, std::size_t>>{{first, last}}
                                                    : split_segments(h.segments, first, last, runs)) {
                Part part{a, b, first_record(a), first_record(b), rows, 0, {}, {}, nullptr};
                // Every record takes a byte at least: a frame cannot make a read reserve more rows than that.
                std::uint64_t bytes = 0;
                for (const rt::Chunk& c : h.chunks) bytes += h.version == 1 || (c.segment >= a && c.segment < b) ? c.decoded : 0;
                part.capacity = std::min(part.stop - std::min(part.start, part.stop), bytes);
                rows += part.capacity;
                parts.push_back(std::move(part));
            }
            if (!parts.empty()) total = parts.back().stop - std::min(parts.front().start, parts.back().stop);
            try {
                for (auto& t : tables) {
                    if (!t) continue;
                    if (rows > SIZE_MAX / t->stride()) throw std::bad_alloc();
                    t->blocks = t->reserve(rows);
                }
            } catch (const std::bad_alloc&) {
                const std::string message = path_ + ": the trace's frames count " + std::to_string(rows) +
                                            " records, more than this machine can reserve columns for (read fewer chunks or record types)";
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
                workers.push_back(std::async(std::launch::async, [&, i] { read_part(parts[i], i, tables, done, interrupted, failed); }));
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

    // The targets of `part`: its rows of each type read at row part.row0 of
    // the type's blocks. A type not read, and one with a bytes column, has
    // no target for read_columns(): its records are read one at a time.
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
            rows->bytes.resize(t.columns.size());
            for (std::size_t c = 0; c < t.columns.size(); ++c) {
                if (t.columns[c].type != rt::Type::bytes) rows->target.keep(t.columns[c].field, t.at(static_cast<int>(c)) + row0, stride);
            }
            if (!t.bytes) part.fast[slot] = &rows->target;
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
                    std::move(rows.bytes[c].begin(), rows.bytes[c].end(), std::back_inserter(t.columns[c].bytes));
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
    // records of a type read without a bytes column by read_columns(), the
    // others one at a time. It stops early on Ctrl-C, or when an earlier part
    // failed (whose error is then the first in trace order).
    void read_part(Part& part, std::size_t i, const Tables& tables, std::atomic<std::uint64_t>& done,
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
                    read_row(reader, *tables[slot], *rows, other);
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
    static void read_row(rt::TraceReader& reader, const Table& t, PartRows& rows, rt::GenericRecord& scratch) {
        rows.target.begin_row(reader.record_index());
        if (t.bytes) {
            rt::decode_values(reader, [&](const rt::GenericValue& v) {
                const int column = t.column_of[v.field];
                if (column >= 0 && t.columns[static_cast<std::size_t>(column)].type == rt::Type::bytes) {
                    rows.bytes[static_cast<std::size_t>(column)].emplace_back(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
                }
                rows.target.put(v);
            }, scratch.last);
        } else {
            rt::decode_values(reader, [&](const rt::GenericValue& v) { rows.target.put(v); }, scratch.last);
        }
        reader.end_record();
    }

    std::string path_;
    std::unique_ptr<metatf::lower::LoweredDtd> dtd_;
    std::uint64_t header_records_ = 0;
    int version_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> segments_;
};

// Writes a trace of a DTD file from columns, through the runtime's
// AutoEncoder (encodings chosen from the data, as mtf convert does). The
// file appears at `path` only on close(); without it nothing is left.
class Writer {
public:
    Writer(const std::string& dtd_path, const std::string& path, bool overwrite, int compress) {
        const metatf::Compilation c = metatf::compile_file(dtd_path);
        if (!c.schema) throw py::value_error("the DTD " + dtd_path + " has errors: " + metatf::first_error(c));
        dtd_ = std::make_unique<metatf::lower::LoweredDtd>(metatf::lower::lower(*c.schema));
        rt::WriterOptions options;
        options.output.replace = overwrite;
        options.compress = compress;
        try {
            writer_ = std::make_unique<rt::TraceWriter>(path, dtd_->desc(), options);
        } catch (const std::exception& e) {
            throw py::value_error(e.what());
        }
        encoder_.emplace(*writer_);
    }

    // Writes `n` records of type `record`: `columns` holds, for each of the
    // record's fields but the tag in field order, a uint64 array (the stored
    // integer: two's complement for signed fields), a float64 array, or an
    // object array of bytes. Fields inside repeated groups take no column;
    // their counts must be 0.
    void write(const std::string& record, const std::vector<py::array>& columns, std::size_t n) {
        if (!encoder_) throw py::value_error("the writer is closed");
        const rt::DtdDesc& d = dtd_->desc();
        std::uint32_t slot = 0;
        while (slot < d.record_count && (d.records[slot].name != record || d.records[slot].predefined != rt::Predefined::none)) ++slot;
        if (slot == d.record_count) throw py::key_error("the DTD '" + std::string(d.name) + "' has no record type '" + record + "'");
        const rt::RecordDesc& r = d.records[slot];
        const std::vector<bool> top = rt::top_level_fields(r);
        check_columns(r, top, columns, n);
        rt::GenericRecord out;
        out.slot = slot;
        try {
            for (std::size_t row = 0; row < n; ++row) {
                out.values.clear();
                for (std::uint32_t i = 1; i < r.field_count; ++i) {
                    if (!top[i]) continue;
                    rt::GenericValue v;
                    v.field = i;
                    const py::array& a = columns.at(i - 1);
                    switch (r.fields[i].type) {
                        case rt::Type::unsigned_int:
                        case rt::Type::signed_int: v.integer = static_cast<const std::uint64_t*>(a.data())[row]; break;
                        case rt::Type::floating: v.real = static_cast<const double*>(a.data())[row]; break;
                        case rt::Type::bytes: {
                            PyObject* cell = static_cast<PyObject* const*>(a.data())[row];
                            char* data = nullptr;
                            Py_ssize_t size = 0;
                            if (PyBytes_AsStringAndSize(cell, &data, &size) != 0) throw py::error_already_set();
                            v.bytes = {reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(size)};
                            break;
                        }
                    }
                    out.values.push_back(v);
                }
                encoder_->write(out);
            }
        } catch (const rt::TraceError& e) {
            throw py::value_error(e.what());
        }
    }

    const rt::DtdDesc& dtd() const { return dtd_->desc(); }

    // Each top-level field's column is one-dimensional, contiguous, of the
    // field's dtype and `n` long, since write() reads it by pointer.
    static void check_columns(const rt::RecordDesc& r, const std::vector<bool>& top, const std::vector<py::array>& columns, std::size_t n) {
        if (columns.size() + 1 != r.field_count) throw py::value_error("write() takes a column per field of record type '" + std::string(r.name) + "'");
        for (std::uint32_t i = 1; i < r.field_count; ++i) {
            if (!top[i]) continue;
            const py::array& a = columns[i - 1];
            const rt::Type t = r.fields[i].type;
            const char kind = t == rt::Type::floating ? 'f' : t == rt::Type::bytes ? 'O' : 'u';
            const py::dtype got = a.dtype();
            const bool typed = got.kind() == kind && got.itemsize() == 8 && got.attr("isnative").cast<bool>();
            if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n || !typed || !(a.flags() & py::array::c_style)) {
                throw py::value_error("the column of field '" + std::string(r.fields[i].path) + "' is not " + std::to_string(n) +
                                      " contiguous values of kind '" + kind + "' (uint64, float64 or object)");
            }
        }
    }

    void close() {
        if (!encoder_) return;
        try {
            encoder_->flush();
            encoder_.reset();
            writer_->close();
        } catch (const rt::TraceError& e) {
            throw py::value_error(e.what());
        }
    }

private:
    std::unique_ptr<metatf::lower::LoweredDtd> dtd_;
    std::unique_ptr<rt::TraceWriter> writer_;
    std::optional<rt::AutoEncoder> encoder_;
};

}  // namespace

PYBIND11_MODULE(_metatf, m) {
    m.doc() = "The compiled core of metatf: traces of any DTD read into NumPy columns.";
    py::class_<Trace>(m, "Trace")
        .def(py::init<std::string>(), py::arg("path"))
        .def_property_readonly("dtd_name", [](const Trace& t) { return std::string(t.dtd().name); })
        .def_property_readonly("dtd_text", [](const Trace& t) { return std::string(t.dtd().text); })
        .def_property_readonly("record_count", &Trace::record_count)
        .def("records", [](const Trace& t) { return describe_records(t.dtd()); })
        .def("value_names", [](const Trace& t, const std::string& r, const std::string& f, const py::array_t<std::uint64_t>& v) { return value_names(t.dtd(), r, f, v); })
        .def_property_readonly("version", &Trace::version)
        .def_property_readonly("segments", &Trace::segments)
        .def("read", &Trace::read, py::arg("records"), py::arg("fields"), py::arg("progress") = py::none(), py::arg("first") = 0,
             py::arg("end") = -1, py::arg("threads") = 0)
        .def("read_packed", &Trace::read_packed, py::arg("record"), py::arg("fields"), py::arg("progress") = py::none(),
             py::arg("first") = 0, py::arg("end") = -1, py::arg("threads") = 0);
    m.def("small_codes", &small_codes, py::arg("values"));
    py::class_<Writer>(m, "Writer")
        .def(py::init<std::string, std::string, bool, int>(), py::arg("dtd_path"), py::arg("path"), py::arg("overwrite"), py::arg("compress"))
        .def("records", [](const Writer& w) { return describe_records(w.dtd()); })
        .def("named_values", [](const Writer& w, const std::string& r, const std::string& f, const std::vector<std::string>& n) { return named_values(w.dtd(), r, f, n); })
        .def("write", &Writer::write, py::arg("record"), py::arg("columns"), py::arg("n"))
        .def("close", &Writer::close);
}
