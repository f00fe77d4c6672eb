// Golden files: the IR of every shipped DTD is checked in under generated/.
#include <filesystem>
#include <fstream>
#include <sstream>

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

TEST_CASE("the IR of every DTD in dtds/ matches its golden file in generated/") {
    const fs::path root = METATF_SOURCE_DIR;
    std::size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(root / "dtds")) {
        if (entry.path().extension() != ".dtd") continue;
        const metatf::Compilation c = metatf::compile_file(entry.path().string());
        INFO("DTD: " << entry.path().string());
        for (const auto& d : c.diagnostics.all()) INFO(d.render());
        REQUIRE(c.schema.has_value());
        CHECK(c.diagnostics.all().empty());
        const fs::path golden = root / "generated" / (entry.path().stem().string() + ".ir.json");
        REQUIRE_MESSAGE(fs::exists(golden), golden.string() << " is missing; run: cmake --build build --target refresh-generated");
        const std::string want = read(golden);
        const std::string got = metatf::ir::to_json(*c.schema).dump(2) + "\n";
        INFO(first_difference(want, got));
        INFO("if the change is intended, run: cmake --build build --target refresh-generated");
        CHECK(want == got);
        ++checked;
    }
    CHECK(checked >= 1);
}
