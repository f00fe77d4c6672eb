#include "common.hpp"

#include <charconv>
#include <cstring>

#include <metatf/analysis/rules.hpp>
#include <metatf/container/split.hpp>
#include <metatf/core/format.hpp>
#include <metatf/io/generic.hpp>

namespace metatf::python {

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace metatf::python
