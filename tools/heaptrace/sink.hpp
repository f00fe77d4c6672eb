// The trace a traced process writes: HATF 1.0 through the generated writer,
// with the metadata that 64-bit addresses, threads and time need.
#pragma once

#include <cstdint>
#include <string>

#include <hatf10.hpp>

#include "event.hpp"

namespace metatf::heaptrace {

class Sink {
public:
    // Creates the trace at `path` (a temporary `.partial` file until close()).
    // Throws what the runtime throws when the file cannot be made.
    Sink(const std::string& path, const Config& config, std::uint64_t start_time);

    void write(std::uint32_t tid, const Event& e);
    // `e` is written soon: its addresses' look-ups in the pools (all but --fast) start loading.
    void ahead(const Event& e) {
        if (!compact_) return;
        w_.runtime().pools().prefetch(e.address);
        if (e.new_address != 0) w_.runtime().pools().prefetch(e.new_address);
    }
    // Writes the end of the trace and renames it into place.
    void close() { w_.close(); }

private:
    void announce(const Config& config, std::uint64_t start_time);
    void write_realloc(std::uint64_t thread, const Event& e);

    hatf10::Writer w_;
    bool threads_, compact_;
};

}  // namespace metatf::heaptrace
