// mtf recover: the complete segments of a trace whose writer never finished it.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <metatf/container.hpp>

#include "common.hpp"

namespace mtf {

namespace {

struct Saved {
    std::uint64_t records = 0, bytes_read = 0, lost_records = 0;
    std::size_t segments = 0;
    std::vector<std::uint64_t> ends;  // per segment kept: the index just past its last record
    bool complete = false;  // the input had its end frame
};

// Copies the prologue and then whole segments, at most `limit`, from `input`
// to `out`, and ends the copy with a fresh end frame.
Saved copy_segments(const std::string& input, rt::OutputFile& out, std::size_t limit) {
    rt::InputFile in(input);
    rt::Header h = rt::read_prologue(in);
    if (h.version < 2) throw InputError(in.name() + ": only traces of container version 2 or 3 are written in segments that can be recovered");
    const auto prologue = rt::encode_prologue(h);
    out.write(prologue.data(), prologue.size());
    std::vector<rt::Segment> kept;
    Saved saved;
    while (kept.size() < limit) {
        const std::uint64_t at = in.position();
        rt::Segment s;
        try {
            if (!rt::read_segment(in, h, at, static_cast<std::uint32_t>(kept.size()), s, true)) {
                saved.complete = true;
                break;
            }
            std::uint64_t payload = 0;
            for (const rt::Chunk& c : s.chunks) payload += c.size;
            if (payload > (std::uint64_t(1) << 30)) throw InputError(in.name() + ": a segment of more than 1 GiB at byte " + std::to_string(at));
            std::vector<std::byte> data(payload);
            in.read(data.data(), data.size(), "a chunk");
            s.offset = out.position();
            s.first_record = saved.records;
            const auto frame = rt::encode_segment(h, s);
            out.write(frame.data(), frame.size());
            out.write(data.data(), data.size());
        } catch (const rt::TraceError& e) {
            if (e.kind != rt::ErrorKind::truncated) throw;
            saved.lost_records = s.records;  // the cut segment's count, when its frame was whole
            break;
        }
        saved.records += s.records;
        saved.ends.push_back(saved.records);
        kept.push_back(std::move(s));
    }
    saved.bytes_read = in.position();
    saved.segments = kept.size();
    h.index_offset = out.position();
    const auto end = rt::encode_end(h, kept, saved.records);
    out.write(end.data(), end.size());
    return saved;
}

// Reads the copy as `mtf check` does; returns the first error, if any (a DTD
// that does not compile as one with no position, at record 0).
std::optional<rt::TraceError> read_back(const std::string& path) {
    try {
        Trace trace(path, std::nullopt);
        for_each_record("recover", trace, [](const ReadRecord&) {});
    } catch (const rt::TraceError& e) {
        return e;
    } catch (const InputError& e) {
        return rt::TraceError(rt::ErrorKind::wrong_dtd, e.what());
    }
    return std::nullopt;
}

int run(const std::vector<std::string>& args) {
    const Options o = parse_options(args, "recover", {{"-f", false}, {"--force", false}}, {"INPUT", "OUTPUT"});
    const std::string &input = o.positional[0], &output = o.positional[1];
    // Not a FIFO, a device or a descriptor (/dev/stdout): the copy is read back from OUTPUT.
    std::error_code ec;
    const auto type = std::filesystem::status(output, ec).type();
    if (output == "-" || rt::descriptor_named(output) >= 0 ||
        (type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::regular)) {
        throw UsageError("the recovered trace is read back once written, so OUTPUT must be a regular file");
    }
    std::size_t limit = SIZE_MAX;
    for (int attempt = 0;; ++attempt) {
        rt::OutputFile out(output, output_options(o, {input}));
        const Saved saved = [&] {
            try {
                return copy_segments(input, out, limit);
            } catch (const rt::OutputError& e) {
                throw InputError(e.what());
            }
        }();
        out.commit();
        const auto bad = read_back(output);
        const std::string name = input == "-" ? "stdin" : input;
        if (bad && saved.complete && bad->has_position) {
            // A finished trace is not cut: records that do not read make it malformed, and it is
            // refused as check refuses it. Its copy is the input byte for byte, so the position is the input's.
            std::remove(output.c_str());
            throw InputError(name + ": " + bad->what());
        }
        if (bad && attempt == 0 && input != "-") {
            // A segment that arrived whole but holds damaged records: keep those before it.
            limit = 0;
            while (limit < saved.ends.size() && saved.ends[limit] <= bad->record) ++limit;
            std::remove(output.c_str());
            continue;
        }
        if (bad) {
            std::remove(output.c_str());  // it would look complete
            throw InputError(output + ": the recovered segments do not read back (record " + std::to_string(bad->record) + ")");
        }
        std::cerr << "mtf: recover: " << name << ": "
                  << (saved.complete ? "the trace was complete; " : "") << "saved " << saved.records << " records in "
                  << saved.segments << " segment" << (saved.segments == 1 ? "" : "s") << " to " << output;
        if (!saved.complete) {
            std::cerr << "; lost everything after byte " << saved.bytes_read;
            if (saved.lost_records) std::cerr << ", including a cut segment of " << saved.lost_records << " records";
            std::cerr << ", and whatever its writer had not yet flushed";
        }
        std::cerr << '\n';
        return 0;
    }
}

}  // namespace

namespace commands {

extern const Command recover;  // external linkage, for main's table
const Command recover{"recover", "save the complete segments of a trace whose writer did not finish",
                      R"(Usage: mtf recover [OPTIONS] INPUT OUTPUT

A trace whose writer was killed, crashed or ran out of disk has no end frame,
and every other command refuses it as incomplete. Its writer had flushed its
records in segments, each whole in itself; recover copies the segments that
arrived whole to OUTPUT, gives the copy an end frame, checks that it reads
back, and reports on standard error how many records were saved and where
the input was cut. Records the writer still held in memory are lost. A
complete trace (one with its end frame) whose records do not read is not cut
but malformed: recover refuses it with the error mtf check gives.

A killed writer's output is the temporary file it left beside its target:
NAME.XXXXXX.partial.

INPUT may be '-' for standard input; OUTPUT must be a regular file (new, or
replaced with -f), as the copy is read back. Only traces of
container version 2 or 3 are written in segments.

Options:
  -f, --force   replace OUTPUT if it exists
  --help        show this help

Exit status: 0 when the segments were saved, 1 for an input that is not a
version-2 or version-3 trace, a complete trace whose records do not read or an output
that cannot be written, 2 for a command-line mistake.
)",
                      run};

}  // namespace commands

}  // namespace mtf
