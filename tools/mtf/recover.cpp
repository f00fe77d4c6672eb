// mtf recover: the complete segments of a trace whose writer never finished it.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <metatf/container/container.hpp>

#include "common.hpp"

namespace mtf {

namespace {

struct Saved {
    std::uint64_t records = 0, bytes_read = 0, lost_records = 0;
    std::size_t segments = 0;
    std::vector<std::uint64_t> ends;  // per segment kept: the index just past its last record
    bool complete = false;  // the input had its end frame
    std::string damage;     // why the copy stopped before a segment whose bytes do not match their checksum
};

// Version 4: the first chunk of `s`, whose stored bytes follow one another in `data`, that is damaged.
std::optional<std::string> damaged_chunk(const rt::Header& h, const rt::Segment& s, std::span<const std::byte> data) {
    for (const rt::Chunk& c : s.chunks) {
        if (auto damage = rt::chunk_damage(h, c, data.first(c.size))) return damage;
        data = data.subspan(c.size);
    }
    return std::nullopt;
}

// Copies the prologue and then whole segments, at most `limit`, from `input`
// to `out`, and ends the copy with a fresh end frame.
Saved copy_segments(const std::string& input, rt::OutputFile& out, std::size_t limit) {
    rt::InputFile in(input);
    rt::Header h = rt::read_prologue(in);
    if (h.version < 2) throw InputError(in.name() + ": only traces of container version 2 or later are written in segments that can be recovered");
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
            // Summed against the bound, not past it: sizes from a pipe are not yet checked against a file's size.
            constexpr std::uint64_t most = std::uint64_t(1) << 30;
            std::uint64_t payload = 0;
            for (const rt::Chunk& c : s.chunks) {
                if (c.size > most - payload) throw InputError(in.name() + ": a segment of more than 1 GiB at byte " + std::to_string(at));
                payload += c.size;
            }
            std::vector<std::byte> data(payload);
            in.read(data.data(), data.size(), "a chunk");
            if (auto damage = damaged_chunk(h, s, data)) {
                saved.damage = *damage;
                break;
            }
            s.offset = out.position();
            s.first_record = saved.records;
            const auto frame = rt::encode_segment(h, s);
            out.write(frame.data(), frame.size());
            out.write(data.data(), data.size());
        } catch (const rt::TraceError& e) {
            if (e.kind == rt::ErrorKind::checksum) {
                saved.damage = e.message;
                break;
            }
            if (h.version >= 4 && e.kind == rt::ErrorKind::bad_section) {
                // A frame field the reader checks before the frame's checksum (its kind, its
                // chunk count, its state block's length): in a checksummed trace that is damage too.
                saved.damage = "segment " + std::to_string(kept.size()) + " at byte " + std::to_string(at) + ": " + e.message;
                break;
            }
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

// Reads the copy as `mtf check` does; returns the first error, if any (an
// embedded DTD that does not compile or lays out records otherwise as one
// with no position, its message without the copy's name).
std::optional<rt::TraceError> read_back(const std::string& path) {
    try {
        Trace trace(path, std::nullopt);
        for_each_record("recover", trace, [](const ReadRecord&) {});
    } catch (const rt::TraceError& e) {
        return e;
    } catch (const InputError& e) {
        const std::string message = e.what(), named = path + ": ";
        return rt::TraceError(rt::ErrorKind::wrong_dtd, message.starts_with(named) ? message.substr(named.size()) : message);
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
    const std::string name = input == "-" ? "stdin" : input;
    for (int attempt = 0;; ++attempt) {
        rt::OutputFile out(output, output_options(o, {input}));
        const Saved saved = [&] {
            try {
                return naming_file(name, [&] { return copy_segments(input, out, limit); });
            } catch (const rt::OutputError& e) {
                throw InputError(e.what());
            }
        }();
        // Read back before it is put in place, so that a copy that fails leaves OUTPUT as it was
        // (an existing file replaced with -f included): `out` removes its temporary file.
        out.flush();
        const auto bad = read_back(out.written_to());
        if (bad && (saved.complete || !bad->has_position)) {
            // A finished trace is not cut: records that do not read make it malformed, and it is
            // refused as check refuses it. Its copy is the input byte for byte, so the position is the
            // input's; and an error with no position is about the header or DTD, which the copy took as they were.
            throw InputError(name + ": " + bad->what());
        }
        if (bad && attempt == 0 && input != "-") {
            // A segment that arrived whole but holds damaged records: keep those before it.
            limit = 0;
            while (limit < saved.ends.size() && saved.ends[limit] <= bad->record) ++limit;
            continue;
        }
        if (bad) throw InputError(name + ": the recovered segments do not read back: " + bad->what());
        try {
            out.commit();
        } catch (const rt::OutputError& e) {
            throw InputError(e.what());
        }
        std::cerr << "mtf: recover: " << name << ": "
                  << (saved.complete ? "the trace was complete; " : "") << "saved " << saved.records << " records in "
                  << saved.segments << " segment" << (saved.segments == 1 ? "" : "s") << " to " << output;
        if (!saved.damage.empty()) {
            std::cerr << "; stopped before the damaged " << saved.damage;
        } else if (!saved.complete) {
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
but malformed: recover refuses it with the error mtf check gives, as it
refuses a trace whose header or embedded DTD does not read. In a trace of
container version 4, a segment whose bytes do not match their checksum was
damaged after it was written: recover stops before it, keeps the segments
before it, and says which segment it was.

A killed writer's output is the temporary file it left beside its target:
NAME.XXXXXX.partial.

INPUT may be '-' for standard input; OUTPUT must be a regular file (new, or
replaced with -f), as the copy is read back. Only traces of
container version 2 or later are written in segments.

Options:
  -f, --force   replace OUTPUT if it exists
  --help        show this help

Exit status: 0 when the segments were saved (those before a damaged one
included), 1 for an input that is not a trace of container version 2 or
later, a complete trace whose records do not read or an output that cannot
be written, 2 for a command-line mistake.
)",
                      run};

}  // namespace commands

}  // namespace mtf
