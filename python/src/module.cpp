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

#include <metatf/auto_encoder.hpp>
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

// Whether layout step `k` of `r` is a field outside every repeated group.
std::vector<bool> top_level_fields(const rt::RecordDesc& r) {
    std::vector<bool> top(r.field_count, false);
    int depth = 0;
    for (std::uint32_t k = 0; k < r.layout_count; ++k) {
        const rt::LayoutStep& s = r.layout[k];
        if (s.op == rt::LayoutStep::repeat) ++depth;
        if (s.op == rt::LayoutStep::end) --depth;
        if (s.op == rt::LayoutStep::field && depth == 0) top[s.index] = true;
    }
    return top;
}

// Values gathered in a buffer that grows by realloc, which moves a large
// buffer by remapping its pages rather than copying them, and is handed to
// NumPy as it is: memory in proportion to what the column holds, written once.
template <typename T>
class Growing {
public:
    Growing() = default;
    Growing(Growing&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)) {}
    Growing& operator=(Growing&& o) noexcept {
        std::free(data_);
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
        capacity_ = std::exchange(o.capacity_, 0);
        return *this;
    }
    ~Growing() { std::free(data_); }

    void push_back(T v) {
        if (size_ == capacity_) grow();
        data_[size_++] = v;
    }

    // Moves `more`'s values after these: one realloc (which grows a large
    // buffer in place or by remapping) and one copy.
    void append(Growing&& more) {
        if (more.size_ == 0) return;
        if (!data_) {
            *this = std::move(more);
            return;
        }
        reserve(size_ + more.size_);
        std::memcpy(data_ + size_, more.data_, more.size_ * sizeof(T));
        size_ += more.size_;
        std::free(std::exchange(more.data_, nullptr));
        more.size_ = more.capacity_ = 0;
    }

    // The values as a NumPy array that owns them; this is then empty.
    py::array_t<T> to_numpy() {
        if (!data_) return py::array_t<T>(0);
        T* data = data_;
        const std::size_t n = size_;
        data_ = nullptr;
        size_ = capacity_ = 0;
        py::capsule owner(data, [](void* p) { std::free(p); });
        return py::array_t<T>(static_cast<py::ssize_t>(n), data, owner);
    }

private:
    void grow() { reserve(std::max<std::size_t>(4096, 2 * capacity_)); }
    void reserve(std::size_t capacity) {
        if (capacity <= capacity_) return;
        void* more = std::realloc(data_, capacity * sizeof(T));
        if (!more) throw std::bad_alloc();
        data_ = static_cast<T*>(more);
        capacity_ = capacity;
    }

    T* data_ = nullptr;
    std::size_t size_ = 0, capacity_ = 0;
};

// The values of one field of one record type, in trace order.
struct Column {
    std::uint32_t field;
    rt::Type type;
    Growing<std::uint64_t> integers;  // unsigned and signed (two's complement)
    Growing<double> reals;
    std::vector<std::string> bytes;
};

// The records read of one type.
struct Table {
    Growing<std::uint64_t> index;  // each record's position in the trace, as mtf dump counts
    std::vector<Column> columns;
    std::vector<int> column_of;  // per field of the record: its column, or -1

    // An empty table with the same columns.
    std::unique_ptr<Table> empty_copy() const {
        auto t = std::make_unique<Table>();
        for (const Column& c : columns) t->columns.push_back({c.field, c.type, {}, {}, {}});
        t->column_of = column_of;
        return t;
    }
    // Appends the rows of `more`, which has the same columns and follows these in the trace.
    void append(Table& more) {
        index.append(std::move(more.index));
        for (std::size_t i = 0; i < columns.size(); ++i) {
            Column& c = columns[i];
            c.integers.append(std::move(more.columns[i].integers));
            c.reals.append(std::move(more.columns[i].reals));
            std::move(more.columns[i].bytes.begin(), more.columns[i].bytes.end(), std::back_inserter(c.bytes));
        }
    }
};

using Tables = std::vector<std::unique_ptr<Table>>;  // per slot; null for types not read

