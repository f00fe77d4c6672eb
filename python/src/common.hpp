// What the files of the compiled module share (module.cpp reads traces,
// writer.cpp writes them): Python strings and errors from trace and DTD
// text, and a DTD's records as the Python package sees them.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <metatf/core/descriptor.hpp>

namespace metatf::python {

namespace py = pybind11;
namespace rt = metatf::rt;

// Text a trace or DTD holds as a Python str (bytes that are not UTF-8 read as U+FFFD).
py::str to_str(std::string_view s);
// Raises Python's `type` with `message` (bytes that are not UTF-8 show as \xNN).
[[noreturn]] void raise_error(PyObject* type, const std::string& message);

// The slot of the record type `name` that a trace's user holds (not a predefined one).
std::optional<std::uint32_t> user_record(const rt::DtdDesc& d, const std::string& name);
// The DTD's record types that a trace's user holds, with their fields.
py::list describe_records(const rt::DtdDesc& d);
// The names dump shows for `values` of a field with an enum, flags or parts.
std::vector<std::string> value_names(const rt::DtdDesc& d, const std::string& record, const std::string& field,
                                     const py::array_t<std::uint64_t>& values);
// The numbers the names `names` stand for, as value_names() writes them.
py::array_t<std::uint64_t> named_values(const rt::DtdDesc& d, const std::string& record, const std::string& field,
                                        const std::vector<std::string>& names);
// A column of small numbers as a categorical's distinct values and codes, or None.
py::object small_codes(const py::array_t<std::uint64_t, py::array::c_style>& values);

// Adds the Writer class to the module.
void bind_writer(py::module_& m);

}  // namespace metatf::python
