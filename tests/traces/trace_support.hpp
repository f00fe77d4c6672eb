// Helpers of the malformed-trace tests: temporary trace files, a byte-level
// view of a trace decoded here (not by the runtime), and a reader loop that
// touches every field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <metatf/core/error.hpp>
#include <metatf/io/generic.hpp>

namespace metatf::test {

namespace rt = metatf::rt;

// A trace path under the temporary directory, unique to this process; the
// file and a writer's temporary files beside it (NAME.XXXXXX.partial) are
// removed on construction and destruction.
class TempTrace {
public:
    explicit TempTrace(const std::string& name) {
        const std::filesystem::path dir = std::filesystem::temp_directory_path() / "metatf-malformed";
        std::filesystem::create_directories(dir);
        path_ = (dir / (name + "-" + std::to_string(::getpid()) + ".mtf")).string();
        remove();
    }
    ~TempTrace() { remove(); }
    TempTrace(const TempTrace&) = delete;
    TempTrace& operator=(const TempTrace&) = delete;

    const std::string& path() const { return path_; }
    bool has_partial() const { return !partials().empty(); }

private:
    std::vector<std::filesystem::path> partials() const {
        const std::filesystem::path p(path_);
        const std::string prefix = p.filename().string() + ".";
        std::vector<std::filesystem::path> found;
        for (const auto& e : std::filesystem::directory_iterator(p.parent_path())) {
            const std::string name = e.path().filename().string();
            if (name.starts_with(prefix) && name.ends_with(".partial")) found.push_back(e.path());
        }
        return found;
    }
    void remove() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
        for (const auto& p : partials()) std::filesystem::remove(p, ec);
    }
    std::string path_;
};

// The bytes of a trace file, with the container layout decoded from them:
// the 16-byte ident, five words, name, DTD text, chunks, section index.
struct TraceBytes {
    static constexpr std::uint64_t ident = 16;
    enum Word : unsigned { chunk_count, data_start, record_count, index_offset, text_length };
    enum Part : unsigned { number, start, size };  // the words of an index entry

    std::vector<std::uint8_t> b;

    static TraceBytes load(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        TraceBytes t;
        t.b.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        return t;
    }
    // A new file each time: ext4 flushes a file truncated and written again
    // when it is closed, which made the sweeps over thousands of variants wait on the disk.
    void save(const std::string& path) const {
        std::filesystem::remove(path);
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    }

    unsigned word_size() const { return b.at(4) == 1 ? 4 : 8; }
    bool big_endian() const { return b.at(5) == 2; }

    std::uint64_t get(std::uint64_t at, unsigned width) const {
        std::uint64_t v = 0;
        for (unsigned i = 0; i < width; ++i) {
            const std::uint64_t byte = b.at(at + (big_endian() ? i : width - 1 - i));
            v = (v << 8) | byte;
        }
        return v;
    }
    void set(std::uint64_t at, std::uint64_t v, unsigned width) {
        for (unsigned i = 0; i < width; ++i, v >>= 8) b.at(at + (big_endian() ? width - 1 - i : i)) = v & 0xff;
    }

    std::uint64_t word_at(Word i) const { return ident + i * word_size(); }
    std::uint64_t word(Word i) const { return get(word_at(i), word_size()); }
    void set_word(Word i, std::uint64_t v) { set(word_at(i), v, word_size()); }

    // Word `p` of entry `chunk` of the section index.
    std::uint64_t entry_at(std::uint64_t chunk, Part p) const { return word(index_offset) + (3 * chunk + p) * word_size(); }
    std::uint64_t entry(std::uint64_t chunk, Part p) const { return get(entry_at(chunk, p), word_size()); }
    void set_entry(std::uint64_t chunk, Part p, std::uint64_t v) { set(entry_at(chunk, p), v, word_size()); }

    // Version 1: the last `n` bytes of records (they end where the index starts), in hexadecimal.
    std::string records_tail(std::size_t n) const {
        const std::uint64_t end = word(index_offset);
        std::string out;
        for (std::uint64_t i = end - n; i < end; ++i) {
            out += (out.empty() ? "" : " ") + std::string(1, "0123456789abcdef"[b.at(i) >> 4]) + "0123456789abcdef"[b.at(i) & 15];
        }
        return out;
    }
};

