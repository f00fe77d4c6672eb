// Writes HATF 1.0 traces for metatf-replay's tests.
//   replay_misfits OUT: records that do not all fit together: record 1
//     frees an address never allocated, record 3 allocates at an address
//     still live, and record 4 reallocates a block never allocated.
//   replay_misfits OUT churn N: N blocks of 64 bytes, each freed before the
//     next is allocated, at 16 addresses in turn: a long trace with one
//     block live, whose replay must not hold memory in proportion to it.
#include <cstdlib>
#include <string>

#include <hatf10.hpp>

int main(int argc, char** argv) {
    using namespace hatf10;
    if (argc == 4 && std::string(argv[2]) == "churn") {
        metatf::rt::WriterOptions options;
        options.compress = 3;  // a small file: its reading is not what is measured
        Writer w(argv[1], options);
        const unsigned long long n = std::strtoull(argv[3], nullptr, 10);
        for (unsigned long long i = 0; i < n; ++i) {
            const std::uint64_t address = 0x10000 + (i % 16) * 0x40;
            w.write(Alloc{.size = 64, .address = address});
            w.write(Free{.address = address});
        }
        w.close();
        return 0;
    }
    if (argc != 2) return 2;
    Writer w(argv[1]);
    w.write(Alloc{.size = 100, .address = 0x1000});                                   // 0
    w.write(Free{.address = 0x9000});                                                 // 1: not live
    w.write(Alloc{.size = 50, .address = 0x2000});                                    // 2
    w.write(Alloc{.size = 70, .address = 0x1000});                                    // 3: still live
    w.write(ReallocNoAlloc{.size = 10, .oldAddress = 0x7000, .newAddress = 0x7000});  // 4: not live
    w.write(Free{.address = 0x1000});                                                 // 5
    w.write(Free{.address = 0x2000});                                                 // 6
    w.close();
    return 0;
}
