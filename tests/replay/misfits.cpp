// Writes a HATF 1.0 trace whose records do not all fit together, for
// metatf-replay's tests: record 1 frees an address never allocated,
// record 3 allocates at an address still live, and record 4 reallocates a
// block never allocated. Usage: replay_misfits OUT
#include <hatf10.hpp>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    using namespace hatf10;
    Writer w(argv[1]);
    w.write(Alloc{.size = 100, .address = 0x1000});                       // 0
    w.write(Free{.address = 0x9000});                                     // 1: not live
    w.write(Alloc{.size = 50, .address = 0x2000});                        // 2
    w.write(Alloc{.size = 70, .address = 0x1000});                        // 3: still live
    w.write(ReallocNoAlloc{.size = 10, .oldAddress = 0x7000, .newAddress = 0x7000});  // 4: not live
    w.write(Free{.address = 0x1000});                                     // 5
    w.write(Free{.address = 0x2000});                                     // 6
    w.close();
    return 0;
}