// An error as one line, so that a CHECK shows the whole of both sides.
inline std::string show(rt::ErrorKind kind, std::uint64_t offset, int section, std::uint64_t record,
                        const std::string& message) {
    return std::string(rt::error_kind_name(kind)) + " at byte " + std::to_string(offset) + ", section " +
           std::to_string(section) + ", record " + std::to_string(record) + ": " + message;
}

inline std::string show(const std::optional<rt::TraceError>& e) {
    return e ? show(e->kind, e->offset, e->section, e->record, e->message) : std::string("no error");
}

// Runs `f` and returns the TraceError it throws, if any.
template <typename F>
std::optional<rt::TraceError> error_of(F&& f) {
    try {
        f();
    } catch (const rt::TraceError& e) {
        return e;
    }
    return std::nullopt;
}

// Reads every field of every record, the bytes of every view included.
struct Toucher {
    std::uint64_t sum = 0;

    void field(std::uint32_t, std::uint64_t v) { sum += v; }
    void field(std::uint32_t, std::int64_t v) { sum += static_cast<std::uint64_t>(v); }
    void field(std::uint32_t, double v) { sum += static_cast<std::uint64_t>(v != 0); }
    void field(std::uint32_t, std::span<const std::byte> v) {
        for (std::byte x : v) sum += std::to_integer<unsigned>(x);
    }
    template <typename Vector, typename Body>
    void repeat(std::uint32_t, Vector& elements, Body&& body) {
        for (auto& e : elements) body(e);
    }

    template <typename Record>
    void operator()(const Record& record) {
        if constexpr (requires(Record& r, Toucher& t) { visit_fields(r, t); }) {
            Record copy = record;
            visit_fields(copy, *this);
        } else if constexpr (requires { record.text; }) {
            for (char c : record.text) sum += static_cast<unsigned char>(c);
        } else if constexpr (requires { record.number; }) {
            sum += record.number;
        } else {
            sum += static_cast<std::uint64_t>(record.record) + record.field + static_cast<unsigned>(record.op) + record.a +
                   record.b;
        }
    }
};

// Reads a whole trace with a generated reader; returns the number of records.
template <typename Reader>
std::uint64_t read_all(const std::string& path) {
    Reader reader(path);
    Toucher touch;
    std::uint64_t records = 0;
    while (reader.next()) {
        reader.dispatch(touch);
        ++records;
    }
    return records;
}

template <typename Reader>
std::optional<rt::TraceError> read_error(const std::string& path) {
    return error_of([&] { read_all<Reader>(path); });
}

// The user records (not comments, sections or metadata) of the trace at
// `path` before the first record of segment `segment`.
inline std::ptrdiff_t records_before_segment(const std::string& path, const rt::DtdDesc& dtd, std::size_t segment) {
    rt::TraceReader r(path, dtd);
    const std::uint64_t first = r.header().segments.at(segment).first_record;
    std::ptrdiff_t before = 0;
    rt::GenericRecord g;
    while (r.record_index() < first && r.begin_record()) {
        before += r.dtd().records[r.slot()].predefined == rt::Predefined::none;
        rt::decode_generic(r, g);
    }
    return before;
}

// The user records of the trace at `path`, from segment `from`, through the
// DTD-driven reader (mtf's and Python's), each as the string `line` makes
// of its GenericRecord.
template <typename Line>
std::vector<std::string> generic_lines(const std::string& path, const rt::DtdDesc& dtd, std::size_t from, Line&& line) {
    rt::TraceReader r(path, dtd);
    if (from != 0) r.seek_segment(from);
    std::vector<std::string> out;
    rt::GenericRecord g;
    while (r.begin_record()) {
        rt::decode_generic(r, g);
        if (r.dtd().records[g.slot].predefined == rt::Predefined::none) out.push_back(line(g));
    }
    return out;
}

}  // namespace metatf::test
