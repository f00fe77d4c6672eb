// mtf recode: writes a trace again, record by record, with encodings chosen
// from its data, its DTD's initial ones, or its own; compressed if asked.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <metatf/analysis/auto_encoder.hpp>
#include <metatf/io/writer.hpp>

#include "common.hpp"

namespace mtf {
namespace {

// Where recode's records go: the writer itself, or an AutoEncoder in front of it.
class Sink {
public:
    Sink(rt::TraceWriter& w, Encoding e, rt::References references) : w_(w), keep_(e == Encoding::keep) {
        if (e == Encoding::automatic) auto_.emplace(w, rt::AutoEncoder::default_window, references);
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

// What --encoding auto tries on INPUT's first records when INPUT is a file
// (docs/compactness.md, "Chosen per trace"): how fields refer to live
// values, then which fields get streams of their own.
struct Choice {
    rt::References references = rt::References::predict;
    std::vector<std::string> split;  // added to --split's
};

// The records each trial writes.
constexpr std::uint64_t trial_records = std::uint64_t(1) << 18;

// The bytes --encoding auto makes of INPUT's first trial_records records
// under `choice`, written to a scratch file that is then removed.
std::uint64_t trial_size(const Options& o, const std::string& input, const Choice& choice) {
    Trace trace(input, o.find("--dtd"));
    const auto scratch = std::filesystem::temp_directory_path() / ("mtf-recode-trial-" + std::to_string(::getpid()) + ".mtf");
    rt::WriterOptions options = writer_options(o, input, trace.dtd());
    options.output.replace = true;
    options.split.insert(options.split.end(), choice.split.begin(), choice.split.end());
    {
        rt::TraceWriter w(scratch.string(), trace.dtd(), options);
        Sink sink(w, Encoding::automatic, choice.references);
        for_each_record("recode (trying encodings)", trace, [&](const ReadRecord& r) {
            sink.write(trace.dtd(), r);
            return r.index + 1 < trial_records;
        });
        sink.close();
    }
    const std::uint64_t size = std::filesystem::file_size(scratch);
    std::filesystem::remove(scratch);
    return size;
}

// The fields worth a trial as split streams: integer fields of global
// record types that take more than one value in INPUT's first records and
// stand in at least 1% of them, the six most frequent (of as many, those
// that take the most values).
std::vector<std::string> split_candidates(const Options& o, const std::string& input) {
    Trace trace(input, o.find("--dtd"));
    const rt::DtdDesc& dtd = trace.dtd();
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint64_t, std::set<std::uint64_t>>> seen;
    std::uint64_t records = 0;
    for_each_record("recode (trying encodings)", trace, [&](const ReadRecord& r) {
        const rt::RecordDesc& d = dtd.records[r.record.slot];
        if (d.predefined == rt::Predefined::none && d.section == 0) {
            for (const rt::GenericValue& v : r.record.values) {
                if (v.field == 0 || !rt::is_integer(d.fields[v.field].type)) continue;
                auto& [count, values] = seen[{r.record.slot, v.field}];
                ++count;
                if (values.size() < 256) values.insert(v.integer);
            }
        }
        return ++records < trial_records;
    });
    std::vector<std::tuple<std::uint64_t, std::size_t, std::string>> ranked;
    for (const auto& [key, c] : seen) {
        const rt::RecordDesc& d = dtd.records[key.first];
        if (c.second.size() >= 2 && c.first * 100 >= records) {
            ranked.emplace_back(c.first, c.second.size(), std::string(d.name) + "." + d.fields[key.second].path);
        }
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a > b; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < ranked.size() && i < 6; ++i) out.push_back(std::get<2>(ranked[i]));
    return out;
}

// --encoding auto's choice for INPUT: references as --references says, by
// default `predict`, or `live` where that writes the first records smaller
// (none with --no-live); with --compress and no --split, each candidate
// field split that makes them smaller still. From a pipe nothing is tried:
// `predict` and no split.
Choice choose(const Options& o, Encoding e, const std::string& input) {
    Choice choice;
    const std::string references = o.get("--references", "auto");
    if (references != "auto" && references != "predict" && references != "live" && references != "none") {
        throw UsageError("--references takes auto, predict, live or none, not '" + references + "'");
    }
    if (o.has("--references") && e != Encoding::automatic) throw UsageError("--references applies to --encoding auto");
    if (!live_references(o, e) || references == "none") choice.references = rt::References::none;
    if (references == "live") choice.references = rt::References::live;
    const bool try_live = references == "auto" && choice.references == rt::References::predict;
    const bool try_split = o.has("--compress") && !o.has("--split");
    if (e != Encoding::automatic || input == "-" || (!try_live && !try_split)) return choice;
    std::uint64_t best = trial_size(o, input, choice);
    const auto keep_if_smaller = [&](const Choice& other) {
        if (const std::uint64_t size = trial_size(o, input, other); size < best) {
            best = size;
            choice = other;
        }
    };
    if (try_live) keep_if_smaller({rt::References::live, {}});
    if (!try_split) return choice;
    for (const std::string& field : split_candidates(o, input)) {
        Choice more = choice;
        more.split.push_back(field);
        keep_if_smaller(more);
    }
    return choice;
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "recode", with_trace_output({{"--encoding", true}, {"--no-live", false}, {"--references", true}, {"-f", false}, {"--force", false}}),
                                    {"INPUT", "OUTPUT"});
    const Encoding encoding = encoding_choice(o, true);
    const std::string& input = o.positional[0];
    const std::string& output = o.positional[1];
    return on_trace(input, [&] {
        const Choice chosen = choose(o, encoding, input);
        Trace trace(input, o.find("--dtd"));
        naming_file(output, [&] {
            rt::WriterOptions options = writer_options(o, input, trace.dtd());
            options.split.insert(options.split.end(), chosen.split.begin(), chosen.split.end());
            rt::TraceWriter w(output, trace.dtd(), options);
            Sink sink(w, encoding, chosen.references);
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
           (interpretation predict or live; slower to read, see
           --references); a string of few values stores a code into the
           strings its record type has taken (its length field becomes
           intern). From a file, the choices the whole trace shares
           are tried on its first 262144 records, and the smallest kept:
           live or predict references, and with --compress (unless --split
           is given) which of up to six fields get streams of their own
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
  --references auto|predict|live|none
                      auto: how fields refer to live values: predict (a
                      value not in the pool costs its difference from the
                      last such value), live (it costs 8 bytes), none (no
                      references: faster to read), or auto (the default:
                      predict, or live where a trial writes less)
  --no-live           the same as --references none
  --compress[=LEVEL]  compress each chunk with zstd at LEVEL (1-22, default
                      19: a few MB a second to write; 1-9 are faster;
                      20-22 slower still); chunks it would not shrink stay
                      stored. Readers decompress as fast at any level
  --chunk-size SIZE   bytes of records a chunk holds before it is written
                      (4K-64M, K or M for KiB or MiB; default 1M, 16M with
                      --compress). Larger chunks compress better and cost
                      readers as much memory each (docs/compactness.md)
  --split REC.FIELD[,REC.FIELD...]|none
                      each field named stores its values in a section of
                      its own (a split stream, compressed apart;
                      docs/trace-format.md, 5.2); 'none' for none, and no
                      trial of them; not with --encoding keep
                      of a trace that has split streams
  --class 32|64       the header's word size (default 64)
  --byte-order little|big
                      the byte order (default little)
  --container-version 1|2|3|4|5|6
                      the layout (default 6: 4 with the DTD text and
                      state blocks compressed when --compress is given,
                      else 4, checksummed, whose chunks each decode
                      alone; 5, 3, 2 and 1 for older readers,
                      docs/trace-format.md, section 1)
  -f, --force         replace OUTPUT if it exists
  -h, --help          show this help

Exit status: 0 on success, 1 for bad input, 2 for a command-line mistake.
)",
                     run};

}  // namespace commands
}  // namespace mtf
