// Compares heap traces with what heaptrace_workload says it did (docs/tracers.md).
//
// Usage: heaptrace_check NOTES PATTERN [--threads] [--time] [--no-fork] [--live]
//        heaptrace_check --marks TRACE
//   NOTES    the workload's standard output
//   PATTERN  the trace path given to metatf-heaptrace (%p the pid; a child's
//            trace without %p is PATTERN.PID)
//   --threads  each noted thread's records appear in order among its own
//              records, which start with createThread; a thread that exited
//              ends with destroyThread
//   --time     times never decrease within a thread
//   --no-fork  the child wrote no trace
//   --live     (one thread) every free and realloc names a block allocated before
// Without --threads, all of a process's notes appear in order in its trace.
// --marks prints, for each size from 40000 to 40099 (exec_workload's marks),
// "SIZE: N allocs, M frees" (the frees of those blocks).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <hatf10.hpp>

namespace {

struct Item {
    std::string record;
    std::uint64_t size = 0, address = 0, new_address = 0, time = 0;
    bool operator==(const Item& o) const {
        return std::tie(record, size, address, new_address) == std::tie(o.record, o.size, o.address, o.new_address);
    }
};

using Threads = std::map<std::uint64_t, std::vector<Item>>;  // by thread id

struct Notes {
    std::map<long, Threads> processes;  // by pid
    long parent = 0;
    std::set<long> children;
};

struct Options {
    bool threads = false, time = false, no_fork = false, live = false;
};

int failures = 0;

void fail(const std::string& what) {
    std::cerr << "heaptrace_check: " << what << "\n";
    ++failures;
}

Notes read_notes(const std::string& path) {
    std::ifstream in(path);
    Notes n;
    for (std::string line; std::getline(in, line);) {
        std::istringstream s(line);
        std::string kind;
        s >> kind;
        if (kind == "P") s >> n.parent;
        if (kind == "C") {
            long pid = 0;
            s >> pid;
            n.children.insert(pid);
        }
        if (kind != "E") continue;
        long pid = 0;
        std::uint64_t tid = 0;
        Item item;
        s >> pid >> tid >> item.record >> item.size >> item.address >> item.new_address;
        n.processes[pid][tid].push_back(item);
    }
    return n;
}

std::string trace_path(const std::string& pattern, long pid, bool child) {
    std::string path = pattern;
    if (child && path.find("%p") == std::string::npos) path += ".%p";
    for (auto at = path.find("%p"); at != std::string::npos; at = path.find("%p")) path.replace(at, 2, std::to_string(pid));
    return path;
}

// Every record of a trace, by thread (0 when threads are not recorded).
Threads read_trace(const std::string& path) {
    using hatf10::RecordType;
    hatf10::Reader r(path);
    Threads t;
    while (r.next()) {
        Item i;
        std::uint64_t thread = 0;
        const auto realloc_item = [&](const auto& x, const char* name) {
            i = {name, x.size, x.oldAddress, x.newAddress, x.time};
            thread = x.thread;
        };
        switch (r.type()) {
            case RecordType::Alloc: {
                const auto& x = r.get<hatf10::Alloc>();
                i = {"alloc", x.size, x.address, 0, x.time};
                thread = x.thread;
                break;
            }
            case RecordType::Free: {
                const auto& x = r.get<hatf10::Free>();
                i = {"free", 0, x.address, 0, x.time};
                thread = x.thread;
                break;
            }
            case RecordType::ReallocNoAlloc: realloc_item(r.get<hatf10::ReallocNoAlloc>(), "reallocNoAlloc"); break;
            case RecordType::ReallocAllocFree: realloc_item(r.get<hatf10::ReallocAllocFree>(), "reallocAllocFree"); break;
            case RecordType::ReallocAlloc: realloc_item(r.get<hatf10::ReallocAlloc>(), "reallocAlloc"); break;
            case RecordType::ReallocFree: realloc_item(r.get<hatf10::ReallocFree>(), "reallocFree"); break;
            case RecordType::CreateThread: {
                const auto& x = r.get<hatf10::CreateThread>();
                i = {"createThread", 0, 0, 0, x.time};
                thread = x.thread;
                break;
            }
            case RecordType::DestroyThread: {
                const auto& x = r.get<hatf10::DestroyThread>();
                i = {"destroyThread", 0, 0, 0, x.time};
                thread = x.thread;
                break;
            }
            default: continue;
        }
        t[thread].push_back(i);
    }
    return t;
}

// Whether `want` appears in order within `have` (the tracer also sees the
// allocations of the C library and of the workload's own bookkeeping).
bool in_order(const std::vector<Item>& want, const std::vector<Item>& have, std::size_t& missing_at) {
    std::size_t k = 0;
    for (const Item& h : have) {
        if (k < want.size() && h == want[k]) ++k;
    }
    missing_at = k;
    return k == want.size();
}

void check_thread(const std::string& where, const std::vector<Item>& want, const std::vector<Item>& have, const Options& o) {
    std::size_t at = 0;
    if (!in_order(want, have, at)) {
        const Item& w = want[at];
        fail(where + ": noted record " + std::to_string(at) + " of " + std::to_string(want.size()) + " (" + w.record + " " +
             std::to_string(w.size) + " " + std::to_string(w.address) + " " + std::to_string(w.new_address) +
             ") is not in the trace in order");
    }
    if (o.threads && (have.empty() || have.front().record != "createThread")) fail(where + ": does not start with createThread");
    for (std::size_t i = 1; o.time && i < have.size(); ++i) {
        if (have[i].time < have[i - 1].time) fail(where + ": time goes back at record " + std::to_string(i));
    }
}

// One thread's trace: every free and realloc names a live block.
void check_live(const std::string& where, const std::vector<Item>& have) {
    std::set<std::uint64_t> live;
    for (const Item& i : have) {
        if (i.record == "alloc") live.insert(i.address);
        if (i.record == "free" && live.erase(i.address) == 0) fail(where + ": free of a block not allocated: " + std::to_string(i.address));
    }
}

void check_process(const Notes& notes, long pid, const std::string& pattern, const Options& o) {
    const bool child = notes.children.count(pid) != 0;
    const std::string path = trace_path(pattern, pid, child);
    if (child && o.no_fork) {
        if (std::filesystem::exists(path)) fail(path + ": a --no-fork child wrote a trace");
        return;
    }
    const Threads trace = read_trace(path);
    std::size_t records = 0;
    for (const auto& [tid, items] : notes.processes.at(pid)) {
        const std::uint64_t thread = o.threads ? tid : 0;
        const std::string where = path + ": thread " + std::to_string(tid);
        const auto it = trace.find(thread);
        if (it == trace.end()) {
            fail(where + ": no records");
            continue;
        }
        check_thread(where, items, it->second, o);
        // Threads other than the main one exited before the end of the trace.
        if (o.threads && static_cast<long>(tid) != pid && it->second.back().record != "destroyThread") {
            fail(where + ": does not end with destroyThread");
        }
        if (o.live && !child) check_live(where, it->second);
        records += items.size();
    }
    std::cout << path << ": " << notes.processes.at(pid).size() << " threads, " << records << " noted records found\n";
}

void print_marks(const std::string& path) {
    std::map<std::uint64_t, std::pair<int, int>> counts;  // by size
    std::map<std::uint64_t, std::uint64_t> live;          // address -> size
    for (const auto& [thread, items] : read_trace(path)) {
        for (const Item& i : items) {
            if (i.record == "alloc" && i.size >= 40000 && i.size < 40100) {
                ++counts[i.size].first;
                live[i.address] = i.size;
            } else if (i.record == "free" && live.count(i.address)) {
                ++counts[live[i.address]].second;
                live.erase(i.address);
            }
        }
    }
    for (const auto& [size, n] : counts) std::cout << size << ": " << n.first << " allocs, " << n.second << " frees\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--marks") {
        try {
            print_marks(argv[2]);
            return 0;
        } catch (const std::exception& e) {
            std::cerr << "heaptrace_check: " << e.what() << "\n";
            return 1;
        }
    }
    if (argc < 3) {
        std::cerr << "usage: heaptrace_check NOTES PATTERN [--threads] [--time] [--no-fork] [--live]\n";
        return 2;
    }
    Options o;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        o.threads |= a == "--threads";
        o.time |= a == "--time";
        o.no_fork |= a == "--no-fork";
        o.live |= a == "--live";
    }
    try {
        const Notes notes = read_notes(argv[1]);
        if (notes.parent == 0 || notes.processes.empty()) fail(std::string(argv[1]) + ": no notes from the workload");
        for (const auto& [pid, threads] : notes.processes) check_process(notes, pid, argv[2], o);
    } catch (const std::exception& e) {
        fail(e.what());
    }
    return failures == 0 ? 0 : 1;
}
