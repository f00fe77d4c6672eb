// Helpers shared by the test files.
#pragma once

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "compile.hpp"

// Lets doctest print lists of diagnostics when a comparison fails.
namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
    static String convert(const std::vector<std::string>& v) {
        std::string out = "{";
        for (const auto& s : v) out += "\n  \"" + s + "\"";
        return (out + "\n}").c_str();
    }
};
}  // namespace doctest

namespace metatf::test {

// Every diagnostic of compiling `text`, in the short "LINE:COL: severity: message" form.
inline std::vector<std::string> briefs(const std::string& text) {
    std::vector<std::string> out;
    const Compilation c = compile("test.dtd", text);
    for (const Diagnostic& d : c.diagnostics.all()) out.push_back(d.brief());
    return out;
}

// The schema of a DTD that must compile without errors.
inline ir::Schema schema_of(const std::string& text) {
    Compilation c = compile("test.dtd", text);
    for (const Diagnostic& d : c.diagnostics.all()) INFO(d.render());
    REQUIRE(c.schema.has_value());
    return std::move(*c.schema);
}

inline const ir::Record& record(const ir::Schema& s, const std::string& name) {
    for (const ir::Record& r : s.records) {
        if (r.name == name) return r;
    }
    FAIL("no record " << name);
    throw;
}

inline const ir::Field& field(const ir::Record& r, const std::string& path) {
    for (const ir::Field& f : r.fields) {
        if (f.path == path) return f;
    }
    FAIL("record " << r.name << " has no field " << path);
    throw;
}

}  // namespace metatf::test