// A part of a trace that one thread reads: the records of segments [first, end).
struct Part {
    std::size_t first = 0, end = 0;
    std::uint64_t stop = 0;  // the first record after the part
    Tables tables;
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

py::object column_to_python(Column& c) {
    switch (c.type) {
        case rt::Type::unsigned_int: return c.integers.to_numpy();
        case rt::Type::signed_int: return c.integers.to_numpy().attr("view")(py::dtype::of<std::int64_t>());
        case rt::Type::floating: return c.reals.to_numpy();
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
        const std::vector<bool> top = top_level_fields(r);
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
            for (Column& c : t.columns) columns[d.records[slot].fields[c.field].path] = column_to_python(c);
            out[d.records[slot].name] = py::make_tuple(t.index.to_numpy(), columns);
        }
        return out;
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
        const std::vector<bool> top = top_level_fields(r);
        const auto add = [&](std::uint32_t i) {
            t->column_of[i] = static_cast<int>(t->columns.size());
            t->columns.push_back({i, r.fields[i].type, {}, {}, {}});
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
    // up to `threads` threads each read a run of them into tables of their
    // own, appended in trace order at the end. The GIL is released while
    // they read; this thread wakes now and then to report progress and to
    // stop them on Ctrl-C.
    void scan(Tables& tables, const py::object& progress, std::size_t first, std::int64_t end, std::size_t threads) {
        std::vector<Part> parts;
        std::uint64_t start = 0, stop = 0;
        try {
            rt::TraceReader probe(path_, [&](const rt::Header&) -> const rt::DtdDesc& { return dtd(); });
            const rt::Header& h = probe.header();
            // A version-1 trace is one chunk, all its records.
            const std::size_t count = h.version == 1 ? 1 : h.segments.size();
            auto first_record = [&](std::size_t k) { return k >= count ? h.record_count : h.version == 1 ? 0 : h.segments[k].first_record; };
            if (end >= 0 && static_cast<std::size_t>(end) < first) throw py::value_error("a chunk range ends before it starts");
            if (first > count) throw py::index_error("chunk " + std::to_string(first) + " is past the trace's " + std::to_string(count));
            const std::size_t last = end < 0 ? count : std::min<std::size_t>(static_cast<std::size_t>(end), count);
            start = first_record(first);
            stop = first_record(last);
            if (first != 0 && first != last) probe.seek_segment(first);  // refuses a start the trace cannot be read from
            const std::size_t runs = h.version >= 3 ? std::clamp<std::size_t>(threads, 1, last - first) : 1;
            for (const auto& [a, b] : first == last ? std::vector<std::pair<std::size_t, std::size_t>>{}
                                      : runs == 1   ? std::vector<std::pair<std::size_t, std::size_t>>{{first, last}}
                                                    : split_segments(h.segments, first, last, runs)) {
                Part part{a, b, first_record(b), {}, nullptr};
                for (const auto& t : tables) part.tables.push_back(t ? t->empty_copy() : nullptr);
                parts.push_back(std::move(part));
            }
        } catch (const rt::TraceError& e) {
            raise(path_, e);
        }
        std::atomic<std::uint64_t> done{0};
        std::atomic<bool> interrupted{false};
        std::atomic<std::size_t> failed{parts.size()};  // the first part that failed
        std::vector<std::future<void>> workers;
        const std::uint64_t total = stop - std::min(start, stop);
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
        for (Part& part : parts) {
            for (std::size_t slot = 0; slot < tables.size(); ++slot) {
                if (tables[slot]) tables[slot]->append(*part.tables[slot]);
            }
        }
        if (!progress.is_none()) progress(total, total);
    }

    // One thread's run of segments, read with a reader of its own. It stops
    // early on Ctrl-C, or when an earlier part failed (whose error is then
    // the first in trace order).
    void read_part(Part& part, std::size_t i, std::atomic<std::uint64_t>& done, const std::atomic<bool>& interrupted,
                   std::atomic<std::size_t>& failed) {
        try {
            rt::TraceReader reader(path_, [&](const rt::Header&) -> const rt::DtdDesc& { return dtd(); });
            if (part.first != 0) reader.seek_segment(part.first);
            rt::GenericRecord other;  // records with no table, the predefined ones among them
            std::uint64_t counted = reader.record_index();
            auto stopped = [&] { return interrupted || failed.load() < i; };
            // The last part reads to the end, where the reader checks that the records and the frames agree.
            const bool to_end = part.stop >= reader.header().record_count;
            while ((to_end || reader.record_index() < part.stop) && reader.begin_record()) {
                const std::uint64_t index = reader.record_index();
                if (Table* t = part.tables[reader.slot()].get()) {
                    t->index.push_back(index);
                    rt::decode_values(reader, [t](const rt::GenericValue& v) { append(*t, v); }, other.last);
                    reader.end_record();
                } else {
                    rt::decode_generic(reader, other);
                }
                if ((index & 0xffff) == 0) {
                    done += reader.record_index() - counted;
                    counted = reader.record_index();
                    if (stopped()) return;
                }
            }
            if (!to_end) reader.check_segment_end(part.end);
            done += reader.record_index() - counted;
        } catch (...) {
            part.error = std::current_exception();
            for (std::size_t f = failed.load(); i < f && !failed.compare_exchange_weak(f, i);) {
            }
        }
    }

    // Appends a value to its column, if it has one.
    static void append(Table& t, const rt::GenericValue& v) {
        const int column = t.column_of[v.field];
        if (column < 0) return;
        Column& c = t.columns[static_cast<std::size_t>(column)];
        switch (c.type) {
            case rt::Type::unsigned_int:
            case rt::Type::signed_int: c.integers.push_back(v.integer); break;
            case rt::Type::floating: c.reals.push_back(v.real); break;
            case rt::Type::bytes: c.bytes.emplace_back(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()); break;
        }
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
        const std::vector<bool> top = top_level_fields(r);
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
             py::arg("end") = -1, py::arg("threads") = 0);
    py::class_<Writer>(m, "Writer")
        .def(py::init<std::string, std::string, bool, int>(), py::arg("dtd_path"), py::arg("path"), py::arg("overwrite"), py::arg("compress"))
        .def("records", [](const Writer& w) { return describe_records(w.dtd()); })
        .def("named_values", [](const Writer& w, const std::string& r, const std::string& f, const std::vector<std::string>& n) { return named_values(w.dtd(), r, f, n); })
        .def("write", &Writer::write, py::arg("record"), py::arg("columns"), py::arg("n"))
        .def("close", &Writer::close);
}
