// A program for the heap tracer's tests: threads run a fixed mix of
// allocator calls (every realloc outcome, calloc, the aligned allocators),
// note the HATF records each call must produce in arrays allocated before
// they start, then print them: "E PID TID RECORD SIZE ADDRESS NEWADDRESS".
// heaptrace_check finds them in the trace.
//
// Usage: heaptrace_workload THREADS ITERATIONS [fork | quick-exit | close-trace | steal-trace FILE]
// quick-exit ends with _exit(), which skips the tracer's exit flush.
// close-trace closes the trace's descriptor, as a program that closes every
// descriptor it did not open would, then runs as many iterations again.
// steal-trace puts FILE (made empty) at the trace's descriptor number, writes
// lines to it before and after as many iterations again, and closes it.
#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace {

enum Record { alloc, free_, realloc_no_alloc, realloc_alloc_free, realloc_alloc, realloc_free };
const char* const names[] = {"alloc", "free", "reallocNoAlloc", "reallocAllocFree", "reallocAlloc", "reallocFree"};

struct Expected {
    Record record;
    std::size_t size;
    std::uintptr_t address;
    std::uintptr_t new_address;
};

// One thread's notes, sized before the thread starts so noting allocates nothing.
struct Notes {
    pid_t tid = 0;
    std::size_t count = 0;
    std::size_t iterations = 0;
    Expected* items = nullptr;

    void add(Record r, std::size_t size, std::uintptr_t a, std::uintptr_t b = 0) { items[count++] = {r, size, a, b}; }
    void add(Record r, std::size_t size, const void* a) { add(r, size, address(a)); }

    // Taken before a pointer is freed: its value is noted, never used again.
    static std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
};

// Keeps the compiler from removing an allocation it can see is unused.
void escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

void noted_realloc(Notes& n, void*& p, std::size_t size) {
    const std::uintptr_t old = Notes::address(p);
    p = std::realloc(p, size);
    escape(p);
    const std::uintptr_t now = Notes::address(p);
    if (now == old) {
        n.add(realloc_no_alloc, size, old, now);
    } else {
        n.add(realloc_alloc_free, size, old, now);
        n.add(alloc, size, now);
        n.add(free_, 0, old);
    }
}

void noted_free(Notes& n, void* p) {
    if (p) n.add(free_, 0, p);
    std::free(p);
}

// The records one iteration notes: at most 24.
constexpr std::size_t per_iteration = 24;

void iteration(Notes& n, std::size_t i) {
    const std::size_t small = 16 + i % 200;
    void* p = std::malloc(small);
    escape(p);
    n.add(alloc, small, p);
    void* q = std::calloc(3, 8 + i % 50);
    escape(q);
    n.add(alloc, 3 * (8 + i % 50), q);
    noted_realloc(n, p, small + 8 * (i % 7));  // often in place
    noted_realloc(n, p, 4096 + i);             // usually moves
    void* a = std::aligned_alloc(64, 128);
    escape(a);
    n.add(alloc, 128, a);
    void* b = nullptr;
    if (posix_memalign(&b, 32, 100) == 0) n.add(alloc, 100, b);
    void* m = memalign(128, 50);
    escape(m);
    n.add(alloc, 50, m);
    // realloc(NULL, n): reallocAlloc, then alloc. Through a volatile, or the
    // compiler calls malloc instead.
    void* volatile null = nullptr;
    void* r = std::realloc(null, 40);
    escape(r);
    const std::uintptr_t r_address = Notes::address(r);
    n.add(realloc_alloc, 40, 0, r_address);
    n.add(alloc, 40, r_address);
    void* gone = std::realloc(r, 0);  // glibc frees: reallocFree, then free
    escape(gone);
    n.add(realloc_free, 0, r_address);
    n.add(free_, 0, r_address);
    std::free(nullptr);  // records nothing
    if (i % 100 == 0) {
        void* v = valloc(1000);
        escape(v);
        n.add(alloc, 1000, v);
        noted_free(n, v);
    }
    for (void* x : {q, p, a, b, m}) noted_free(n, x);
}

void* run(void* arg) {
    auto& n = *static_cast<Notes*>(arg);
    n.tid = gettid();
    for (std::size_t i = 0; i < n.iterations; ++i) iteration(n, i);
    return nullptr;
}

