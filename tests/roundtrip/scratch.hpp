// Shared by the round-trip tests that write traces to files: a fresh path
// for a trace, a HATF trace's allocs, frees and metadata read back, and the
// error a call throws.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <hatf10.hpp>

namespace metatf::test {

// `name` in the directory `dir` under the system's temporary directory, removed if it exists.
inline std::string fresh_path(const std::string& dir, const std::string& name) {
    const std::filesystem::path d = std::filesystem::temp_directory_path() / dir;
    std::filesystem::create_directories(d);
    std::filesystem::remove(d / name);
    return (d / name).string();
}

struct HatfRead {
    std::vector<hatf10::Alloc> allocs;
    std::vector<hatf10::Free> frees;
    std::vector<hatf10::Metadata> metadata;
};

inline HatfRead read_hatf(const std::string& path) {
    HatfRead out;
    hatf10::Reader r(path);
    while (r.next()) {
        if (r.type() == hatf10::RecordType::Alloc) out.allocs.push_back(r.get<hatf10::Alloc>());
        if (r.type() == hatf10::RecordType::Free) out.frees.push_back(r.get<hatf10::Free>());
        if (r.type() == hatf10::RecordType::Metadata) out.metadata.push_back(r.get<hatf10::Metadata>());
    }
    return out;
}

// The message of the TraceError `run` throws (with its position, what(),
// when `with_position`), or "" when it throws none.
template <typename Run>
std::string error_of(Run&& run, bool with_position = false) {
    try {
        run();
    } catch (const rt::TraceError& e) {
        return with_position ? e.what() : e.message;
    }
    return "";
}

}  // namespace metatf::test
