// metatf-replay: drives allocators with a HATF 1.0 heap trace
// (docs/replay.md). The trace is read once, into a plan of calls per
// thread (plan.hpp) in temporary files; each allocator replays it in a
// process of its own with its library preloaded (run.hpp), and hands back
// its figures as JSON on a pipe.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <metatf/container/output.hpp>
#include <metatf/core/error.hpp>

#include "plan.hpp"
#include "run.hpp"

namespace {

using nlohmann::json;
using namespace metatf::replay;

constexpr const char* plan_fd_variable = "METATF_REPLAY_PLAN_FD";
constexpr const char* in_memory_variable = "METATF_REPLAY_IN_MEMORY";

const char* const usage = R"(usage: metatf-replay [--allocator LIST] [--json] [--series FILE [--every N] [-f]]
                     [--repeat N] [--strict] [--in-memory] TRACE

Replays the allocator calls of a HATF 1.0 heap trace (metatf-heaptrace's)
under one or more allocators, each in a process of its own, and reports
per allocator the replay's time, the time per call, the RSS it reached and
its page faults (docs/replay.md).

  --allocator LIST  allocators, comma-separated: glibc (the C library's,
                    nothing preloaded), jemalloc, tcmalloc, mimalloc (the
                    Debian packages libjemalloc2, libtcmalloc-minimal4,
                    libmimalloc2.0), or the path of a library that provides
                    malloc; default glibc
  --json            the figures as one JSON object, not a table
  --series FILE     write CSV to FILE: per allocator, the live bytes the
                    trace has and the RSS the replay has every N events
                    (columns allocator,event,live_bytes,rss_bytes; with
                    --repeat, from each allocator's fastest run)
  --every N         the events between two rows of --series (default 10000)
  -f, --force       let --series replace an existing file
  --repeat N        replay N times, the allocators in turn each time, and
                    report the fastest run and the median time (default 1)
  --strict          a trace with records that do not fit the blocks
                    around them (a free of an address never live, an alloc
                    at an address still live) is an error naming the first,
                    and nothing is replayed; without it they are counted,
                    the first 20 named, and frees of nothing left out
  --in-memory       read all of the plan into memory before each replay
                    (the baseline of docs/replay.md) instead of a window
                    at a time; memory then grows with the trace
  --help            this text

The plan of calls goes to temporary files in $TMPDIR (else /tmp), 24 bytes
a call, while memory holds the live blocks and a window of calls.
)";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::vector<std::string> allocators{"glibc"};
    bool json = false, strict = false, in_memory = false, force = false;
    unsigned repeat = 1;
    std::string series;
    std::uint64_t every = 10000;
    std::string trace;
};

// A whole number from `lowest` to `highest`, or a usage error naming the option.
std::uint64_t number(const std::string& option, const std::string& text, std::uint64_t lowest, std::uint64_t highest) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || n < lowest || n > highest) {
        throw UsageError(option + " takes a number from " + std::to_string(lowest) + " to " + std::to_string(highest) + ", not '" + text + "'");
    }
    return n;
}

std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        if (comma == at) throw UsageError("--allocator: an empty name in '" + list + "'");
        out.push_back(list.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help") {
            std::fputs(usage, stdout);
            std::exit(0);
        } else if (a == "--allocator") {
            o.allocators = split_list(value());
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--strict") {
            o.strict = true;
        } else if (a == "--repeat") {
            o.repeat = static_cast<unsigned>(number(a, value(), 1, 1000));
        } else if (a == "--series") {
            o.series = value();
        } else if (a == "--every") {
            o.every = number(a, value(), 1, std::uint64_t{1} << 40);
        } else if (a == "--force" || a == "-f") {
            o.force = true;
        } else if (a == "--in-memory") {
            o.in_memory = true;
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            throw UsageError("unknown option " + a);
        } else if (o.trace.empty()) {
            o.trace = a;
        } else {
            throw UsageError("one trace at a time ('" + o.trace + "' and '" + a + "')");
        }
    }
    if (o.trace.empty()) throw UsageError("no trace given");
    if (o.series.empty() && o.force) throw UsageError("--force is for --series, which is not given");
    return o;
}

