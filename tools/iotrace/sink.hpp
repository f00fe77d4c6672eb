// The trace a traced process writes: CHARISMA through the generated writer.
// It opens with the header and appLoad records and ends with appExit.
#pragma once

#include <cstdint>
#include <string>

#include <charisma.hpp>

#include "event.hpp"

namespace metatf::iotrace {

class Sink {
public:
    // Creates the trace at `path` (a temporary `.partial` file until close());
    // throws what the runtime throws when the file cannot be made.
    Sink(const std::string& path, bool replace, bool compress);

    void write(std::uint32_t tid, const Event& e);
    // appExit, the end of the trace, renamed into place.
    void close();

private:
    void begin();

    charisma::Writer w_;
    std::uint64_t pid_;
    charisma::ReadWrite rw_;  // reused: its request list is one item
};

}  // namespace metatf::iotrace
