// Read and write throughput of a native binary form (docs/dtd-language.md,
// section 16): PTF's binary events through the runtime's NativeReader and
// NativeWriter and the generated ptf::NativeReader, beside a hand-written
// decoder and encoder of the same bytes. The events are shaped like a
// persistent-object workload: mostly data and edge reads and writes of
// objects drawn with a skew, some creations and deletions, a few formats.
//
// Environment: METATF_BENCH_RECORDS (events, default 1000000).
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <ptf.hpp>

namespace {

namespace rt = metatf::rt;

std::uint64_t records() {
    const char* n = std::getenv("METATF_BENCH_RECORDS");
    return n ? std::strtoull(n, nullptr, 10) : 1000000;
}

struct Random {
    std::uint64_t s;
    std::uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    std::uint64_t below(std::uint64_t n) { return next() % n; }
    // Skewed: small values far more often than large ones.
    std::uint64_t skewed(std::uint64_t n) { return below(1 + below(1 + below(n))); }
};

// ---- the hand-written codec of PTF's binary form ----------------------------------

void put(std::string& out, std::uint64_t v, unsigned width) {
    for (unsigned i = width; i-- > 0;) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get(const unsigned char*& p, unsigned width) {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) v = (v << 8) | *p++;
    return v;
}

enum Code : unsigned char { fo = 4, co, cao, do_, sr, gr, dr, dw, adr, adw, er, ew, ts, te };

// The file: the header, then `n` events.
std::string make_file(std::uint64_t n) {
    std::string out = "PTF 1.0\nbenchmark\n$\n";
    Random r{0x505446};
    std::uint64_t next_oid = 1000;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t kind = r.below(100);
        const std::uint64_t format = 40 + r.skewed(20), oid = next_oid - 1 - r.skewed(next_oid - 1);
        if (kind < 30) {
            out += char(dr), put(out, format, 4), put(out, oid, 4), put(out, r.skewed(16), 2);
        } else if (kind < 45) {
            out += char(dw), put(out, format, 4), put(out, oid, 4), put(out, r.skewed(16), 2);
        } else if (kind < 70) {
            out += char(er), put(out, format, 4), put(out, oid, 4), put(out, r.skewed(8), 2);
        } else if (kind < 85) {
            out += char(ew), put(out, format, 4), put(out, oid, 4), put(out, r.skewed(8), 2), put(out, r.below(next_oid), 4);
        } else if (kind < 95) {
            out += char(co), put(out, format, 4), put(out, next_oid++, 4);
        } else if (kind < 99) {
            out += char(adr), put(out, 3, 4), put(out, oid, 4), put(out, r.skewed(4), 2), put(out, r.skewed(1000), 4), put(out, 1 + r.skewed(64), 4);
        } else {
            const std::string name = "Class" + std::to_string(format);
            out += char(fo), put(out, format, 4), put(out, 0, 4), put(out, 2, 2), put(out, 1, 2), put(out, 0, 2), put(out, name.size(), 2);
            put(out, 2, 4);
            out += name;
        }
    }
    return out;
}

// Sums every value of every event: what a reader of the file does at least.
std::uint64_t read_by_hand(const std::string& file) {
    const auto* p = reinterpret_cast<const unsigned char*>(file.data());
    const auto* end = p + file.size();
    p += file.find("\n$\n") + 3;
    std::uint64_t sum = 0;
    while (p < end) {
        switch (*p++) {
            case dr:
            case dw:
            case er: sum += get(p, 4) + get(p, 4) + get(p, 2); break;
            case ew: sum += get(p, 4) + get(p, 4) + get(p, 2) + get(p, 4); break;
            case co: sum += get(p, 4) + get(p, 4); break;
            case adr: sum += get(p, 4) + get(p, 4) + static_cast<std::uint64_t>(static_cast<std::int16_t>(get(p, 2))) + get(p, 4) + get(p, 4); break;
            case fo: {
                sum += get(p, 4) + get(p, 4) + get(p, 2);
                const std::uint64_t data = get(p, 2), arrays = get(p, 2), length = get(p, 2);
                for (std::uint64_t k = 0; k < data; ++k) sum += get(p, 4);
                for (std::uint64_t k = 0; k < arrays; ++k) sum += get(p, 4) + get(p, 4);
                sum += length;
                p += length;
                break;
            }
            default: std::abort();
        }
    }
    return sum;
}

// Reads `file` in place.
struct View : std::streambuf {
    explicit View(const std::string& s) {
        char* p = const_cast<char*>(s.data());
        setg(p, p, p + s.size());
    }
};

const std::string& file() {
    static const std::string f = make_file(records());
    return f;
}

void report(benchmark::State& state) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * records()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * file().size()));
}

void BM_read_handwritten(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(read_by_hand(file()));
    report(state);
}

void BM_read_generic(benchmark::State& state) {
    for (auto _ : state) {
        View buffer(file());
        std::istream in(&buffer);
        rt::NativeReader reader(in, ptf::dtd);
        rt::GenericRecord record;
        std::uint64_t sum = 0;
        while (reader.next(record)) {
            for (const rt::GenericValue& v : record.values) sum += v.integer;
        }
        benchmark::DoNotOptimize(sum);
    }
    report(state);
}

void BM_read_generated(benchmark::State& state) {
    for (auto _ : state) {
        View buffer(file());
        std::istream in(&buffer);
        ptf::NativeReader reader(in);
        std::uint64_t sum = 0;
        while (reader.visit([&](const auto& e) {
            if constexpr (requires { e.oid; }) sum += e.oid;
        })) {
        }
        benchmark::DoNotOptimize(sum);
    }
    report(state);
}

// Writes back the records read once: the writer's cost alone.
void BM_write_generic(benchmark::State& state) {
    View buffer(file());
    std::istream in(&buffer);
    rt::NativeReader reader(in, ptf::dtd);
    std::vector<rt::GenericRecord> all;
    std::deque<std::string> bytes;  // copies of what the records view, which the reader reuses
    rt::GenericRecord record;
    while (reader.next(record)) {
        for (rt::GenericValue& v : record.values) {
            if (!v.bytes.empty()) v.bytes = rt::as_bytes(bytes.emplace_back(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()));
        }
        all.push_back(record);
    }
    for (auto _ : state) {
        std::ostringstream out;
        rt::NativeWriter writer(out, ptf::dtd);
        for (const rt::GenericRecord& r : all) writer.write(r);
        writer.close();
        benchmark::DoNotOptimize(out.str().size());
    }
    report(state);
}

}  // namespace

BENCHMARK(BM_read_handwritten)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_read_generic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_read_generated)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_write_generic)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
