// Compares CHARISMA traces of iotrace_workload with its notes (workload.cpp),
// event by event per thread, for the files whose names start with "w_".
// Also: every readWrite ends no earlier than it starts, and each thread's
// records start with clientJoin.
//
// Usage: iotrace_check NOTES PATTERN   (PATTERN: the trace path, %p the pid)
//        iotrace_check --marks TRACE
// --marks prints, for each file named "stage*" that the trace opens
// (exec_workload's marks), "NAME: N opens, N writes of B bytes, N closes".
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <charisma.hpp>

namespace {

using Lines = std::map<std::uint64_t, std::vector<std::string>>;  // by thread

int failures = 0;

void fail(const std::string& what) {
    std::cerr << "iotrace_check: " << what << "\n";
    ++failures;
}

std::string text(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

Lines read_trace(const std::string& path) {
    using charisma::RecordType;
    charisma::Reader r(path);
    Lines lines;
    std::set<std::uint64_t> files;                 // ids of w_ files
    std::map<std::uint64_t, bool> open_fds;        // descriptor -> a w_ file
    std::set<std::uint64_t> joined;
    const auto add = [&](std::uint64_t tid, const std::string& line) {
        if (!joined.count(tid)) fail(path + ": thread " + std::to_string(tid) + " has records before clientJoin");
        lines[tid].push_back(line);
    };
    while (r.next()) {
        switch (r.type()) {
            case RecordType::ClientJoin: joined.insert(r.get<charisma::ClientJoin>().clientId); break;
            case RecordType::ClientOpen: {
                const auto& o = r.get<charisma::ClientOpen>();
                const std::string name = text(o.name);
                const bool ours = name.starts_with("w_");
                open_fds[o.fileDesc] = ours;
                if (!ours) break;
                files.insert(o.fileId);
                add(o.clientId, "open " + std::to_string(o.fileDesc) + " " + std::to_string(o.fileSize) + " " +
                                    std::to_string(o.openFlags) + " " + name);
                break;
            }
            case RecordType::ClientClose: {
                const auto& c = r.get<charisma::ClientClose>();
                if (open_fds[c.fileDesc]) add(c.clientId, "close " + std::to_string(c.fileDesc) + " " + std::to_string(c.fileSize));
                open_fds.erase(c.fileDesc);
                break;
            }
            case RecordType::ReadWrite: {
                const auto& w = r.get<charisma::ReadWrite>();
                if (!open_fds[w.fileDesc]) break;
                if (w.numClients != 1 || w.numClients_items.size() != 1) {
                    fail(path + ": a readWrite with " + std::to_string(w.numClients) + " requests");
                    break;
                }
                if (w.endTime < w.startTime) fail(path + ": a readWrite ends before it starts");
                const auto& q = w.numClients_items[0];
                const bool write = (w.operationType & 0x02) != 0;
                if ((w.operationType & ~0x02u) != 0x04) fail(path + ": operationType " + std::to_string(w.operationType));
                add(q.ioRequest_clientId, std::string(write ? "write " : "read ") + std::to_string(w.fileDesc) + " " +
                                              std::to_string(q.ioRequest_offset) + " " + std::to_string(q.ioRequest_ioSize));
                break;
            }
            case RecordType::Truncate:
            case RecordType::Extend: {
                const bool grow = r.type() == RecordType::Extend;
                const auto [client, id, from, to] =
                    grow ? std::tuple{r.get<charisma::Extend>().clientId, r.get<charisma::Extend>().fileId,
                                      r.get<charisma::Extend>().originalSize, r.get<charisma::Extend>().newSize}
                         : std::tuple{r.get<charisma::Truncate>().clientId, r.get<charisma::Truncate>().fileId,
                                      r.get<charisma::Truncate>().originalSize, r.get<charisma::Truncate>().newSize};
                if (files.count(id)) add(client, std::string(grow ? "extend " : "truncate ") + std::to_string(from) + " " + std::to_string(to));
                break;
            }
            case RecordType::Link: {
                const auto& l = r.get<charisma::Link>();
                if (files.count(l.fileId)) add(l.clientId, "link " + std::to_string(l.newLinkCount));
                break;
            }
            case RecordType::Unlink: {
                const auto& l = r.get<charisma::Unlink>();
                if (files.count(l.fileId)) add(l.clientId, "unlink " + std::to_string(l.newLinkCount));
                break;
            }
            case RecordType::Fcntl: {
                const auto& f = r.get<charisma::Fcntl>();
                if (open_fds[f.fileDesc]) {
                    add(f.clientId, "fcntl " + std::to_string(f.fileDesc) + " " + std::to_string(f.request) + " " + std::to_string(f.arg));
                }
                break;
            }
            default: break;
        }
    }
    return lines;
}

struct Marks {
    int opens = 0, writes = 0, closes = 0;
    std::uint64_t bytes = 0;
};

void print_marks(const std::string& path) {
    using charisma::RecordType;
    charisma::Reader r(path);
    std::map<std::string, Marks> marks;
    std::map<std::uint64_t, std::string> open_fds;  // descriptor -> a stage file's name
    while (r.next()) {
        if (r.type() == RecordType::ClientOpen) {
            const auto& o = r.get<charisma::ClientOpen>();
            const std::string name = text(o.name);
            open_fds.erase(o.fileDesc);
            if (!name.starts_with("stage")) continue;
            open_fds[o.fileDesc] = name;
            ++marks[name].opens;
        } else if (r.type() == RecordType::ReadWrite) {
            const auto& w = r.get<charisma::ReadWrite>();
            const auto it = open_fds.find(w.fileDesc);
            if (it == open_fds.end() || (w.operationType & 0x02) == 0) continue;
            ++marks[it->second].writes;
            for (const auto& q : w.numClients_items) marks[it->second].bytes += q.ioRequest_ioSize;
        } else if (r.type() == RecordType::ClientClose) {
            const auto it = open_fds.find(r.get<charisma::ClientClose>().fileDesc);
            if (it == open_fds.end()) continue;
            ++marks[it->second].closes;
            open_fds.erase(it);
        }
    }
    for (const auto& [name, m] : marks) {
        std::cout << name << ": " << m.opens << " opens, " << m.writes << " writes of " << m.bytes << " bytes, " << m.closes
                  << " closes\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--marks") {
        try {
            print_marks(argv[2]);
            return 0;
        } catch (const std::exception& e) {
            std::cerr << "iotrace_check: " << e.what() << "\n";
            return 1;
        }
    }
    if (argc != 3) {
        std::cerr << "usage: iotrace_check NOTES PATTERN\n";
        return 2;
    }
    std::map<std::string, Lines> noted;  // by pid
    std::ifstream in(argv[1]);
    for (std::string line; std::getline(in, line);) {
        std::istringstream s(line);
        std::string pid;
        std::uint64_t tid = 0;
        s >> pid >> tid;
        std::string rest;
        std::getline(s, rest);
        noted[pid][tid].push_back(rest.substr(1));
    }
    if (noted.size() != 2) fail("expected notes from two processes, got " + std::to_string(noted.size()));
    for (const auto& [pid, want] : noted) {
        std::string path = argv[2];
        path.replace(path.find("%p"), 2, pid);
        Lines have;
        try {
            have = read_trace(path);
        } catch (const std::exception& e) {
            fail(path + ": " + e.what());
            continue;
        }
        for (const auto& [tid, lines] : want) {
            const auto& got = have[tid];
            if (got != lines) {
                std::string g, w;
                for (const auto& l : got) g += "  " + l + "\n";
                for (const auto& l : lines) w += "  " + l + "\n";
                fail(path + ": thread " + std::to_string(tid) + ": trace\n" + g + "notes\n" + w);
            }
        }
        for (const auto& [tid, lines] : have) {
            if (!want.count(tid) && !lines.empty()) fail(path + ": records of an unnoted thread " + std::to_string(tid));
        }
        std::cout << path << ": " << want.size() << " threads as noted\n";
    }
    return failures == 0 ? 0 : 1;
}
