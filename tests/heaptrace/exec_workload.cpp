// A program for both tracers' exec tests (heaptrace_test.cmake,
// iotrace_test.cmake): each stage S leaves marks the checkers count exactly,
// S + 10 blocks of 40000 + S bytes allocated and freed (heaptrace_check
// --marks) and the file DIR/stageS.dat written in S + 1 writes of 10 bytes
// (iotrace_check --marks); then HOW says what comes next. Everything before
// an exec fits in the tracer's first log: nothing is written before it.
//
// Usage: exec_workload DIR STAGE HOW
//   none      nothing: the program ends
//   execve, execv, execvp, execvpe, execl, execle, execlp, fexecve, execveat
//             this program, run by that function as "DIR STAGE+1 none"
//             (the PATH searches with PATH set to this program's directory)
//   thread    a second thread makes the stage's marks and waits; execv
//   missing   execv of a path that does not exist, then stage STAGE+1 here
//   broken    execv of DIR/no-interpreter.sh, whose interpreter does not exist
//             (the test makes it), then stage STAGE+1 here
//   fork      a forked child runs execv; the parent waits
//   vfork     a vfork child runs execv; the parent waits, then stage STAGE+2
// Prints "child PID" for a forked child. Exits 1 when something fails.
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char* dir = nullptr;
std::string self;

[[noreturn]] void die(const char* what) {
    std::perror(what);
    std::exit(1);
}

void escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

void stage(int s) {
    for (int i = 0; i < s + 10; ++i) {
        void* p = std::malloc(static_cast<std::size_t>(40000 + s));
        escape(p);
        std::free(p);
    }
    const std::string file = std::string(dir) + "/stage" + std::to_string(s) + ".dat";
    const int fd = ::open(file.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) die("open");
    for (int i = 0; i <= s; ++i) {
        if (::write(fd, "0123456789", 10) != 10) die("write");
    }
    if (::close(fd) != 0) die("close");
}

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t done = PTHREAD_COND_INITIALIZER;
bool marked = false;

void* mark_and_wait(void* arg) {
    stage(*static_cast<int*>(arg));
    pthread_mutex_lock(&lock);
    marked = true;
    pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
    for (;;) ::pause();
}

// The next stage, run by `how`; returns only when the exec failed.
void run_next(const std::string& how, int next) {
    const std::string n = std::to_string(next);
    const char* base = std::strrchr(self.c_str(), '/') + 1;
    char* const argv[] = {const_cast<char*>(self.c_str()), const_cast<char*>(dir), const_cast<char*>(n.c_str()),
                          const_cast<char*>("none"), nullptr};
    char* const search[] = {const_cast<char*>(base), argv[1], argv[2], argv[3], nullptr};
    if (how == "execvp" || how == "execvpe" || how == "execlp") {
        ::setenv("PATH", self.substr(0, self.size() - std::strlen(base) - 1).c_str(), 1);
    }
    if (how == "execve") ::execve(argv[0], argv, environ);
    if (how == "execv") ::execv(argv[0], argv);
    if (how == "execvp") ::execvp(base, search);
    if (how == "execvpe") ::execvpe(base, search, environ);
    if (how == "execl") ::execl(argv[0], argv[0], dir, n.c_str(), "none", nullptr);
    if (how == "execle") ::execle(argv[0], argv[0], dir, n.c_str(), "none", nullptr, environ);
    if (how == "execlp") ::execlp(base, base, dir, n.c_str(), "none", nullptr);
    if (how == "fexecve") ::fexecve(::open(argv[0], O_RDONLY | O_CLOEXEC), argv, environ);
    if (how == "execveat") ::execveat(AT_FDCWD, argv[0], argv, environ, 0);
}

int wait_for(pid_t child) {
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) die("wait");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: exec_workload DIR STAGE HOW\n");
        return 2;
    }
    dir = argv[1];
    const int s = std::atoi(argv[2]);
    const std::string how = argv[3];
    char exe[4096];
    const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) die("readlink");
    self.assign(exe, static_cast<std::size_t>(len));
    if (how == "none") {
        stage(s);
        return 0;
    }
    if (how == "thread") {
        pthread_t t;
        int stage_of_thread = s;
        pthread_create(&t, nullptr, mark_and_wait, &stage_of_thread);
        pthread_mutex_lock(&lock);
        while (!marked) pthread_cond_wait(&done, &lock);
        pthread_mutex_unlock(&lock);
        run_next("execv", s + 1);
        die("execv");
    }
    stage(s);
    if (how == "missing" || how == "broken") {
        const std::string path = how == "missing" ? "/nonexistent/program" : std::string(dir) + "/no-interpreter.sh";
        errno = 0;
        if (::execv(path.c_str(), argv) != -1 || errno != ENOENT) die("execv did not fail with ENOENT");
        stage(s + 1);
        return 0;
    }
    if (how == "fork" || how == "vfork") {
        // Made before: a vfork child only execs.
        const std::string n = std::to_string(s + 1);
        char* const next[] = {const_cast<char*>(self.c_str()), argv[1], const_cast<char*>(n.c_str()),
                              const_cast<char*>("none"), nullptr};
        const pid_t child = how == "fork" ? ::fork() : ::vfork();
        if (child == 0) {
            ::execv(next[0], next);
            ::_exit(127);
        }
        std::printf("child %d\n", child);
        if (wait_for(child) != 0) return 1;
        if (how == "vfork") stage(s + 2);
        return 0;
    }
    run_next(how, s + 1);
    die(how.c_str());
}
