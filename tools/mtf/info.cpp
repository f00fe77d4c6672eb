// mtf info: what a trace is: header, sections, and how many records of each type.
#include <metatf/core/format.hpp>

#include "common.hpp"

namespace mtf {

namespace {

// The layout version, and for versions 2 and later in a file its segments.
std::string container(const rt::Header& h) {
    std::string out = "version " + std::to_string(h.version);
    if (h.version >= 2 && !h.segments.empty()) {
        out += ", " + std::to_string(h.segments.size()) + (h.segments.size() == 1 ? " segment" : " segments");
        if (h.version >= 3) out += h.version >= 4 ? " (each decodes alone and is checksummed)" : " (each decodes alone)";
    }
    return out;
}

std::string header_table(const Trace& trace) {
    const rt::Header& h = trace.header();
    return format_table({{"trace", trace.name()},
                         {"bytes", std::to_string(trace.file_size())},
                         {"class", h.cls == rt::Class::bits32 ? "32-bit" : "64-bit"},
                         {"byte order", h.order == rt::ByteOrder::big ? "big-endian" : "little-endian"},
                         {"container", container(h)},
                         {"records", std::to_string(h.record_count)},
                         {"DTD", h.dtd_name},
                         {"fingerprint", rt::fingerprint_text(h.dtd_fingerprint)},
                         {"DTD text", std::to_string(h.dtd_text.size()) + " bytes" +
                                          (h.version >= 5 ? ", " + std::to_string(h.dtd_stored.size()) + " stored (zstd)" : "")}},
                        "ll");
}

// Every section of the DTD and those its writer added, the global part (0)
// first, with its chunks in the file.
std::string section_table(const Trace& trace) {
    const rt::DtdDesc& dtd = trace.read_dtd();
    std::vector<std::uint8_t> numbers{0};
    for (std::uint32_t i = 0; i < dtd.section_count; ++i) numbers.push_back(dtd.sections[i].number);
    std::vector<std::vector<std::string>> rows{{"section", "name", "chunks", "bytes"}};
    for (std::uint8_t n : numbers) {
        std::uint64_t chunks = 0, bytes = 0;
        for (const rt::Chunk& c : trace.header().chunks) {
            if (c.section != n) continue;
            ++chunks;
            bytes += c.size;
        }
        rows.push_back({std::to_string(n), section_name(dtd, n), std::to_string(chunks), std::to_string(bytes)});
    }
    return format_table(rows, "rlrr");
}

std::string record_table(const rt::DtdDesc& dtd, const std::vector<std::uint64_t>& counts) {
    std::vector<std::vector<std::string>> rows{{"record", "tag", "section", "count"}};
    for (std::uint32_t i = 0; i < dtd.record_count; ++i) {
        const rt::RecordDesc& r = dtd.records[i];
        rows.push_back({r.name, std::to_string(r.tag), std::to_string(r.section), std::to_string(counts[i])});
    }
    return format_table(rows, "lrrr");
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "info", {}, {"TRACE"});
    const std::string& path = o.positional[0];
    return on_trace(path, [&] {
        Trace trace(path, o.find("--dtd"));
        warn_of_dtd_name("info", trace);
        std::vector<std::uint64_t> counts(trace.dtd().record_count);
        for_each_record("info", trace, [&](const ReadRecord& r) { ++counts[r.record.slot]; });
        print(header_table(trace) + "\n" + section_table(trace) + "\n" + record_table(trace.dtd(), counts));
        return 0;
    });
}

}  // namespace

namespace commands {

extern const Command info;  // external linkage, for main's table
const Command info{"info", "describe a trace: header, sections, records of each type",
                   R"(Usage: mtf info [OPTIONS] TRACE

Describes TRACE ('-' for standard input): its header (file size, class, byte
order, record count, DTD name and fingerprint, size of the embedded DTD
text), every section of the DTD with the chunks and bytes it has in the
file, and every record type with its tag, section and number of records.
Counting the records reads the whole trace.

Warns on stderr when the header names a DTD that mtf ships (dtds/) but the
trace has another layout.

Options:
  --dtd FILE  read the trace with FILE instead of its embedded DTD; the two
              must lay out records alike (the trace's fingerprint)
  -h, --help  show this help

Exit status: 0 on success, 1 for an unreadable or malformed trace, 2 for a
command-line mistake.
)",
                   run};

}  // namespace commands

}  // namespace mtf
