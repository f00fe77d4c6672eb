// The Python package's Writer: a trace of a DTD written from columns.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <metatf/analysis/auto_encoder.hpp>
#include <metatf/container/split.hpp>
#include <metatf/io/generic.hpp>
#include <metatf/io/writer.hpp>

#include "common.hpp"
#include "compile.hpp"
#include "open/trace_dtd.hpp"

namespace metatf::python {

namespace {

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
        try {
            dtd_ = metatf::open::dtd_file(*file);
        } catch (const metatf::open::DtdError& e) {
            raise_error(PyExc_ValueError, e.what());
        }
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

void bind_writer(py::module_& m) {
    py::class_<Writer>(m, "Writer")
        .def(py::init<std::string, std::string, bool, int, std::size_t, std::vector<std::string>, int, bool, bool>(), py::arg("dtd"),
             py::arg("path"), py::arg("overwrite"), py::arg("compress"), py::arg("chunk_bytes"), py::arg("split"), py::arg("version"),
             py::arg("automatic"), py::arg("live"))
        .def("records", [](const Writer& w) { return describe_records(w.dtd()); })
        .def("named_values", [](const Writer& w, const std::string& r, const std::string& f, const std::vector<std::string>& n) { return named_values(w.dtd(), r, f, n); })
        .def("write", &Writer::write, py::arg("types"), py::arg("codes"), py::arg("columns"), py::arg("n"))
        .def("close", &Writer::close);
}

}  // namespace metatf::python
