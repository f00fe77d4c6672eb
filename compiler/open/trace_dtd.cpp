#include "trace_dtd.hpp"

#include <cstdio>

#include <metatf/split.hpp>

#include "compile.hpp"

namespace metatf::open {

namespace {

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// The DTD text a trace carries, named NAME.dtd in diagnostics.
Compilation compile_embedded(const rt::Header& h) {
    const std::uint64_t text_at = h.name_offset() + h.dtd_name.size();
    return compile(h.dtd_name + ".dtd", std::string(rt::split_embedded_dtd(h.dtd_text, text_at).own));
}

}  // namespace

std::unique_ptr<lower::LoweredDtd> trace_dtd(const rt::Header& h, const std::optional<std::string>& dtd_file) {
    const Compilation c = dtd_file ? compile_file(*dtd_file) : compile_embedded(h);
    const std::string which = dtd_file ? "the DTD " + *dtd_file : "the trace's embedded DTD";
    if (!c.schema) throw DtdError(which + " has errors: " + first_error(c));
    auto dtd = std::make_unique<lower::LoweredDtd>(lower::lower(*c.schema));
    const std::uint64_t got = rt::fingerprint(dtd->desc());
    if (got != h.dtd_fingerprint) {
        // Another DTD, or (embedded) a damaged header or text.
        throw DtdError(which + " lays out records differently from the trace, whose DTD is '" + h.dtd_name + "' (fingerprint " +
                       hex(got) + ", the trace's " + hex(h.dtd_fingerprint) + ")");
    }
    return dtd;
}

}  // namespace metatf::open
