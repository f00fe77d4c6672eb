// Write and read throughput of the generated HATF 1.0 codec beside a
// hand-written codec of the same bytes (handwritten.hpp), in two encodings:
// the paper's (the DTD's initial encoding, no metadata) and a compact one set
// by metadata at the start of the trace (narrow sizes, delta and baseOffset
// addresses, delta and strided times). docs/performance.md explains what is measured.
//
// Environment: METATF_BENCH_DIR (where traces go, default /tmp) and
// METATF_BENCH_RECORDS (records per trace, default 1000000).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include <benchmark/benchmark.h>
#include <hatf10.hpp>

#include "handwritten.hpp"
#include "heap64_codec.hpp"
#include "realistic_workload.hpp"
#include "workload.hpp"

namespace {

using namespace bench;
namespace rt = metatf::rt;

constexpr std::uint64_t workload_seed = 0x4841544631302e30ull;  // "HATF10.0"

// ---- the generated side ----------------------------------------------------------------

void announce(hatf10::Writer& w, const Change& c) {
    const auto type = static_cast<hatf10::RecordType>(c.slot);
    if (c.op == op::width) {
        w.set_width(type, c.field, static_cast<std::uint32_t>(c.a));
    } else {
        w.set_interpretation(type, c.field, static_cast<rt::MetaOp>(c.op), c.a, c.b);
    }
}

template <Encoding E>
void write_generated(const std::string& path, std::span<const Event> events) {
    metatf::rt::WriterOptions options;
    options.output.replace = true;  // every iteration rewrites the same file
    // Container version 2, as the hand-written writer writes it, so that
    // both traces can be compared byte for byte (version 3 adds a state
    // block per 1 MiB segment: a few entries to write and apply).
    options.version = 2;
    hatf10::Writer w(path, options);
    for (const Change& c : start_changes(E)) announce(w, c);
    hatf10::Alloc a;
    hatf10::Free f;
    hatf10::ReallocAllocFree r;
    [[maybe_unused]] compact64::Planner planner;
    for (const Event& e : events) {
        const std::uint64_t time = has_time(E) ? e.time : 0;  // the paper's encoding has no time
        [[maybe_unused]] compact64::Plan plan;
        if constexpr (E == Encoding::heap64_compact) {  // widen what does not fit, for this record only
            plan = planner.plan(e);
            if (plan.widened) compact64::each_width_change(e, plan, false, [&](const Change& c) { announce(w, c); });
        }
        switch (e.kind) {
            case Kind::alloc:
                a.size = e.size;
                a.address = e.address;
                a.thread = e.thread;
                a.time = time;
                w.write(a);
                break;
            case Kind::free:
                f.address = e.address;
                f.thread = e.thread;
                f.time = time;
                w.write(f);
                break;
            case Kind::realloc:
                r.size = e.size;
                r.oldAddress = e.address;
                r.newAddress = e.new_address;
                r.thread = e.thread;
                r.time = time;
                w.write(r);
                break;
        }
        if constexpr (E == Encoding::heap64_compact) {
            if (plan.widened) compact64::each_width_change(e, plan, true, [&](const Change& c) { announce(w, c); });
        }
    }
    w.close();
}

// Adds a record to the checksum: the heap64 encodings' with their thread.
template <Encoding E>
void consume(Checksum& sum, const hatf10::Alloc& x) {
    if constexpr (is_heap64(E)) {
        sum.alloc(x.size, x.address, x.time, x.thread);
    } else {
        sum.alloc(x.size, x.address, x.time);
    }
}
template <Encoding E>
void consume(Checksum& sum, const hatf10::Free& x) {
    if constexpr (is_heap64(E)) {
        sum.free(x.address, x.time, x.thread);
    } else {
        sum.free(x.address, x.time);
    }
}
template <Encoding E>
void consume(Checksum& sum, const hatf10::ReallocAllocFree& x) {
    if constexpr (is_heap64(E)) {
        sum.realloc(x.size, x.oldAddress, x.newAddress, x.time, x.thread);
    } else {
        sum.realloc(x.size, x.oldAddress, x.newAddress, x.time);
    }
}

// Reads with the generated reader; `check`, when given, gets every event record.
template <Encoding E, typename Check>
Checksum read_generated(const std::string& path, Check&& check) {
    using hatf10::RecordType;
    hatf10::Reader r(path);
    Checksum sum;
    while (r.next()) {
        switch (r.type()) {
            case RecordType::Alloc: {
                const auto& x = r.get<hatf10::Alloc>();
                check(Event{Kind::alloc, static_cast<std::uint32_t>(x.size), x.address, 0, x.time, static_cast<std::uint32_t>(x.thread)});
                consume<E>(sum, x);
                break;
            }
            case RecordType::Free: {
                const auto& x = r.get<hatf10::Free>();
                check(Event{Kind::free, 0, x.address, 0, x.time, static_cast<std::uint32_t>(x.thread)});
                consume<E>(sum, x);
                break;
            }
            case RecordType::ReallocAllocFree: {
                const auto& x = r.get<hatf10::ReallocAllocFree>();
                check(Event{Kind::realloc, static_cast<std::uint32_t>(x.size), x.oldAddress, x.newAddress, x.time,
                            static_cast<std::uint32_t>(x.thread)});
                consume<E>(sum, x);
                break;
            }
            case RecordType::Metadata: break;
            default: throw std::runtime_error("unexpected record type in the benchmark trace");
        }
    }
    return sum;
}

template <Encoding E>
Checksum read_generated(const std::string& path) {
    return read_generated<E>(path, [](const Event&) {});
}

// The same through the generated visitor interface.
template <Encoding E>
Checksum visit_generated(const std::string& path) {
    hatf10::Reader r(path);
    Checksum sum;
    r.visit([&](const auto& x) {
        using Record = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<Record, hatf10::Alloc> || std::is_same_v<Record, hatf10::Free> ||
                      std::is_same_v<Record, hatf10::ReallocAllocFree>) {
            consume<E>(sum, x);
        } else if constexpr (!std::is_same_v<Record, hatf10::Metadata>) {
            throw std::runtime_error("unexpected record type in the benchmark trace");
        }
    });
    return sum;
}

