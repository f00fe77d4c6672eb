// Golden files: the IR of every shipped DTD is checked in under generated/.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "back/cpp.hpp"
#include "ir/json.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string& want, const std::string& got) {
    std::istringstream a(want), b(got);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ma = static_cast<bool>(std::getline(a, la)), mb = static_cast<bool>(std::getline(b, lb));
        if (!ma && !mb) return "no difference";
        if (la != lb || ma != mb) {
            return "line " + std::to_string(line) + ": golden '" + (ma ? la : "<end>") + "', now '" +
                   (mb ? lb : "<end>") + "'";
        }
    }
}

}  // namespace

TEST_CASE("the compiler's output for every DTD in dtds/ matches its golden files in generated/") {
    const fs::path root = METATF_SOURCE_DIR;
    std::size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(root / "dtds")) {
        if (entry.path().extension() != ".dtd") continue;
        const metatf::Compilation c = metatf::compile_file(entry.path().string());
        INFO("DTD: " << entry.path().string());
        for (const auto& d : c.diagnostics.all()) INFO(d.render());
        REQUIRE(c.schema.has_value());
        CHECK(c.diagnostics.all().empty());
        const std::string stem = entry.path().stem().string();
        const std::pair<std::string, std::string> outputs[] = {
            {stem + ".ir.json", metatf::ir::to_json_text(*c.schema)},
            {metatf::back::cpp_header_name(*c.schema), metatf::back::generate_cpp(*c.schema)}};
        for (const auto& output : outputs) {
            const std::string& name = output.first;
            const std::string& got = output.second;
            const fs::path golden = root / "generated" / name;
            INFO("golden file: " << golden.string());
            INFO("if the change is intended, run: cmake --build build --target refresh-generated");
            REQUIRE(fs::exists(golden));
            const std::string want = read(golden);
            INFO(first_difference(want, got));
            CHECK(want == got);
            ++checked;
        }
    }
    CHECK(checked >= 2);
}

TEST_CASE("a DTD's name becomes a namespace by the documented rule and stays a string in the header") {
    using metatf::back::cpp_namespace;
    CHECK(cpp_namespace("hatf10") == "hatf10");
    CHECK(cpp_namespace("lackey.v2") == "lackey_v2");
    CHECK(cpp_namespace("caf\xc3\xa9") == "caf__");
    CHECK(cpp_namespace("2d") == "_2d");
    CHECK(cpp_namespace("") == "_");
    for (const char* reserved : {"stdin", "errno", "EOF", "linux", "class", "and", "type"}) {
        CHECK(cpp_namespace(reserved) == std::string(reserved) + "_");
    }

    using metatf::back::namespace_problem;
    CHECK(namespace_problem("lk").empty());
    CHECK(namespace_problem("stdin_").empty());
    CHECK(namespace_problem("stdin") == "is a C++ keyword or a name that may be a macro");
    for (const char* bad : {"", "a.b", "2d", "a::b", "caf\xc3\xa9"}) {
        CHECK(namespace_problem(bad) == "is not a C++ identifier (letters, digits and '_', not starting with a digit)");
    }

    const metatf::Compilation c = metatf::compile("dir/a\"b\\c.v2.dtd", "r : (tag) { tag.value = 4; }");
    REQUIRE(c.schema);
    CHECK(c.schema->name == "a\"b\\c.v2");
    CHECK(metatf::back::cpp_header_name(*c.schema) == "a\"b\\c.v2.hpp");
    const std::string header = metatf::back::generate_cpp(*c.schema);
    CHECK(header.find("\nnamespace a_b_c_v2 {\n") != std::string::npos);
    CHECK(header.find("rt::DtdDesc dtd = {\"a\\\"b\\\\c.v2\", ") != std::string::npos);
    CHECK(metatf::back::generate_cpp(*c.schema, "lk").find("\nnamespace lk {\n") != std::string::npos);
}
