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
