// The launchers' common part (launcher.hpp): runs a program with a tracer's
// library preloaded. Options become environment variables the library reads.
#include "launcher.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace metatf::tracing {
namespace {

const Launcher* L = nullptr;

[[noreturn]] void usage_error(const std::string& message) {
    std::cerr << L->program << ": " << message << "\nTry '" << L->program << " --help'.\n";
    std::exit(2);
}

struct Options {
    std::string output = L->default_output;
    std::vector<bool> flags = std::vector<bool>(L->flags.size());
    bool no_fork = false, force = false;
    std::vector<char*> command;
};

// The value of an option that takes one: `--output=X`, or the next argument.
std::string value_of(const std::string& arg, int& i, int argc, char** argv) {
    const auto eq = arg.find('=');
    if (arg.starts_with("--") && eq != std::string::npos) return arg.substr(eq + 1);
    if (i + 1 >= argc) usage_error("option '" + arg + "' needs a value");
    return argv[++i];
}

int flag_index(const std::string& a) {
    for (std::size_t f = 0; f < L->flags.size(); ++f) {
        if (a == L->flags[f].option) return static_cast<int>(f);
    }
    return -1;
}

Options parse(int argc, char** argv) {
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.empty() || a[0] != '-') break;  // the program
        if (a == "-h" || a == "--help") {
            std::cout << L->help;
            std::exit(0);
        } else if (a == "-V" || a == "--version") {
            std::cout << L->program << " " << METATF_VERSION << "\n";
            std::exit(0);
        } else if (a == "-o" || a == "--output" || a.starts_with("--output=")) {
            o.output = value_of(a, i, argc, argv);
        } else if (const int f = flag_index(a); f >= 0) {
            o.flags[std::size_t(f)] = true;
        } else if (a == "--no-fork") {
            o.no_fork = true;
        } else if (a == "-f" || a == "--force") {
            o.force = true;
        } else {
            usage_error("unknown option '" + a + "'");
        }
    }
    for (; i < argc; ++i) o.command.push_back(argv[i]);
    if (o.command.empty()) usage_error("no program to run");
    return o;
}

std::string directory_of_self() {
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return ".";
    const std::string path(self, static_cast<std::size_t>(n));
    return path.substr(0, path.rfind('/'));
}

// Beside the launcher in the build tree; in the library directory once installed.
std::optional<std::string> find_library() {
    const std::string dir = directory_of_self();
    for (const std::string& candidate : {dir + "/" + L->library, dir + "/" + METATF_BIN_TO_LIB + "/" + L->library}) {
        char real[PATH_MAX];
        if (::access(candidate.c_str(), R_OK) == 0 && ::realpath(candidate.c_str(), real)) return std::string(real);
    }
    return std::nullopt;
}

// The trace path, absolute: the traced program may change directory before it writes.
std::string absolute(const std::string& path) {
    if (path.starts_with("/")) return path;
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd)) usage_error(std::string("cannot tell the current directory: ") + std::strerror(errno));
    return std::string(cwd) + "/" + path;
}

void check_output(const Options& o) {
    if (o.output.empty()) usage_error("the output path is empty");
    if (o.output == "-") usage_error("the trace cannot go to standard output, which belongs to the traced program");
    struct stat st{};
    // Without %p the name is known now: refuse before running anything.
    if (o.output.find("%p") == std::string::npos && !o.force && ::stat(o.output.c_str(), &st) == 0) {
        usage_error(o.output + ": exists; use -f (--force) to replace it");
    }
}

void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

void configure(const Options& o, const std::string& library) {
    const char* preload = std::getenv("LD_PRELOAD");
    set("LD_PRELOAD", preload && *preload ? std::string(preload) + ":" + library : library);
    const std::string prefix = L->env_prefix;
    set((prefix + "OUTPUT").c_str(), absolute(o.output));
    for (std::size_t f = 0; f < L->flags.size(); ++f) set((prefix + L->flags[f].env).c_str(), o.flags[f] ? "1" : "0");
    set((prefix + "NO_FORK").c_str(), o.no_fork ? "1" : "0");
    set((prefix + "REPLACE").c_str(), o.force ? "1" : "0");
    // The program is image 0 of this process (exec keeps the pid); a process
    // that inherits this entry through anything but the library's exec
    // wrappers is a descendant, named like a forked child.
    set((prefix + "IMAGE").c_str(), std::to_string(::getpid()) + ":0:0");
}

}  // namespace

int launch(const Launcher& launcher, int argc, char** argv) {
    L = &launcher;
    Options o = parse(argc, argv);
    check_output(o);
    const auto library = find_library();
    if (!library) {
        std::cerr << L->program << ": cannot find " << L->library << " beside " << directory_of_self() << " or in "
                  << directory_of_self() << "/" << METATF_BIN_TO_LIB << "\n";
        return 2;
    }
    // The dynamic loader splits LD_PRELOAD at spaces and colons.
    if (library->find_first_of(" :") != std::string::npos) {
        std::cerr << L->program << ": the library's path " << *library << " holds a space or a colon, which LD_PRELOAD cannot carry\n";
        return 2;
    }
    configure(o, *library);
    o.command.push_back(nullptr);
    ::execvp(o.command[0], o.command.data());
    const int why = errno;
    std::cerr << L->program << ": cannot run " << o.command[0] << ": " << std::strerror(why) << "\n";
    return why == ENOENT ? 127 : 126;
}

}  // namespace metatf::tracing
