// find_dtd(): a DTD named on a command line, as a file or a shipped DTD's name.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "compile.hpp"

namespace {

namespace fs = std::filesystem;

// Sets $METATF_DTD_PATH for one test, and puts back what was there.
struct DtdPath {
    std::string saved;
    bool had;
    explicit DtdPath(const std::string& value) : had(std::getenv("METATF_DTD_PATH") != nullptr) {
        if (had) saved = std::getenv("METATF_DTD_PATH");
        ::setenv("METATF_DTD_PATH", value.c_str(), 1);
    }
    ~DtdPath() {
        if (had) ::setenv("METATF_DTD_PATH", saved.c_str(), 1);
        else ::unsetenv("METATF_DTD_PATH");
    }
};

// A fresh directory with `files` in it, each holding its own name.
fs::path directory_with(const std::string& name, std::initializer_list<std::string> files) {
    const fs::path dir = fs::temp_directory_path() / ("metatf-dtd-search-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const std::string& f : files) std::ofstream(dir / f) << f;
    return dir;
}

const std::string source_dtds = METATF_SOURCE_DIR "/dtds";

}  // namespace

TEST_CASE("find_dtd: a shipped DTD by its name, with or without .dtd") {
    const DtdPath unset("");
    CHECK(metatf::find_dtd("spc") == source_dtds + "/spc.dtd");
    CHECK(metatf::find_dtd("hatf10.dtd") == source_dtds + "/hatf10.dtd");
    CHECK(metatf::dtd_search_dirs().back() == source_dtds);
}

TEST_CASE("find_dtd: $METATF_DTD_PATH comes first, in order, and empty entries are skipped") {
    const fs::path a = directory_with("a", {"spc.dtd"}), b = directory_with("b", {"spc", "mine.dtd"});
    const DtdPath path(":" + a.string() + "::" + b.string() + ":");
    CHECK(metatf::find_dtd("spc") == (a / "spc.dtd").string());
    CHECK(metatf::find_dtd("mine") == (b / "mine.dtd").string());
    const auto dirs = metatf::dtd_search_dirs();
    REQUIRE(dirs.size() >= 3);
    CHECK(dirs[0] == a.string());
    CHECK(dirs[1] == b.string());
}

TEST_CASE("find_dtd: NAME before NAME.dtd in one directory") {
    const fs::path d = directory_with("c", {"spc", "spc.dtd"});
    const DtdPath path(d.string());
    CHECK(metatf::find_dtd("spc") == (d / "spc").string());
}

TEST_CASE("find_dtd: what exists wins, a path is never searched, nothing found is said so") {
    const fs::path d = directory_with("d", {"spc.dtd"});
    const DtdPath path(d.string());
    const fs::path here = fs::current_path();
    fs::current_path(d);
    CHECK(metatf::find_dtd("spc.dtd") == "spc.dtd");  // the file in the current directory
    fs::create_directory(d / "hatf10");
    CHECK(metatf::find_dtd("hatf10") == source_dtds + "/hatf10.dtd");  // not the directory
    fs::current_path(here);
    CHECK(metatf::find_dtd("./no-such.dtd") == std::nullopt);
    CHECK(metatf::find_dtd("x/spc") == std::nullopt);
    CHECK(metatf::find_dtd("") == std::nullopt);
    CHECK(metatf::find_dtd("no-such-dtd") == std::nullopt);
    CHECK(metatf::dtd_not_found("./no-such.dtd") == "./no-such.dtd: no such file");
    CHECK(metatf::dtd_not_found("no-such-dtd") ==
          "no-such-dtd: no such file, and no shipped DTD of that name in " + d.string() + ", " + source_dtds);
}
