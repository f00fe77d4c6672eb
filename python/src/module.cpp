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
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
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
#include <metatf/split.hpp>

#include "compile.hpp"
#include "lower/lower.hpp"
#include "open/trace_dtd.hpp"

namespace py = pybind11;
namespace rt = metatf::rt;

namespace {

// Text a trace or DTD holds as a Python str. A DTD's text is bytes: those
// that are not UTF-8 (a Latin-1 comment) read as U+FFFD.
py::str to_str(std::string_view s) {
    PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(o);
}

// Raises Python's `type` with `message`, whose bytes that are not UTF-8 (a
// DTD's line quoted in a diagnostic) show as \xNN rather than failing to decode.
[[noreturn]] void raise_error(PyObject* type, const std::string& message) {
    PyObject* o = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
    if (!o) throw py::error_already_set();
    PyErr_SetObject(type, o);
    Py_DECREF(o);
    throw py::error_already_set();
}

// A trace error as Python sees it: ValueError with the runtime's message,
// which names the byte offset and record.
[[noreturn]] void raise(const std::string& path, const rt::TraceError& e) { raise_error(PyExc_ValueError, path + ": " + e.what()); }

// The DTD a trace carries, compiled and lowered, checked against the trace's fingerprint.
std::unique_ptr<metatf::lower::LoweredDtd> embedded_dtd(const std::string& path, const rt::Header& h) {
    try {
        return metatf::open::trace_dtd(h);
    } catch (const metatf::open::DtdError& e) {
        raise_error(PyExc_ValueError, path + ": " + e.what());
    }
}

// Memory for one column of a read: address space for every row the read
// may return, whose pages the kernel maps as they are first written. So a
// read holds memory in proportion to the rows it returns, and each thread
// writes its rows in place. Trimmed to the rows at the end and handed to
// NumPy, which unmaps it.
class Block {
public:
    Block() = default;
    // `n` blocks of `each` bytes, in one mapping. Each thread of a read
    // writes its rows of a block from a row of its own on: with huge pages
    // a thread's rows take 2 MiB at least, and threads that write few rows
    // would waste that much each (until the end trims the blocks). So huge
    // pages back a mapping of 4 MiB or more only while that waste stays
    // under 64 MiB; then most of a read's page faults go.
    static std::vector<Block> many(std::size_t n, std::size_t each, std::size_t threads) {
        const std::size_t page = page_size(), room = (each + page - 1) / page * page;
        std::vector<Block> out(n);
        if (room == 0 || n == 0) return out;
        if (room > SIZE_MAX / (n + 1)) throw std::bad_alloc();
        const std::size_t total = room * n;
        const bool huge = total >= 2 * huge_page && threads * n <= 32;
        const std::size_t mapped = huge ? total + huge_page : total;
        void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        auto* start = static_cast<std::byte*>(p);
        if (huge) {  // start on a huge page
            const std::size_t skip = (huge_page - reinterpret_cast<std::uintptr_t>(start) % huge_page) % huge_page;
            if (skip != 0) munmap(start, skip);
            if (skip != huge_page) munmap(start + skip + total, huge_page - skip);
            start += skip;
        }
        madvise(start, total, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        for (std::size_t i = 0; i < n; ++i) {
            out[i].data_ = start + i * room;
            out[i].size_ = room;
        }
        return out;
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
        const std::size_t page = page_size();
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
    static constexpr std::size_t huge_page = std::size_t(2) << 20;
    static std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
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
    // The blocks' starts, and room for `rows` rows in each; `threads` will write them.
    std::vector<std::byte*> reserve(std::uint64_t rows, std::size_t threads) {
        if (packed) {
            records = std::move(Block::many(1, rows * stride(), threads * (columns.size() + 1)).front());
            return {records.data()};
        }
        std::vector<Column*> numbers;
        for (Column& c : columns) {
            if (c.type != rt::Type::bytes) numbers.push_back(&c);
        }
        std::vector<Block> blocks = Block::many(numbers.size() + 1, rows * 8, threads);
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

// `measures`: the string field `i` is the length of (rt::string_lengths), or no_field.
py::dict describe_field(const rt::DtdDesc& d, std::uint32_t slot, std::uint32_t i, bool repeated, std::int32_t measures) {
    const rt::FieldDesc& f = d.records[slot].fields[i];
    py::dict out;
    out["name"] = f.path;
    out["index"] = i;
    out["type"] = std::string(rt::name(f.type));
    out["scale"] = f.scale;
    out["repeated"] = repeated;
    out["measures"] = measures == rt::no_field ? py::object(py::none()) : py::str(d.records[slot].fields[measures].path);
    const rt::TextFormDesc* form = d.text_form;
    const bool has_text = form && form->records[slot].mnemonic;
    out["text"] = has_text ? std::string(rt::name(form->records[slot].fields[i].format)) : std::string();
    // A chars field's value is a byte's position in its string: one character a byte.
    const std::string_view chars = has_text ? form->records[slot].fields[i].chars : "";
    out["chars"] = py::reinterpret_steal<py::str>(PyUnicode_DecodeLatin1(chars.data(), static_cast<Py_ssize_t>(chars.size()), nullptr));
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

// The slot of the record type `name` that a trace's user holds (not a predefined one).
std::optional<std::uint32_t> user_record(const rt::DtdDesc& d, const std::string& name) {
    for (std::uint32_t slot = 0; slot < d.record_count; ++slot) {
        if (d.records[slot].name == name && d.records[slot].predefined == rt::Predefined::none) return slot;
    }
    return std::nullopt;
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
        const std::vector<std::int32_t> lengths = rt::string_lengths(r);
        for (std::uint32_t i = 1; i < r.field_count; ++i) fields.append(describe_field(d, slot, i, !top[i], lengths[i]));
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
                for (auto& t : tables) {
                    if (!t) continue;
                    if (rows > SIZE_MAX / t->stride()) throw std::bad_alloc();
                    t->blocks = t->reserve(rows, runs);
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
                                           " bytes; pass max_memory=N (bytes) to raise it, or read fewer chunks, record types or fields");
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
    std::unique_ptr<metatf::lower::LoweredDtd> dtd_;
    std::uint64_t header_records_ = 0;
    int version_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> segments_;
};

// A value write() cannot store, found with the GIL released: said as a ValueError once it is back.
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Writes a trace of a DTD from columns: through the runtime's AutoEncoder
// (encodings chosen from the data, as mtf recode does) or, not automatic,
// with the DTD's initial encodings widened where a value needs it (as
// encode_generic() does). The file appears at `path` only on close();
// without it nothing is left.
class Writer {
public:
    // `dtd`: a DTD file, or the name of a shipped DTD (metatf::find_dtd).
    // The rest are rt::WriterOptions as mtf recode sets them; version 0 is the runtime's own.
    Writer(const std::string& dtd, const std::string& path, bool overwrite, int compress, std::size_t chunk_bytes,
           const std::vector<std::string>& split, int version, bool automatic, bool live) {
        const std::optional<std::string> file = metatf::find_dtd(dtd);
        if (!file) raise_error(PyExc_FileNotFoundError, metatf::dtd_not_found(dtd));
        const metatf::Compilation c = metatf::compile_file(*file);
        if (!c.schema) raise_error(PyExc_ValueError, "the DTD " + *file + " has errors: " + metatf::first_error(c));
        dtd_ = std::make_unique<metatf::lower::LoweredDtd>(metatf::lower::lower(*c.schema));
        rt::WriterOptions options;
        options.output.replace = overwrite;
        options.compress = compress;
        options.chunk_bytes = chunk_bytes;
        options.split = split;
        if (version != 0) options.version = static_cast<std::uint8_t>(version);
        try {
            rt::split_fields(dtd_->desc(), options.split);  // a name the DTD lacks, said before any file is made
            writer_ = std::make_unique<rt::TraceWriter>(path, dtd_->desc(), options);
        } catch (const std::exception& e) {
            raise_error(PyExc_ValueError, e.what());
        }
        if (automatic) encoder_.emplace(*writer_, rt::AutoEncoder::default_window, live ? rt::References::predict : rt::References::none);
    }

    // Writes `n` rows in order: row k is a record of type types[codes[k]]
    // (codes None: every row is of types[0]). columns[t] is None for a type
    // with no row, else a value per field of the record but the tag, in
    // field order: None for a field without a column, or the type's rows of
    // it in order, as uint64 (two's complement for signed fields), float64,
    // or objects (bytes, or str written as UTF-8) for a bytes field.
    void write(const std::vector<std::string>& types, const py::object& codes, const std::vector<py::object>& columns, std::size_t n) {
        if (!writer_) throw py::value_error("the writer is closed");
        std::vector<std::size_t> rows(types.size());
        const std::int32_t* code = nullptr;
        py::array_t<std::int32_t, py::array::c_style | py::array::forcecast> held;
        if (codes.is_none()) {
            rows.at(0) = n;
        } else {
            held = codes.cast<py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>>();
            if (held.ndim() != 1 || static_cast<std::size_t>(held.shape(0)) != n) throw py::value_error("the record column has not one code a row");
            code = held.data();
            for (std::size_t k = 0; k < n; ++k) {
                if (code[k] < 0 || static_cast<std::size_t>(code[k]) >= types.size()) throw py::value_error("row " + std::to_string(k) + " has no record type");
                ++rows[static_cast<std::size_t>(code[k])];
            }
        }
        std::vector<std::unique_ptr<Plan>> plans(types.size());
        for (std::size_t t = 0; t < types.size(); ++t) {
            if (rows[t] != 0) plans[t] = plan(types[t], columns.at(t), rows[t]);
        }
        rt::GenericRecord out;
        // The GIL is let go a block of rows at a time, and Ctrl-C checked between blocks.
        constexpr std::size_t block = 65536;
        for (std::size_t row = 0; row < n;) {
            const std::size_t stop = std::min(n, row + block);
            std::exception_ptr error;
            {
                py::gil_scoped_release unlocked;
                try {
                    for (; row < stop; ++row) put(*plans[code ? static_cast<std::size_t>(code[row]) : 0], row, out);
                } catch (...) {
                    error = std::current_exception();
                }
            }
            if (error) {
                try {
                    std::rethrow_exception(error);
                } catch (const std::exception& e) {
                    raise_error(PyExc_ValueError, e.what());
                }
            }
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        }
    }

    const rt::DtdDesc& dtd() const { return dtd_->desc(); }

    void close() {
        if (!writer_) return;
        try {
            if (encoder_) encoder_->flush();
            encoder_.reset();
            writer_->close();
            writer_.reset();
        } catch (const rt::TraceError& e) {
            raise_error(PyExc_ValueError, e.what());
        }
    }

private:
    // Where one field's values come from.
    struct Source {
        enum Kind : std::uint8_t { column, constant, length, empty } kind = column;
        std::uint32_t field = 0;
        const void* data = nullptr;                     // column of numbers: uint64 or double, a row each
        std::vector<std::span<const std::byte>> bytes;  // column of a bytes field
        std::uint64_t value = 0;                        // constant: the DTD's default, or a group's count 0
        std::size_t of = 0;                             // length: the source of the bytes field it measures
        bool count = false;                             // counts a repeated group (written empty): must be 0
    };
    // How one record type's rows are written: its top-level fields in layout order.
    struct Plan {
        std::uint32_t slot = 0;
        std::vector<Source> sources;
        std::vector<py::object> keep;      // what the sources point into
        std::vector<std::uint64_t> last;   // per field: its value in the row being written
        std::size_t next = 0;              // the type's next row
    };

    std::uint32_t slot_of(const std::string& name) const {
        if (const auto slot = user_record(dtd(), name)) return *slot;
        throw py::key_error("the DTD '" + std::string(dtd().name) + "' has no record type '" + name + "'");
    }

    std::unique_ptr<Plan> plan(const std::string& type, const py::object& given, std::size_t rows) const {
        auto p = std::make_unique<Plan>();
        p->slot = slot_of(type);
        const rt::RecordDesc& r = dtd().records[p->slot];
        const auto columns = given.cast<std::vector<py::object>>();
        if (columns.size() + 1 != r.field_count) throw py::value_error("write() takes a value per field of record type '" + type + "'");
        std::vector<std::uint32_t> order;
        std::vector<bool> counts(r.field_count);  // per field: whether it counts a repeated group
        for (std::uint32_t i = 0, depth = 0; i < r.layout_count; ++i) {
            const rt::LayoutStep& s = r.layout[i];
            if (s.op == rt::LayoutStep::repeat && depth++ == 0) counts[s.index] = true;
            if (s.op == rt::LayoutStep::end) --depth;
            if (s.op == rt::LayoutStep::field && depth == 0) order.push_back(s.index);
        }
        p->last.assign(r.field_count, 0);
        const std::vector<std::int32_t> lengths = rt::string_lengths(r);
        for (const std::uint32_t i : order) {
            Source s;
            s.field = i;
            s.count = counts[i];
            const py::object& column = columns[i - 1];
            if (!column.is_none()) {
                take(r, i, column, rows, s, p->keep);
            } else if (lengths[i] != rt::no_field) {
                s.kind = Source::length;
                s.of = static_cast<std::uint32_t>(lengths[i]);  // a field index here; a source index below
            } else if (!counts[i] && r.fields[i].fixed) {
                s.kind = Source::constant;
                s.value = r.fields[i].fixed_value;
            } else if (counts[i] || (r.fields[i].type != rt::Type::bytes && r.fields[i].type != rt::Type::floating &&
                                     r.fields[i].initial.kind == rt::Interp::default_value)) {
                s.kind = Source::constant;
                s.value = counts[i] ? 0 : r.fields[i].initial.value;
            } else if (r.fields[i].type == rt::Type::bytes && r.fields[i].width_from != rt::no_field) {
                s.kind = Source::empty;
            } else {
                throw py::key_error("no column for field '" + std::string(r.fields[i].path) + "' of record type '" + type +
                                    "' (only a field the DTD gives a default, a length of a bytes field and a repeated group's count may be left out)");
            }
            p->sources.push_back(std::move(s));
        }
        for (Source& s : p->sources) {
            if (s.kind != Source::length) continue;
            s.of = static_cast<std::size_t>(std::find_if(p->sources.begin(), p->sources.end(), [&](const Source& b) { return b.field == s.of; }) -
                                            p->sources.begin());
        }
        return p;
    }

    // Checks field `i`'s column (`rows` values of its type) and points `s` at it.
    static void take(const rt::RecordDesc& r, std::uint32_t i, const py::object& column, std::size_t rows, Source& s,
                     std::vector<py::object>& keep) {
        const rt::Type t = r.fields[i].type;
        const std::string what = "field '" + std::string(r.fields[i].path) + "' of record type '" + std::string(r.name) + "'";
        if (!py::isinstance<py::array>(column)) throw py::value_error("the column of " + what + " is not a NumPy array");
        const py::array a = py::reinterpret_borrow<py::array>(column);
        const char kind = t == rt::Type::floating ? 'f' : t == rt::Type::bytes ? 'O' : 'u';
        const py::dtype got = a.dtype();
        const bool typed = got.kind() == kind && got.itemsize() == 8 && got.attr("isnative").cast<bool>();
        if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != rows || !typed || !(a.flags() & py::array::c_style)) {
            throw py::value_error("the column of " + what + " is not " + std::to_string(rows) + " contiguous values of kind '" + kind + "'");
        }
        keep.push_back(a);
        if (t != rt::Type::bytes) {
            s.data = a.data();
            return;
        }
        s.bytes.reserve(rows);
        PyObject* const* cells = static_cast<PyObject* const*>(a.data());
        for (std::size_t k = 0; k < rows; ++k) {
            // Held here: another thread may change the array while the GIL is let go.
            py::object cell = py::reinterpret_borrow<py::object>(cells[k]);
            if (PyUnicode_Check(cell.ptr())) {
                Py_ssize_t size = 0;
                if (const char* data = PyUnicode_AsUTF8AndSize(cell.ptr(), &size)) {
                    s.bytes.emplace_back(reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(size));
                    keep.push_back(std::move(cell));
                    continue;
                }
                // Not UTF-8 as it stands: bytes that read_pandas kept by surrogateescape.
                PyErr_Clear();
                cell = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(cell.ptr(), "utf-8", "surrogateescape"));
                if (!cell) throw py::error_already_set();
            }
            if (!PyBytes_Check(cell.ptr())) {
                if (!PyByteArray_Check(cell.ptr()) && !PyMemoryView_Check(cell.ptr())) {
                    throw py::value_error(what + " holds bytes or str, not " + std::string(Py_TYPE(cell.ptr())->tp_name) + " (its row " +
                                          std::to_string(k) + " of that type)");
                }
                cell = py::reinterpret_steal<py::object>(PyBytes_FromObject(cell.ptr()));  // a bytearray or memoryview, copied
                if (!cell) throw py::error_already_set();
            }
            s.bytes.emplace_back(reinterpret_cast<const std::byte*>(PyBytes_AS_STRING(cell.ptr())), static_cast<std::size_t>(PyBytes_GET_SIZE(cell.ptr())));
            keep.push_back(std::move(cell));
        }
    }

    // Writes the next row of `p`'s type, row `row` of the data.
    void put(Plan& p, std::size_t row, rt::GenericRecord& out) {
        const rt::RecordDesc& r = dtd().records[p.slot];
        const std::size_t k = p.next++;
        out.slot = p.slot;
        out.values.resize(p.sources.size());
        for (std::size_t j = 0; j < p.sources.size(); ++j) {
            const Source& s = p.sources[j];
            const rt::FieldDesc& f = r.fields[s.field];
            rt::GenericValue& v = out.values[j];
            v = rt::GenericValue{};
            v.field = s.field;
            switch (s.kind) {
                case Source::column:
                    if (f.type == rt::Type::bytes) v.bytes = s.bytes[k];
                    else if (f.type == rt::Type::floating) v.real = static_cast<const double*>(s.data)[k];
                    else v.integer = static_cast<const std::uint64_t*>(s.data)[k];
                    break;
                case Source::constant: v.integer = s.value; break;
                case Source::length: v.integer = p.sources[s.of].bytes.empty() ? 0 : p.sources[s.of].bytes[k].size(); break;
                case Source::empty: break;
            }
            if (s.count && v.integer != 0) {
                throw Refusal("row " + std::to_string(row) + ": field '" + f.path + "' of record type '" + r.name + "' is " + std::to_string(v.integer) +
                              ", but it counts a repeated group, whose fields have no column: a Writer writes such groups empty (count 0)");
            }
            p.last[s.field] = v.integer;
            if (f.type == rt::Type::bytes && f.width_from != rt::no_field && p.last[static_cast<std::uint32_t>(f.width_from)] != v.bytes.size()) {
                throw Refusal("row " + std::to_string(row) + ": field '" + r.fields[f.width_from].path + "' of record type '" + r.name + "' is " +
                              std::to_string(p.last[static_cast<std::uint32_t>(f.width_from)]) + ", but '" + f.path + "' holds " +
                              std::to_string(v.bytes.size()) + " bytes (leave the length's column out to have it derived)");
            }
        }
        if (encoder_) {
            encoder_->write(out);
        } else {
            rt::encode_generic(*writer_, out);
        }
    }

    std::unique_ptr<metatf::lower::LoweredDtd> dtd_;
    std::unique_ptr<rt::TraceWriter> writer_;
    std::optional<rt::AutoEncoder> encoder_;
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
    py::class_<Writer>(m, "Writer")
        .def(py::init<std::string, std::string, bool, int, std::size_t, std::vector<std::string>, int, bool, bool>(), py::arg("dtd"),
             py::arg("path"), py::arg("overwrite"), py::arg("compress"), py::arg("chunk_bytes"), py::arg("split"), py::arg("version"),
             py::arg("automatic"), py::arg("live"))
        .def("records", [](const Writer& w) { return describe_records(w.dtd()); })
        .def("named_values", [](const Writer& w, const std::string& r, const std::string& f, const std::vector<std::string>& n) { return named_values(w.dtd(), r, f, n); })
        .def("write", &Writer::write, py::arg("types"), py::arg("codes"), py::arg("columns"), py::arg("n"))
        .def("close", &Writer::close);
}
