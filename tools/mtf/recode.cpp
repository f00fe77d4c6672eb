// mtf recode: writes a trace again, record by record, with encodings chosen
// from its data, its DTD's initial ones, or its own; compressed if asked.
#include <metatf/auto_encoder.hpp>
#include <metatf/writer.hpp>

#include "common.hpp"

namespace mtf {
namespace {

// Where recode's records go: the writer itself, or an AutoEncoder in front of it.
class Sink {
public:
    Sink(rt::TraceWriter& w, Encoding e, bool live) : w_(w), keep_(e == Encoding::keep) {
        if (e == Encoding::automatic) auto_.emplace(w, rt::AutoEncoder::default_window, live);
    }
    // Writes `r`, read from the input. The input's metadata records are copied
    // under --encoding keep, else left behind: the encoder or the writer adds
    // what the values need. Comments and section switches are kept.
    void write(const rt::DtdDesc& dtd, const ReadRecord& r) {
        const std::vector<rt::GenericValue>& v = r.record.values;
        switch (dtd.records[r.record.slot].predefined) {
            case rt::Predefined::metadata:
                if (keep_) {
                    const auto value = [&](std::size_t i) { return v.size() > i ? v[i].integer : 0; };
                    w_.metadata(metadata_target(dtd, r), static_cast<std::uint32_t>(v.at(1).integer),
                                static_cast<rt::MetaOp>(v.at(2).integer), value(3), value(4));
                }
                return;
            case rt::Predefined::section: {
                const auto n = static_cast<std::uint8_t>(v.at(0).integer);
                auto_ ? auto_->section(n) : w_.section(n);
                return;
            }
            case rt::Predefined::comment:  // both take comments as decode_predefined() gives them
            case rt::Predefined::none: auto_ ? auto_->write(r.record) : void(rt::encode_generic(w_, r.record)); return;
        }
    }
    void close() {
        if (auto_) auto_->flush();
        w_.close();
    }

private:
    rt::TraceWriter& w_;
    bool keep_;
    std::optional<rt::AutoEncoder> auto_;
};

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "recode", with_trace_output({{"--encoding", true}, {"--no-live", false}, {"-f", false}, {"--force", false}}),
                                    {"INPUT", "OUTPUT"});
    const Encoding encoding = encoding_choice(o, true);
    const bool live = live_references(o, encoding);
    const std::string& input = o.positional[0];
    const std::string& output = o.positional[1];
    return on_trace(input, [&] {
        Trace trace(input, o.find("--dtd"));
        naming_file(output, [&] {
            rt::TraceWriter w(output, trace.dtd(), writer_options(o, input, trace.dtd()));
            Sink sink(w, encoding, live);
            for_each_record("recode", trace, [&](const ReadRecord& r) { sink.write(trace.dtd(), r); });
            sink.close();
        });
        return 0;
    });
}

}  // namespace

namespace commands {

extern const Command recode;  // external linkage, for main's table
const Command recode{"recode", "write a trace again: encodings chosen from its data, initial or its own; compressed chunks",
                     R"(Usage: mtf recode [OPTIONS] INPUT OUTPUT

Reads the trace INPUT and writes its records to OUTPUT again, with its DTD.
The encodings (each field's width and interpretation) come from --encoding:

  auto     (the default) chosen from the data, 16384 records at a time: each
           field of each record type gets the interpretation (none, delta,
           baseOffset, default, stride) and width that store those records'
           values in the fewest bytes, or with --compress the fewest bytes
           after compression, set by metadata records before them; a field
           whose values other fields took before (a free's address) may
           instead store a count back to that value among the live ones
           (interpretation live; slower to read, see --no-live)
  initial  the DTD's initial encodings, widened by a metadata record where a
           value needs it (a 'default' or 'stride' field it breaks becomes
           'none'), as 'mtf convert' does
  keep     INPUT's own: its metadata records are copied

Otherwise INPUT's metadata records are not copied. Comments and section
records are. The records read back the same from OUTPUT. Record types of a
table (a section that a sectionOffset field points into) and, in a DTD with
tables, the global ones keep their encodings under auto.

  smallest:                   mtf recode --compress trace.mtf small.mtf
  compress a trace as it is:  mtf recode --encoding keep --compress trace.mtf trace.zst.mtf

INPUT and OUTPUT may be '-' for standard input and output. An existing
OUTPUT is replaced only with -f; nothing is left at OUTPUT when recoding
fails; OUTPUT may not be INPUT (docs/mtf.md, "Output files").

Options:
  --dtd FILE          read INPUT with FILE instead of its embedded DTD (the
                      fingerprint rule of docs/mtf.md); OUTPUT embeds FILE
  --encoding auto|initial|keep
                      how OUTPUT's encodings are chosen (above; default auto)
  --no-live           auto: no references to live values, for traces read
                      more often than stored (docs/compactness.md)
  --compress[=LEVEL]  compress each chunk with zstd at LEVEL (1-22, default
                      9; 20-22 are slow to write, not to read); chunks it
                      would not shrink stay stored
  --chunk-size SIZE   bytes of records a chunk holds before it is written
                      (4K-64M, K or M for KiB or MiB; default 1M). Larger
                      chunks compress better and cost readers as much
                      memory each (docs/compactness.md)
  --split REC.FIELD[,REC.FIELD...]
                      each field named stores its values in a section of
                      its own (a split stream, compressed apart;
                      docs/trace-format.md, 5.2); not with --encoding keep
                      of a trace that has split streams
  --class 32|64       the header's word size (default 64)
  --byte-order little|big
                      the byte order (default little)
  --container-version 1|2|3|4|5
                      the layout (default 5: 4 with the DTD text
                      compressed when --compress is given, else 4,
                      checksummed, whose chunks each decode alone; 3, 2
                      and 1 for older readers, docs/trace-format.md,
                      section 1)
  -f, --force         replace OUTPUT if it exists
  -h, --help          show this help

Exit status: 0 on success, 1 for bad input, 2 for a command-line mistake.
)",
                     run};

}  // namespace commands
}  // namespace mtf