Notes make_notes(std::size_t iterations) {
    Notes n;
    n.iterations = iterations;
    n.items = static_cast<Expected*>(std::malloc(iterations * per_iteration * sizeof(Expected)));
    return n;
}

void print(const Notes& n) {
    for (std::size_t k = 0; k < n.count; ++k) {
        const Expected& e = n.items[k];
        std::printf("E %d %d %s %zu %ju %ju\n", getpid(), n.tid, names[e.record], e.size,
                    static_cast<std::uintmax_t>(e.address), static_cast<std::uintmax_t>(e.new_address));
    }
}

// The child: a few calls of its own on its one thread, printed before it exits.
void forked_child(std::size_t iterations) {
    Notes n = make_notes(iterations);
    run(&n);
    std::printf("C %d\n", getpid());
    print(n);
    std::exit(0);  // exit(): the child's trace is finished by the tracer's destructor
}

// The descriptor of the tracer's temporary file (a link in /proc/self/fd
// to a name ending in ".partial"), or -1.
int trace_descriptor() {
    DIR* fds = opendir("/proc/self/fd");
    int found = -1;
    while (const dirent* d = fds ? readdir(fds) : nullptr) {
        char target[4096];
        const ssize_t n = readlinkat(dirfd(fds), d->d_name, target, sizeof target - 1);
        if (n > 8 && std::memcmp(target + n - 8, ".partial", 8) == 0) found = std::atoi(d->d_name);
    }
    if (fds) closedir(fds);
    return found;
}

void say_to(int fd, const char* text) {
    if (write(fd, text, std::strlen(text)) != static_cast<ssize_t>(std::strlen(text))) std::exit(3);
}

// close-trace and steal-trace: the trace's descriptor goes (or becomes the
// program's file), then the main thread runs `more` (printed with the rest).
void interfere(const char* mode, const char* file, Notes& more) {
    const int fd = trace_descriptor();
    if (fd < 0) {
        std::fprintf(stderr, "heaptrace_workload: no trace descriptor found\n");
        std::exit(1);
    }
    if (std::strcmp(mode, "close-trace") == 0) {
        close(fd);
        run(&more);
        return;
    }
    const int own = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (own < 0 || dup2(own, fd) != fd) std::exit(1);
    close(own);
    say_to(fd, "before\n");
    run(&more);
    say_to(fd, "after\n");
    close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: heaptrace_workload THREADS ITERATIONS [fork | quick-exit]\n");
        return 2;
    }
    const auto threads = static_cast<std::size_t>(std::atoi(argv[1]));
    const auto iterations = static_cast<std::size_t>(std::atoi(argv[2]));
    const bool fork_too = argc > 3 && std::strcmp(argv[3], "fork") == 0;
    const bool quick_exit = argc > 3 && std::strcmp(argv[3], "quick-exit") == 0;
    const bool close_trace = argc > 3 && std::strcmp(argv[3], "close-trace") == 0;
    const bool steal_trace = argc > 4 && std::strcmp(argv[3], "steal-trace") == 0;

    Notes* notes = static_cast<Notes*>(std::calloc(threads + 1, sizeof(Notes)));
    for (std::size_t t = 0; t <= threads; ++t) notes[t] = make_notes(iterations);
    pthread_t* ids = static_cast<pthread_t*>(std::calloc(threads + 1, sizeof(pthread_t)));
    for (std::size_t t = 1; t <= threads; ++t) pthread_create(&ids[t], nullptr, run, &notes[t]);
    run(&notes[0]);  // the main thread takes part
    for (std::size_t t = 1; t <= threads; ++t) pthread_join(ids[t], nullptr);
    Notes more = make_notes(close_trace || steal_trace ? iterations : 0);
    if (close_trace || steal_trace) interfere(argv[3], argc > 4 ? argv[4] : nullptr, more);

    if (fork_too) {
        std::fflush(stdout);
        const pid_t child = fork();
        if (child == 0) forked_child(iterations);
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    }
    std::printf("P %d\n", getpid());
    for (std::size_t t = 0; t <= threads; ++t) print(notes[t]);
    print(more);
    if (quick_exit) {
        std::fflush(stdout);
        _exit(0);
    }
    return 0;
}
