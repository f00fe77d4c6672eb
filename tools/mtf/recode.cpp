// mtf recode: writes a trace again, record by record, in the encodings its
// DTD starts with (widened where values need it) or in its own, compressed
// if asked.
#include <metatf/writer.hpp>

#include "common.hpp"

namespace mtf {
namespace {

// Writes `r`, read from the input, to `w`. The input's metadata records are
// copied with `keep` (the output keeps its encodings), else left behind: the
// writer adds what the values need. Comments and section switches are kept.
void rewrite(const rt::DtdDesc& dtd, const ReadRecord& r, bool keep, rt::TraceWriter& w) {
    const std::vector<rt::GenericValue>& v = r.record.values;
    switch (dtd.records[r.record.slot].predefined) {
        case rt::Predefined::metadata:
            if (keep) {
                const auto value = [&](std::size_t i) { return v.size() > i ? v[i].integer : 0; };
                w.metadata(metadata_target(dtd, r), static_cast<std::uint32_t>(v.at(1).integer),
                           static_cast<rt::MetaOp>(v.at(2).integer), value(3), value(4));
            }
            return;
        case rt::Predefined::comment: {
            const auto text = v.at(1).bytes;
            w.comment(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
            return;
        }
        case rt::Predefined::section: w.section(static_cast<std::uint8_t>(v.at(0).integer)); return;
        case rt::Predefined::none: rt::encode_generic(w, r.record); return;
    }
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "recode", with_trace_output({{"--keep-encodings", false}, {"-f", false}, {"--force", false}}),
                                    {"INPUT", "OUTPUT"});
    const bool keep = o.has("--keep-encodings");
    const std::string& input = o.positional[0];
    const std::string& output = o.positional[1];
    return on_trace(input, [&] {
        Trace trace(input, o.find("--dtd"));
        naming_file(output, [&] {
            rt::TraceWriter w(output, trace.dtd(), writer_options(o, input));
            for_each_record("recode", trace, [&](const ReadRecord& r) { rewrite(trace.dtd(), r, keep, w); });
            w.close();
        });
        return 0;
    });
}

}  // namespace

namespace commands {

extern const Command recode;  // external linkage, for main's table
const Command recode{"recode", "write a trace again: initial or its own encodings, compressed chunks",
                     R"(Usage: mtf recode [OPTIONS] INPUT OUTPUT

Reads the trace INPUT and writes its records to OUTPUT again, with its DTD,
each record type starting from the encodings the DTD gives it. A value that
does not fit its field's encoding gets the metadata record that widens the
field (or turns a 'default' or 'stride' field into 'none'), as 'mtf convert'
does; INPUT's own metadata records are not copied, unless
--keep-encodings. Comments and section records are. The records read back
the same from OUTPUT.

  compress a trace as it is:  mtf recode --keep-encodings --compress trace.mtf trace.zst.mtf

INPUT and OUTPUT may be '-' for standard input and output. An existing
OUTPUT is replaced only with -f; nothing is left at OUTPUT when recoding
fails; OUTPUT may not be INPUT (docs/mtf.md, "Output files").

Options:
  --dtd FILE          read INPUT with FILE instead of its embedded DTD (the
                      fingerprint rule of docs/mtf.md); OUTPUT embeds FILE
  --keep-encodings    copy INPUT's metadata records too: OUTPUT keeps INPUT's
                      widths and interpretations
  --compress[=LEVEL]  compress each chunk with zstd at LEVEL (1-19, default
                      9); chunks it would not shrink stay stored
  --class 32|64       the header's word size (default 64)
  --byte-order little|big
                      the byte order (default little)
  -f, --force         replace OUTPUT if it exists
  -h, --help          show this help

Exit status: 0 on success, 1 for bad input, 2 for a command-line mistake.
)",
                     run};

}  // namespace commands
}  // namespace mtf
