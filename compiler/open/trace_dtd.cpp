#include "trace_dtd.hpp"

#include <metatf/container/split.hpp>
#include <metatf/core/format.hpp>

#include "compile.hpp"

namespace metatf::open {

namespace {

// `dtd`, if it lays records out as the header says; `which` names it in the error.
std::unique_ptr<lower::LoweredDtd> checked(std::unique_ptr<lower::LoweredDtd> dtd, const rt::Header& h, const std::string& which) {
    const std::uint64_t got = rt::fingerprint(dtd->desc());
    if (got != h.dtd_fingerprint) {
        // Another DTD, or (embedded) a damaged header or text.
        throw DtdError(which + " lays out records differently from the trace, whose DTD is '" + h.dtd_name + "' (fingerprint " +
                       rt::fingerprint_text(got) + ", the trace's " + rt::fingerprint_text(h.dtd_fingerprint) + ")");
    }
    return dtd;
}

}  // namespace

std::string embedded_text(const rt::Header& h) {
    const std::uint64_t text_at = h.name_offset() + h.dtd_name.size();
    return std::string(rt::split_embedded_dtd(h.dtd_text, text_at).own);
}

std::unique_ptr<lower::LoweredDtd> dtd_file(const std::string& path) {
    const Compilation c = compile_file(path);
    if (!c.schema) throw DtdError("the DTD " + path + " has errors: " + first_error(c));
    return std::make_unique<lower::LoweredDtd>(lower::lower(*c.schema));
}

std::unique_ptr<lower::LoweredDtd> trace_dtd(const rt::Header& h, const std::optional<std::string>& dtd_file) {
    if (dtd_file) return checked(open::dtd_file(*dtd_file), h, "the DTD " + *dtd_file);
    const Compilation c = compile(h.dtd_name + ".dtd", embedded_text(h));
    if (!c.schema) throw DtdError("the trace's embedded DTD has errors: " + first_error(c));
    return checked(std::make_unique<lower::LoweredDtd>(lower::lower(*c.schema)), h, "the trace's embedded DTD");
}

}  // namespace metatf::open
