// A known sequence of file I/O for metatf-iotrace's tests, in the main
// thread, a second thread and a forked child. Each operation is noted on
// stdout as the line the checker expects from the trace:
//   PID TID open FD SIZE FLAGS NAME | close FD SIZE | read|write FD OFFSET SIZE
//   truncate|extend OLD NEW | link|unlink COUNT | fcntl FD CMD ARG
// stdout is a pipe, which the tracer does not trace.
#include <fcntl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

std::mutex mutex;
std::string notes;

void note(const std::string& line) {
    std::lock_guard lock(mutex);
    notes += std::to_string(::getpid()) + " " + std::to_string(::gettid()) + " " + line + "\n";
}

std::string s(long v) { return std::to_string(v); }

void check(bool ok, const char* what) {
    if (!ok) {
        std::perror(what);
        std::exit(1);
    }
}

void work(const std::string& tag) {
    char buf[512] = {};
    const std::string dat = "w_" + tag + ".dat", lnk = "w_" + tag + ".lnk", txt = "w_" + tag + ".txt";
    const int fd = ::open(dat.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "open");
    note("open " + s(fd) + " 0 26 " + dat);  // 0x02 | 0x08 | 0x10
    check(::write(fd, buf, 100) == 100, "write");
    note("write " + s(fd) + " 0 100");
    check(::pwrite(fd, buf, 50, 200) == 50, "pwrite");
    note("write " + s(fd) + " 200 50");
    check(::lseek(fd, 10, SEEK_SET) == 10, "lseek");
    check(::read(fd, buf, 30) == 30, "read");
    note("read " + s(fd) + " 10 30");
    check(::pread(fd, buf, 20, 5) == 20, "pread");
    note("read " + s(fd) + " 5 20");
    iovec out[2] = {{buf, 7}, {buf + 7, 9}};
    check(::writev(fd, out, 2) == 16, "writev");
    note("write " + s(fd) + " 40 16");
    check(::lseek(fd, 0, SEEK_SET) == 0, "lseek");
    iovec in[2] = {{buf, 10}, {buf + 10, 10}};
    check(::readv(fd, in, 2) == 20, "readv");
    note("read " + s(fd) + " 0 20");
    check(::ftruncate(fd, 120) == 0, "ftruncate");
    note("truncate 250 120");
    check(::ftruncate(fd, 300) == 0, "ftruncate");
    note("extend 120 300");
    check(::fcntl(fd, F_SETFD, FD_CLOEXEC) == 0, "fcntl");
    note("fcntl " + s(fd) + " " + s(F_SETFD) + " 1");
    check(::link(dat.c_str(), lnk.c_str()) == 0, "link");
    note("link 2");
    check(::unlink(lnk.c_str()) == 0, "unlink");
    note("unlink 1");
    check(::close(fd) == 0, "close");
    note("close " + s(fd) + " 300");
    std::FILE* f = std::fopen(txt.c_str(), "w");
    check(f != nullptr, "fopen");
    const int ffd = ::fileno(f);
    note("open " + s(ffd) + " 0 28 " + txt);  // 0x04 | 0x08 | 0x10
    check(std::fwrite(buf, 1, 64, f) == 64, "fwrite");
    note("write " + s(ffd) + " 0 64");
    check(std::fclose(f) == 0, "fclose");
    note("close " + s(ffd) + " 64");
    check(::unlink(txt.c_str()) == 0, "unlink");
    note("unlink 0");
    check(::unlink(dat.c_str()) == 0, "unlink");
    note("unlink 0");
}

}  // namespace

int main() {
    work("main");
    std::thread t([] { work("thread"); });
    t.join();
    std::fputs(notes.c_str(), stdout);
    std::fflush(stdout);
    notes.clear();
    const pid_t pid = ::fork();
    check(pid >= 0, "fork");
    if (pid == 0) {
        work("child");
        std::fputs(notes.c_str(), stdout);
        std::exit(0);
    }
    int status = 0;
    check(::waitpid(pid, &status, 0) == pid, "waitpid");
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