// ---- the hand-written side, by encoding ------------------------------------------------

template <Encoding E>
void write_hand(const std::string& path, const Container& c, std::span<const Event> events) {
    if constexpr (is_heap64(E)) {
        write_heap64_handwritten<E>(path, c, events);
    } else {
        write_handwritten<E>(path, c, events);
    }
}

template <Encoding E, bool Decode = true>
Checksum read_hand(const std::string& path, const Container& c) {
    if constexpr (is_heap64(E)) {
        return read_heap64_handwritten<E, Decode>(path, c);
    } else {
        return read_handwritten<E, Decode>(path, c);
    }
}

// ---- data and the one-time checks --------------------------------------------------------

struct Trace {
    std::string path;               // written by the generated writer; both readers read it
    std::vector<std::byte> image;   // its bytes
    std::vector<hw::ChunkRef> chunks;  // where its chunks are (for the io-only writer)
    Checksum expected;
};

struct Data {
    std::vector<Event> events;         // workload.hpp's: the paper and compact encodings
    std::vector<Event> heap64_events;  // realistic_workload.hpp's: the heap64 encodings
    Container container{};
    std::string scratch;  // every write benchmark writes here
    Trace traces[4];      // by Encoding

    const std::vector<Event>& events_of(Encoding e) const { return is_heap64(e) ? heap64_events : events; }
};

Data data;

std::vector<std::byte> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && !in) throw std::runtime_error("cannot read " + path);
    std::vector<std::byte> out(chars.size());
    std::memcpy(out.data(), chars.data(), chars.size());
    return out;
}

void cleanup() {
    for (const Trace& t : data.traces) {
        if (!t.path.empty()) std::remove(t.path.c_str());
    }
    if (!data.scratch.empty()) std::remove(data.scratch.c_str());
}

[[noreturn]] void give_up(const std::string& why) {
    std::fprintf(stderr, "hatf_bench: %s\n", why.c_str());
    cleanup();
    std::abort();
}

Checksum expected_sum(Encoding e) {
    Checksum sum;
    for (const Event& x : data.events_of(e)) {
        const std::uint64_t t = has_time(e) ? x.time : 0;
        switch (x.kind) {
            case Kind::alloc: sum.alloc(x.size, x.address, t); break;
            case Kind::free: sum.free(x.address, t); break;
            case Kind::realloc: sum.realloc(x.size, x.address, x.new_address, t); break;
        }
        if (!is_heap64(e)) continue;
        const std::uint64_t weight[] = {1, 3, 5};  // as Checksum weighs the thread of each record type
        sum.thread += x.thread * weight[static_cast<int>(x.kind)];
    }
    return sum;
}

