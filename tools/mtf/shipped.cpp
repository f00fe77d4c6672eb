// Telling a trace whose header borrows a shipped DTD's name for another
// layout: the shipped DTDs are the files `--dtd NAME` finds by name
// (dtd_search_dirs()), compiled here only when a trace names one and carries
// a text other than its file.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common.hpp"
#include "compile.hpp"
#include "open/trace_dtd.hpp"

namespace mtf {

namespace {

namespace fs = std::filesystem;

// The fingerprint of the DTD file at `path`, if it compiles.
std::optional<std::uint64_t> fingerprint_of(const fs::path& path) {
    try {
        return rt::fingerprint(metatf::open::dtd_file(path.string())->desc());
    } catch (const metatf::open::DtdError&) {
        return std::nullopt;
    }
}

// Whether the file at `path` holds `text`: then it lays records out as the
// trace does without being compiled, the common case of a shipped DTD's trace.
bool holds(const fs::path& path, const std::string& text) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream file;
    file << in.rdbuf();
    return in && file.str() == text;
}

// The shipped DTD file NAME.dtd, where the header's name is a plain file name.
std::optional<fs::path> shipped_file(const std::string& name) {
    if (name.empty() || name.front() == '.' || name.find('/') != std::string::npos) return std::nullopt;
    for (const std::string& dir : metatf::dtd_search_dirs()) {
        std::error_code ec;
        const fs::path path = fs::path(dir) / (name + ".dtd");
        if (fs::is_regular_file(path, ec)) return path;
    }
    return std::nullopt;
}

// The name of a DTD beside `named` that lays records out as `fingerprint` does.
std::optional<std::string> shipped_with(std::uint64_t fingerprint, const fs::path& named) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(named.parent_path(), ec)) {
        if (e.path().extension() == ".dtd" && e.is_regular_file(ec) && fingerprint_of(e.path()) == fingerprint) return e.path().stem().string();
    }
    return std::nullopt;
}

}  // namespace

std::string dtd_name_warning(const rt::Header& header) {
    const std::optional<fs::path> named = shipped_file(header.dtd_name);
    if (!named || holds(*named, metatf::open::embedded_text(header)) || fingerprint_of(*named) == header.dtd_fingerprint) return {};
    const std::string start = "the header names the DTD '" + header.dtd_name + "', but the trace is ";
    const std::optional<std::string> same_layout = shipped_with(header.dtd_fingerprint, *named);
    if (!same_layout) return start + "not laid out as the shipped " + header.dtd_name + ".dtd";
    return start + "laid out as the shipped " + *same_layout + ".dtd, not " + header.dtd_name + ".dtd";
}

void warn_of_dtd_name(const char* command, const Trace& trace) {
    const std::string warning = dtd_name_warning(trace.header());
    if (!warning.empty()) std::cerr << "mtf: " << command << ": " << trace.name() << ": warning: " << warning << '\n';
}

}  // namespace mtf
