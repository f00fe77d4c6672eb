// Finding a DTD named on a command line: a file, or a shipped DTD by its name.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include "compile.hpp"

namespace metatf {

namespace fs = std::filesystem;

namespace {

// The file this code was linked into (mtf, or the Python module): installed
// DTDs are found beside it, under the install prefix, wherever it was moved.
// glibc names the main program as it was invoked (maybe "mtf", found on
// PATH), a shared object by the path it was loaded from.
fs::path own_file() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<const void*>(&own_file), &info) == 0 || info.dli_fname == nullptr) return {};
    const std::string_view name = info.dli_fname;
    std::error_code ec;
    const fs::path p = fs::canonical(name.find('/') == std::string_view::npos ? "/proc/self/exe" : name, ec);
    return ec ? fs::path() : p;
}

// The nearest PREFIX/share/metatf/dtds above this code's own file: bin/mtf
// and lib/python3/dist-packages/metatf/_metatf.so both lie under PREFIX.
fs::path installed_dir() {
    std::error_code ec;
    for (fs::path dir = own_file().parent_path(); !dir.empty(); dir = dir.parent_path()) {
        const fs::path candidate = dir / "share" / "metatf" / "dtds";
        if (fs::is_directory(candidate, ec)) return candidate;
        if (dir == dir.root_path()) break;
    }
    return {};
}

}  // namespace

std::vector<std::string> dtd_search_dirs() {
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("METATF_DTD_PATH")) {
        std::string_view rest = path;
        while (!rest.empty()) {
            const std::size_t colon = rest.find(':');
            if (colon != 0) dirs.emplace_back(rest.substr(0, colon));
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
        }
    }
    if (const fs::path installed = installed_dir(); !installed.empty()) dirs.push_back(installed.string());
#ifdef METATF_SOURCE_DTD_DIR
    std::error_code ec;
    if (fs::is_directory(METATF_SOURCE_DTD_DIR, ec)) dirs.emplace_back(METATF_SOURCE_DTD_DIR);
#endif
    return dirs;
}

std::optional<std::string> find_dtd(const std::string& name) {
    std::error_code ec;
    if (fs::exists(name, ec) && !fs::is_directory(name, ec)) return name;
    if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
    for (const std::string& dir : dtd_search_dirs()) {
        for (const std::string& file : {name, name + ".dtd"}) {
            const fs::path candidate = fs::path(dir) / file;
            if (fs::is_regular_file(candidate, ec)) return candidate.string();
        }
    }
    return std::nullopt;
}

std::string dtd_not_found(const std::string& name) {
    std::string message = name + ": no such file";
    if (name.empty() || name.find('/') != std::string::npos) return message;
    message += ", and no shipped DTD of that name in ";
    const std::vector<std::string> dirs = dtd_search_dirs();
    if (dirs.empty()) return message + "any directory ($METATF_DTD_PATH is not set and no share/metatf/dtds was found)";
    for (std::size_t k = 0; k < dirs.size(); ++k) message += (k ? ", " : "") + dirs[k];
    return message;
}

}  // namespace metatf