template <Encoding E>
void prepare(const std::string& dir, const std::string& stem) {
    Trace& t = data.traces[static_cast<int>(E)];
    t.path = dir + "/" + stem + "-" + encoding_name(E) + ".mtf";
    const std::string hand = dir + "/" + stem + "-" + encoding_name(E) + "-hand.mtf";
    const std::vector<Event>& events = data.events_of(E);
    write_generated<E>(t.path, events);
    write_hand<E>(hand, data.container, events);
    t.image = slurp(t.path);
    const auto other = slurp(hand);
    std::remove(hand.c_str());
    if (t.image != other) {
        std::size_t at = 0;
        while (at < t.image.size() && at < other.size() && t.image[at] == other[at]) ++at;
        give_up(std::string("the hand-written writer's ") + encoding_name(E) + " trace differs from the generated writer's at byte " +
                std::to_string(at) + " (sizes " + std::to_string(t.image.size()) + " and " + std::to_string(other.size()) + ")");
    }
    hw::File image_file(t.path, "rb");
    t.chunks = hw::read_container(image_file, data.container);
    t.expected = expected_sum(E);
    std::size_t i = 0;
    const Checksum generated = read_generated<E>(t.path, [&](const Event& got) {
        const Event& want = events[i++];
        const std::uint64_t time = has_time(E) ? want.time : 0;
        if (got.kind != want.kind || got.size != want.size || got.address != want.address ||
            got.new_address != want.new_address || got.time != time || got.thread != want.thread) {
            give_up(std::string("the generated reader returned a wrong record ") + std::to_string(i - 1) + " of the " + encoding_name(E) +
                    " trace");
        }
    });
    if (i != events.size() || !(generated == t.expected)) give_up("the generated reader's records differ from the workload");
    if (!(visit_generated<E>(t.path) == t.expected)) give_up("the generated reader's visitor gives other records");
    if (!(read_hand<E>(t.path, data.container) == t.expected)) {
        give_up("the hand-written reader's records differ from the workload");
    }
}

std::size_t count_from(const char* variable, std::size_t fallback) {
    const char* n = std::getenv(variable);
    return n && *n ? std::strtoull(n, nullptr, 10) : fallback;
}

void setup() {
    const std::size_t records = count_from("METATF_BENCH_RECORDS", 1'000'000);
    const std::size_t heap64_records = count_from("METATF_BENCH_HEAP64_RECORDS", 3'000'000);
    const char* dir_env = std::getenv("METATF_BENCH_DIR");
    const std::string dir = dir_env && *dir_env ? dir_env : "/tmp";
    const std::string stem = "hatf_bench-" + std::to_string(::getpid());
    WorkloadStats st;
    data.events = make_workload(records, workload_seed, &st);
    RealisticStats hst;
    data.heap64_events = make_realistic_workload(heap64_records, workload_seed, &hst);
    data.container = {rt::fingerprint(hatf10::dtd), hatf10::dtd.name, hatf10::dtd.text};
    data.scratch = dir + "/" + stem + "-scratch.mtf";
    prepare<Encoding::paper>(dir, stem);
    prepare<Encoding::compact>(dir, stem);
    prepare<Encoding::heap64>(dir, stem);
    prepare<Encoding::heap64_compact>(dir, stem);
    std::fprintf(stderr,
                 "workload: %zu records (%zu alloc, %zu free, %zu realloc; %zu blocks reused), heap top 0x%llx\n"
                 "heap64 workload: %zu records (%zu alloc, %zu free, %zu realloc; %zu blocks reused, %zu mapped, "
                 "%zu freed by another thread; largest %u bytes)\n"
                 "traces in %s: paper %zu bytes, compact %zu, heap64 %zu, heap64-compact %zu; "
                 "hand-written files byte-identical, readers agree\n",
                 data.events.size(), st.allocs, st.frees, st.reallocs, st.reused, static_cast<unsigned long long>(st.heap_top),
                 data.heap64_events.size(), hst.allocs, hst.frees, hst.reallocs, hst.reused, hst.mapped, hst.foreign_frees,
                 hst.max_size, dir.c_str(), data.traces[0].image.size(), data.traces[1].image.size(), data.traces[2].image.size(),
                 data.traces[3].image.size());
}

// ---- benchmarks --------------------------------------------------------------------------

void account(benchmark::State& state, Encoding e) {
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(data.events_of(e).size()));
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.traces[static_cast<int>(e)].image.size()));
}

// Every read benchmark's result: both readers must give the workload's sums.
void check_sum(const Checksum& sum, const Trace& t) {
    benchmark::DoNotOptimize(sum);
    if (!(sum == t.expected)) give_up("a reader gave other sums than the workload's, reading " + t.path);
}