// The library to preload for an allocator's name ("" for glibc's own).
std::string library_of(const std::string& allocator) {
    static const std::map<std::string, std::string> known{
        {"glibc", ""}, {"jemalloc", "libjemalloc.so.2"}, {"tcmalloc", "libtcmalloc_minimal.so.4"}, {"mimalloc", "libmimalloc.so.2"}};
    if (const auto it = known.find(allocator); it != known.end()) return it->second;
    if (allocator.find('/') == std::string::npos) {
        throw UsageError("--allocator: '" + allocator + "' is none of glibc, jemalloc, tcmalloc, mimalloc, and not a path");
    }
    struct stat st {};
    if (stat(allocator.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) throw UsageError("--allocator: " + allocator + " is not a file");
    return allocator;
}

// One replay in a child process with `library` preloaded; its JSON.
json replay_in_child(int plan_fd, bool in_memory, const std::string& allocator, const std::string& library) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        if (library.empty()) {
            unsetenv("LD_PRELOAD");
        } else {
            setenv("LD_PRELOAD", library.c_str(), 1);
        }
        setenv(plan_fd_variable, std::to_string(plan_fd).c_str(), 1);
        if (in_memory) setenv(in_memory_variable, "1", 1);
        execl("/proc/self/exe", "metatf-replay", static_cast<char*>(nullptr));
        std::fprintf(stderr, "metatf-replay: cannot run itself again: %s\n", std::strerror(errno));
        _exit(127);
    }
    close(out[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(out[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                     : "failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
        throw std::runtime_error("the replay under " + allocator + " " + how);
    }
    json r = json::parse(text);
    const std::string got = r.at("library");
    if (!library.empty() && got.rfind("libc.so", 0) == 0) {
        throw std::runtime_error("the replay under " + allocator + " still ran glibc's malloc: the dynamic loader did not preload " + library +
                                 " (not installed, or not a library)");
    }
    r["allocator"] = allocator;
    return r;
}

// The child's side: replay the inherited plan and print the figures.
int child(const char* fd_text) {
    const PlanView plan = read_plan_header(std::atoi(fd_text));
    std::cout << to_json(run(plan, std::getenv(in_memory_variable) != nullptr)).dump() << '\n';
    return 0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The run of the fewest seconds among one allocator's repeats.
const json& fastest(const std::vector<json>& runs) {
    return *std::min_element(runs.begin(), runs.end(), [](const json& a, const json& b) { return a.at("seconds") < b.at("seconds"); });
}

json report(const Options& o, const Plan& plan, const std::vector<std::vector<json>>& runs) {
    json misfits = json::array();
    for (const Misfit& m : plan.misfits) misfits.push_back({{"record", m.record}, {"what", m.what}});
    json results = json::array();
    for (const std::vector<json>& per : runs) {
        std::vector<double> seconds;
        for (const json& r : per) seconds.push_back(r.at("seconds"));
        json best = fastest(per);
        best["seconds_median"] = median(seconds);
        best["repeats"] = per.size();
        const double peak = best.at("peak_rss_bytes").get<double>();
        best["overhead"] = plan.peak_live_bytes ? peak / static_cast<double>(plan.peak_live_bytes) : 0.0;
        best.erase("series");
        results.push_back(best);
    }
    return {{"trace", o.trace},
            {"events", plan.events},
            {"threads", plan.threads.size()},
            {"peak_live_bytes", plan.peak_live_bytes},
            {"slots", plan.slots},
            {"misfits", {{"count", plan.misfit_count}, {"first", misfits}}},
            {"reordered", plan.reordered},
            {"results", results}};
}

void print_table(const json& r) {
    std::printf("%s: %llu calls on %zu thread(s), peak live %llu bytes, %llu record(s) that do not fit, %llu reordered\n",
                r["trace"].get<std::string>().c_str(), r["events"].get<unsigned long long>(), r["threads"].get<std::size_t>(),
                r["peak_live_bytes"].get<unsigned long long>(), r["misfits"]["count"].get<unsigned long long>(),
                r["reordered"].get<unsigned long long>());
    for (const json& m : r["misfits"]["first"]) {
        std::printf("  record %llu: %s\n", m["record"].get<unsigned long long>(), m["what"].get<std::string>().c_str());
    }
    std::printf("%-10s %-26s %9s %9s %9s %10s %12s %12s %9s %8s\n", "allocator", "library", "seconds", "malloc ns", "free ns",
                "realloc ns", "peak RSS", "final RSS", "faults", "overhead");
    for (const json& x : r["results"]) {
        const json& ns = x["ns_per_op"];
        std::printf("%-10s %-26s %9.4f %9.1f %9.1f %10.1f %12llu %12llu %9llu %8.2f\n", x["allocator"].get<std::string>().c_str(),
                    x["library"].get<std::string>().c_str(), x["seconds"].get<double>(), ns["malloc"].get<double>(), ns["free"].get<double>(),
                    ns["realloc"].get<double>(), x["peak_rss_bytes"].get<unsigned long long>(),
                    x["final_rss_bytes"].get<unsigned long long>(), x["page_faults"].get<unsigned long long>(), x["overhead"].get<double>());
    }
}

// The CSV of --series: each allocator's fastest run.
void write_series(metatf::rt::OutputFile& out, const Options& o, const Plan& plan, const std::vector<std::vector<json>>& runs) {
    std::string text = "allocator,event,live_bytes,rss_bytes\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const json& best = fastest(runs[i]);
        const json& rss = best.at("series");
        for (std::size_t k = 0; k < plan.series_live.size() && k < rss.size(); ++k) {
            if (plan.series_events[k] == 0) continue;  // after a free left out
            text += o.allocators[i] + ',' + std::to_string(plan.series_events[k]) + ',' + std::to_string(plan.series_live[k]) + ',' +
                    std::to_string(rss[k].get<std::uint64_t>()) + '\n';
        }
    }
    out.write(text.data(), text.size());
    out.commit();
}

// One temporary file a thread of the trace: as many descriptors as the system lets a process have.
void allow_open_files() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == r.rlim_max) return;
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
}

