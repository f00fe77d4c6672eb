// The exec family, wrapped (docs/tracers.md, "exec"): the trace of the
// image that execs is finished first, so that its events are not lost with
// it, and the new image is told which trace it starts. Compiled into each
// tracer's library (the static recorder's symbols are not exported).
//
// posix_spawn(), system() and popen() are not wrapped: glibc's own exec runs
// in a new process there, and the caller's trace goes on.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "recorder.hpp"

namespace {

using metatf::tracing::Inside;

using Execve = int (*)(const char*, char* const[], char* const[]);
using Fexecve = int (*)(int, char* const[], char* const[]);
using Execveat = int (*)(int, const char*, char* const[], char* const[], int);

struct Real {
    Execve execve, execvpe;
    Fexecve fexecve;
    Execveat execveat;
};

// glibc's functions, found once with the guard set (dlsym allocates).
const Real& real() {
    static const Real r = [] {
        Inside guard;
        return Real{reinterpret_cast<Execve>(::dlsym(RTLD_NEXT, "execve")),
                    reinterpret_cast<Execve>(::dlsym(RTLD_NEXT, "execvpe")),
                    reinterpret_cast<Fexecve>(::dlsym(RTLD_NEXT, "fexecve")),
                    reinterpret_cast<Execveat>(::dlsym(RTLD_NEXT, "execveat"))};
    }();
    return r;
}

// Before main: a vfork child must not be the one that runs dlsym.
[[gnu::constructor]] void resolve() { real(); }

// Whether an exec of `path` can get past the kernel's first checks. One that
// cannot (shells try each directory of PATH in turn) leaves the trace alone.
bool runnable(int dirfd, const char* path) {
    struct stat st{};
    return ::fstatat(dirfd, path, &st, 0) == 0 && S_ISREG(st.st_mode) && ::faccessat(dirfd, path, X_OK, AT_EACCESS) == 0;
}

// As execvp() looks for `file`: itself when it holds a slash, else in PATH.
bool found(const char* file) {
    if (std::strchr(file, '/')) return runnable(AT_FDCWD, file);
    const char* path = std::getenv("PATH");
    if (!path) path = "/bin:/usr/bin";  // glibc's default
    for (const char* dir = path;; ++dir) {
        const char* end = ::strchrnul(dir, ':');
        char candidate[PATH_MAX];
        const int n = std::snprintf(candidate, sizeof candidate, "%.*s%s%s", static_cast<int>(end - dir), dir,
                                    end == dir ? "" : "/", file);
        if (n > 0 && std::size_t(n) < sizeof candidate && runnable(AT_FDCWD, candidate)) return true;
        if (*end == '\0') return false;
        dir = end;
    }
}

// `envp` with `entry` in place of any variable of the same name; malloc'd
// (untraced: the guard is set), null when out of memory.
char** with_entry(char* const* envp, const std::string& entry) {
    const std::size_t name = entry.find('=') + 1;
    std::size_t n = 0;
    while (envp && envp[n]) ++n;
    auto** env = static_cast<char**>(std::malloc((n + 2) * sizeof(char*) + entry.size() + 1));
    if (!env) return nullptr;
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (std::strncmp(envp[i], entry.c_str(), name) != 0) env[k++] = envp[i];
    }
    char* text = reinterpret_cast<char*>(env + n + 2);
    std::memcpy(text, entry.c_str(), entry.size() + 1);
    env[k++] = text;
    env[k] = nullptr;
    return env;
}

// Runs `call` with the environment it must pass on. In a vfork child, or
// when `may_run` says the exec cannot succeed, the call is made as it is.
template <typename Check, typename Call>
int traced_exec(Check may_run, char* const* envp, Call call) {
    if (!metatf::tracing::exec_owner() || !may_run()) return call(envp);
    Inside guard;
    const std::string entry = metatf::tracing::exec_begin();
    char** env = with_entry(envp, entry);
    int result = -1;
    if (env) {
        result = call(env);
    } else {
        errno = ENOMEM;
    }
    const int saved = errno;
    std::free(env);
    metatf::tracing::exec_failed();
    errno = saved;
    return result;
}

int exec_path(const char* path, char* const argv[], char* const envp[]) {
    return traced_exec([&] { return runnable(AT_FDCWD, path); }, envp, [&](char* const* env) { return real().execve(path, argv, env); });
}

int exec_search(const char* file, char* const argv[], char* const envp[]) {
    return traced_exec([&] { return found(file); }, envp, [&](char* const* env) { return real().execvpe(file, argv, env); });
}

// execl's arguments, from `first` to the null that ends them.
std::size_t count_args(const char* first, va_list* ap) {
    std::size_t n = 1;
    for (const char* a = first; a; a = va_arg(*ap, const char*)) ++n;
    return n;
}

// Fills argv (count_args() pointers); `ap` is left after the null, where
// execle's envp is.
void fill_args(char** argv, const char* first, va_list* ap) {
    std::size_t i = 0;
    for (const char* a = first; a; a = va_arg(*ap, const char*)) argv[i++] = const_cast<char*>(a);
    argv[i] = nullptr;
}

}  // namespace

// The arguments of execl, execle and execlp as an argv on the stack, as glibc
// builds it: no allocation, so safe in a vfork child. `ap` stays open, after
// the null.
#define STACK_ARGV(argv, ap)                                                           \
    va_list ap;                                                                        \
    va_start(ap, arg);                                                                 \
    const std::size_t argv##_count = count_args(arg, &ap);                             \
    va_end(ap);                                                                        \
    auto** argv = static_cast<char**>(__builtin_alloca(argv##_count * sizeof(char*))); \
    va_start(ap, arg);                                                                 \
    fill_args(argv, arg, &ap)

#define EXPORT [[gnu::visibility("default")]]

extern "C" {

EXPORT int execve(const char* path, char* const argv[], char* const envp[]) { return exec_path(path, argv, envp); }

EXPORT int execv(const char* path, char* const argv[]) { return exec_path(path, argv, environ); }

EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) { return exec_search(file, argv, envp); }

EXPORT int execvp(const char* file, char* const argv[]) { return exec_search(file, argv, environ); }

EXPORT int execl(const char* path, const char* arg, ...) {
    STACK_ARGV(argv, ap);
    va_end(ap);
    return exec_path(path, argv, environ);
}

EXPORT int execle(const char* path, const char* arg, ...) {
    STACK_ARGV(argv, ap);
    char* const* envp = va_arg(ap, char* const*);
    va_end(ap);
    return exec_path(path, argv, envp);
}

EXPORT int execlp(const char* file, const char* arg, ...) {
    STACK_ARGV(argv, ap);
    va_end(ap);
    return exec_search(file, argv, environ);
}

EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
    return traced_exec([] { return true; }, envp, [&](char* const* env) { return real().fexecve(fd, argv, env); });
}

EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
    const auto may_run = [&] { return ((flags & AT_EMPTY_PATH) && path[0] == '\0') || runnable(dirfd, path); };
    return traced_exec(may_run, envp, [&](char* const* env) { return real().execveat(dirfd, path, argv, env, flags); });
}

}  // extern "C"
