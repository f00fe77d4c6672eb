// The DTDs the project ships (dtds/), built into mtf so that it can tell a
// trace whose header borrows one of their names for another layout.
#include <blkparse.hpp>
#include <charisma.hpp>
#include <hatf10.hpp>
#include <lackey.hpp>
#include <laplace.hpp>
#include <msr.hpp>
#include <pcap.hpp>
#include <ptf.hpp>
#include <spc.hpp>
#include <strace.hpp>

#include <iostream>

#include "common.hpp"

namespace mtf {

namespace {

const rt::DtdDesc* const shipped[] = {&blkparse::dtd, &charisma::dtd, &hatf10::dtd, &lackey::dtd, &laplace::dtd, &msr::dtd, &pcap::dtd, &ptf::dtd, &spc::dtd, &strace::dtd};

}  // namespace

std::string dtd_name_warning(const rt::Header& header) {
    const rt::DtdDesc* named = nullptr;
    const rt::DtdDesc* same_layout = nullptr;
    for (const rt::DtdDesc* dtd : shipped) {
        if (dtd->name == header.dtd_name) named = dtd;
        if (rt::fingerprint(*dtd) == header.dtd_fingerprint) same_layout = dtd;
    }
    if (named == nullptr || named == same_layout) return {};
    const std::string start = "the header names the DTD '" + header.dtd_name + "', but the trace is ";
    if (same_layout == nullptr) return start + "not laid out as the shipped " + header.dtd_name + ".dtd";
    return start + "laid out as the shipped " + same_layout->name + ".dtd, not " + header.dtd_name + ".dtd";
}

void warn_of_dtd_name(const char* command, const Trace& trace) {
    const std::string warning = dtd_name_warning(trace.header());
    if (!warning.empty()) std::cerr << "mtf: " << command << ": " << trace.name() << ": warning: " << warning << '\n';
}

}  // namespace mtf
