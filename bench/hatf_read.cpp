// Reads a HATF 1.0 trace whole through the generated reader (its visit()
// path, zstd chunks decoded on the way) and says how long that took: the
// "full read" of docs/compactness.md. Usage: hatf_read TRACE
#include <chrono>
#include <cstdio>
#include <type_traits>

#include <hatf10.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: hatf_read TRACE\n");
        return 2;
    }
    try {
        const auto start = std::chrono::steady_clock::now();
        std::uint64_t records = 0, sum = 0;
        hatf10::Reader reader(argv[1]);
        reader.visit([&](const auto& r) {
            ++records;
            if constexpr (std::is_same_v<std::decay_t<decltype(r)>, hatf10::Alloc>) sum += r.address + r.size + r.time;
            if constexpr (std::is_same_v<std::decay_t<decltype(r)>, hatf10::Free>) sum += r.address + r.time;
        });
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        std::printf("%llu records in %.3f s (checksum %llx)\n", static_cast<unsigned long long>(records), took.count(),
                    static_cast<unsigned long long>(sum));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hatf_read: %s\n", e.what());
        return 1;
    }
}