std::string temp_dir() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

int run_main(const Options& o) {
    std::vector<std::string> libraries;
    for (const std::string& a : o.allocators) libraries.push_back(library_of(a));
    // Opened first, so that a file it may not replace is refused before the replay.
    std::unique_ptr<metatf::rt::OutputFile> series;
    if (!o.series.empty()) series = std::make_unique<metatf::rt::OutputFile>(o.series, metatf::rt::OutputOptions{o.force, {o.trace}});
    allow_open_files();
    const Plan plan = make_plan(o.trace, {o.strict, o.series.empty() ? 0 : o.every, temp_dir()});
    // Replay allocates and writes what the trace says: a trace whose blocks
    // could not fit is refused, not left to the kernel's OOM killer.
    const auto memory = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    const std::uint64_t most = std::max(plan.peak_live_bytes, plan.largest_block);
    if (most > memory / 2) {
        throw std::runtime_error("its blocks reach " + std::to_string(most) + " bytes, more than half of this machine's " +
                                 std::to_string(memory) + " bytes of memory");
    }
    const Fd header = write_plan_header(plan);
    std::vector<std::vector<json>> runs(o.allocators.size());
    for (unsigned round = 0; round < o.repeat; ++round) {
        for (std::size_t i = 0; i < o.allocators.size(); ++i) {
            runs[i].push_back(replay_in_child(header.get(), o.in_memory, o.allocators[i], libraries[i]));
        }
    }
    if (series) write_series(*series, o, plan, runs);
    const json r = report(o, plan, runs);
    if (o.json) {
        std::cout << r.dump(2) << '\n';
    } else {
        print_table(r);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (const char* fd = std::getenv(plan_fd_variable)) {
        try {
            return child(fd);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "metatf-replay: %s\n", e.what());
            return 1;
        }
    }
    Options o;
    try {
        o = parse(argc, argv);
        return run_main(o);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "metatf-replay: %s\n%s", e.what(), usage);
        return 2;
    } catch (const metatf::rt::OutputError& e) {
        std::fprintf(stderr, "metatf-replay: %s\n", e.what());
        return 1;
    } catch (const metatf::rt::TraceError& e) {
        std::fprintf(stderr, "metatf-replay: %s: %s\n", o.trace.c_str(), e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "metatf-replay: %s: %s\n", o.trace.c_str(), e.what());
        return 1;
    }
}
