// metatf-replay: drives allocators with a HATF 1.0 heap trace
// (docs/replay.md). The trace is read once, into a plan of calls per
// thread (plan.hpp) in a shared memory file; each allocator replays it in
// a process of its own with its library preloaded (run.hpp), and hands
// back its figures as JSON on a pipe.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <metatf/core/error.hpp>

#include "plan.hpp"
#include "run.hpp"

namespace {

using nlohmann::json;
using namespace metatf::replay;

constexpr const char* plan_fd_variable = "METATF_REPLAY_PLAN_FD";

const char* const usage = R"(usage: metatf-replay [--allocator LIST] [--json] [--repeat N] [--strict] TRACE

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
  --repeat N        replay N times, the allocators in turn each time, and
                    report the fastest run and the median time (default 1)
  --strict          a trace with records that do not fit the blocks
                    around them (a free of an address never live, an alloc
                    at an address still live) is an error naming the first,
                    and nothing is replayed; without it they are counted,
                    the first 20 named, and frees of nothing left out
  --help            this text
)";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::vector<std::string> allocators{"glibc"};
    bool json = false, strict = false;
    unsigned repeat = 1;
    std::string trace;
};

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
            const std::string n = value();
            char* end = nullptr;
            const unsigned long r = std::strtoul(n.c_str(), &end, 10);
            if (n.empty() || *end != '\0' || r < 1 || r > 1000) throw UsageError("--repeat takes a number from 1 to 1000, not '" + n + "'");
            o.repeat = static_cast<unsigned>(r);
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            throw UsageError("unknown option " + a);
        } else if (o.trace.empty()) {
            o.trace = a;
        } else {
            throw UsageError("one trace at a time ('" + o.trace + "' and '" + a + "')");
        }
    }
    if (o.trace.empty()) throw UsageError("no trace given");
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

// A memory file holding the plan, inherited by the children.
int plan_file(const Plan& plan) {
    const int fd = memfd_create("metatf-replay-plan", 0);
    if (fd < 0) throw std::runtime_error(std::string("cannot make the plan's memory file: ") + std::strerror(errno));
    write_plan(fd, plan);
    return fd;
}

// One replay in a child process with `library` preloaded; its JSON.
json replay_in_child(int plan_fd, const std::string& allocator, const std::string& library) {
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
    const int fd = std::atoi(fd_text);
    struct stat st {};
    if (fstat(fd, &st) != 0) throw std::runtime_error("the plan's memory file is gone");
    const auto size = static_cast<std::size_t>(st.st_size);
    void* p = mmap(nullptr, std::max<std::size_t>(size, 1), PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) throw std::runtime_error(std::string("cannot map the plan: ") + std::strerror(errno));
    const PlanView plan = from_bytes({static_cast<const std::byte*>(p), size});
    std::cout << to_json(run(plan)).dump() << '\n';
    return 0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

json report(const Options& o, const Plan& plan, const std::vector<std::vector<json>>& runs) {
    json misfits = json::array();
    for (const Misfit& m : plan.misfits) misfits.push_back({{"record", m.record}, {"what", m.what}});
    json results = json::array();
    for (const std::vector<json>& per : runs) {
        std::vector<double> seconds;
        for (const json& r : per) seconds.push_back(r.at("seconds"));
        json best = *std::min_element(per.begin(), per.end(), [](const json& a, const json& b) { return a.at("seconds") < b.at("seconds"); });
        best["seconds_median"] = median(seconds);
        best["repeats"] = per.size();
        const double peak = best.at("peak_rss_bytes").get<double>();
        best["overhead"] = plan.peak_live_bytes ? peak / static_cast<double>(plan.peak_live_bytes) : 0.0;
        results.push_back(best);
    }
    return {{"trace", o.trace},
            {"events", plan.events},
            {"threads", plan.thread_ids.size()},
            {"peak_live_bytes", plan.peak_live_bytes},
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

int run_main(const Options& o) {
    std::vector<std::string> libraries;
    for (const std::string& a : o.allocators) libraries.push_back(library_of(a));
    const Plan plan = make_plan(o.trace, o.strict);
    // Replay allocates and writes what the trace says: a trace whose blocks
    // could not fit is refused, not left to the kernel's OOM killer.
    const auto memory = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    const std::uint64_t most = std::max(plan.peak_live_bytes, plan.largest_block);
    if (most > memory / 2) {
        throw std::runtime_error("its blocks reach " + std::to_string(most) + " bytes, more than half of this machine's " +
                                 std::to_string(memory) + " bytes of memory");
    }
    const int fd = plan_file(plan);
    std::vector<std::vector<json>> runs(o.allocators.size());
    for (unsigned round = 0; round < o.repeat; ++round) {
        for (std::size_t i = 0; i < o.allocators.size(); ++i) runs[i].push_back(replay_in_child(fd, o.allocators[i], libraries[i]));
    }
    close(fd);
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
    } catch (const metatf::rt::TraceError& e) {
        std::fprintf(stderr, "metatf-replay: %s: %s\n", o.trace.c_str(), e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "metatf-replay: %s: %s\n", o.trace.c_str(), e.what());
        return 1;
    }
}
