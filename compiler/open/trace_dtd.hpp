// The one way to get the tables a trace is read with from the DTD it
// carries (or from a DTD file given instead): mtf, the Python module and
// the tools all open traces through it.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <metatf/container/container.hpp>

#include "lower/lower.hpp"

namespace metatf::open {

// A DTD a trace cannot be read or written with: it does not compile, or it lays out
// records otherwise than the trace's header says (its fingerprint).
struct DtdError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The tables for the trace whose header is `h`: its embedded DTD text
// (without the sections a writer added for split streams), or the DTD
// file `dtd_file`, compiled, lowered and checked against the header's
// fingerprint. Throws DtdError, whose message starts "the trace's embedded
// DTD" or "the DTD FILE".
std::unique_ptr<lower::LoweredDtd> trace_dtd(const rt::Header& h, const std::optional<std::string>& dtd_file = std::nullopt);

// The tables of the DTD file at `path`, compiled and lowered: what a new
// trace is written with. Throws DtdError "the DTD PATH has errors: ...".
std::unique_ptr<lower::LoweredDtd> dtd_file(const std::string& path);

// The DTD text the trace whose header is `h` carries, without the sections
// a writer added for split streams: the text its fingerprint was taken of.
std::string embedded_text(const rt::Header& h);

}  // namespace metatf::open