template <Encoding E>
void register_encoding() {
    const std::string enc = encoding_name(E);
    const Trace& t = data.traces[static_cast<int>(E)];
    auto add = [](const std::string& name, auto fn) {
        benchmark::RegisterBenchmark(name.c_str(), fn)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
    };
    add("write/" + enc + "/generated", [](benchmark::State& s) {
        for (auto _ : s) write_generated<E>(data.scratch, data.events_of(E));
        account(s, E);
    });
    add("write/" + enc + "/hand-written", [](benchmark::State& s) {
        for (auto _ : s) write_hand<E>(data.scratch, data.container, data.events_of(E));
        account(s, E);
    });
    add("write/" + enc + "/io-only", [&t](benchmark::State& s) {
        for (auto _ : s) hw::write_image(data.scratch, t.image, t.chunks, hw::prologue_size(data.container));
        account(s, E);
    });
    add("read/" + enc + "/generated", [&t](benchmark::State& s) {
        for (auto _ : s) {
            Checksum sum = read_generated<E>(t.path);
            check_sum(sum, t);
        }
        account(s, E);
    });
    add("read/" + enc + "/generated-visit", [&t](benchmark::State& s) {
        for (auto _ : s) {
            Checksum sum = visit_generated<E>(t.path);
            check_sum(sum, t);
        }
        account(s, E);
    });
    add("read/" + enc + "/hand-written", [&t](benchmark::State& s) {
        for (auto _ : s) {
            Checksum sum = read_hand<E>(t.path, data.container);
            check_sum(sum, t);
        }
        account(s, E);
    });
    add("read/" + enc + "/io-only", [&t](benchmark::State& s) {
        for (auto _ : s) {
            Checksum sum = read_hand<E, false>(t.path, data.container);
            benchmark::DoNotOptimize(sum);
        }
        account(s, E);
    });
}

// The console output, then a table of records/s, MB/s and generated/hand-written
// ratios from the fastest repetition of each benchmark: on a shared machine
// interference only ever slows a run down, so the fastest one is the closest
// to the code's own cost (medians are in the console output above).
class RatioReporter : public benchmark::ConsoleReporter {
public:
    using ConsoleReporter::ConsoleReporter;

    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            if (r.error_occurred) continue;
            const bool aggregate = r.run_type == Run::RT_Aggregate;
            if (aggregate && r.aggregate_name != "min") continue;
            Result& x = results_[r.run_name.function_name];
            const double seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
            if (aggregate || x.seconds <= 0 || seconds < x.seconds) x.seconds = seconds;
            const double items = counter(r, "items_per_second");
            if (items > 0) x.bytes_per_record = counter(r, "bytes_per_second") / items;
        }
    }

    void Finalize() override {
        std::ostream& out = GetOutputStream();
        char line[200];
        out << "\nSummary (" << data.events.size() << " events per paper and compact trace, " << data.heap64_events.size()
            << " per heap64 trace; MB = 10^6 bytes; "
            << "fastest repetition of each; ratio = generated time / hand-written time;\n"
            << "'beyond I/O' subtracts the io-only time from both; "
            << "read = Reader::next() loop, visit = Reader::visit())\n";
        std::snprintf(line, sizeof line, "%-6s %-14s | %14s %9s | %14s %9s | %7s %11s\n", "op", "encoding", "generated rec/s",
                      "MB/s", "hand rec/s", "MB/s", "ratio", "beyond I/O");
        out << line;
        struct Row {
            const char* label;
            const char* op;
            const char* generated;
        };
        for (const Row& row : {Row{"write", "write", "generated"}, Row{"read", "read", "generated"},
                               Row{"visit", "read", "generated-visit"}}) {
            for (const Encoding e : all_encodings) {
                const char* enc = encoding_name(e);
                const std::string base = std::string(row.op) + "/" + enc + "/";
                const Result* g = find(base + row.generated);
                const Result* h = find(base + "hand-written");
                const Result* io = find(base + "io-only");
                if (!g || !h) continue;
                const double n = static_cast<double>(data.events_of(e).size());
                const double tg = g->seconds, th = h->seconds;
                char beyond[32] = "-";
                if (io && th > io->seconds) std::snprintf(beyond, sizeof beyond, "%.2f", (tg - io->seconds) / (th - io->seconds));
                std::snprintf(line, sizeof line, "%-6s %-14s | %14.3e %9.1f | %14.3e %9.1f | %7.2f %11s\n", row.label, enc, n / tg,
                              n * g->bytes_per_record / tg / 1e6, n / th, n * h->bytes_per_record / th / 1e6, tg / th, beyond);
                out << line;
            }
        }
        ConsoleReporter::Finalize();
    }

private:
    struct Result {
        double seconds = 0;  // per trace
        double bytes_per_record = 0;
    };
    static double counter(const Run& r, const char* name) {
        const auto it = r.counters.find(name);
        return it == r.counters.end() ? 0.0 : static_cast<double>(it->second);
    }
    const Result* find(const std::string& name) const {
        const auto it = results_.find(name);
        return it == results_.end() || it->second.seconds <= 0 ? nullptr : &it->second;
    }
    std::map<std::string, Result> results_;
};

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    try {
        setup();
    } catch (const std::exception& e) {
        give_up(std::string("setup failed: ") + e.what());
    }
    register_encoding<Encoding::paper>();
    register_encoding<Encoding::compact>();
    register_encoding<Encoding::heap64>();
    register_encoding<Encoding::heap64_compact>();
    RatioReporter reporter(isatty(fileno(stdout)) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                  : benchmark::ConsoleReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    cleanup();
    return 0;
}
