// Writes a small HATF 1.0 trace with the reader and writer that mtfc
// generates from dtds/hatf10.dtd, then reads it back twice: once with a
// visitor, once record by record with next() and get<T>().
//
//   write_and_read [TRACE]    (default: example.mtf in the current directory)
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <type_traits>

#include <hatf10.hpp>

namespace rt = metatf::rt;

namespace {

void write_trace(const std::string& path) {
    using namespace hatf10;
    metatf::rt::WriterOptions options;
    options.output.replace = true;  // the example rewrites its own trace on every run
    Writer w(path, options);
    w.comment("two blocks, then many small ones");
    // With the DTD's initial encoding: a 4-byte size and a 4-byte address.
    w.write(Alloc{.size = 4096, .address = 0x10000});
    w.write(Alloc{.size = 24, .address = 0x11000});
    // From here on the sizes are small: store them in 1 byte, and store each
    // address as the (signed, 4-byte) distance from the previous one, starting from 0x11000.
    w.set_width(RecordType::Alloc, Alloc::size_field, 1);
    w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::delta, 0x11000);
    w.write(Alloc{.size = 16, .address = 0x11020});
    w.write(Alloc{.size = 200, .address = 0x11040});
    w.write(Free{.address = 0x10000});
    w.write(Free{.address = 0x11020});
    // Without close() the writer would leave no trace behind.
    w.close();
}

// Visitor style: one call for each record, whatever its type.
void print_trace(const std::string& path) {
    hatf10::Reader r(path);
    r.visit([](const auto& record) {
        using T = std::decay_t<decltype(record)>;
        if constexpr (std::is_same_v<T, hatf10::Comment>) {
            std::printf("comment \"%.*s\"\n", static_cast<int>(record.text.size()), record.text.data());
        } else if constexpr (std::is_same_v<T, hatf10::Metadata>) {
            const char* name = hatf10::dtd.records[static_cast<std::uint32_t>(record.record)].name;
            const auto a = static_cast<unsigned long long>(record.a);
            std::printf("metadata %s field %u: ", name, static_cast<unsigned>(record.field));
            if (record.op == rt::MetaOp::width) {
                std::printf("width %llu\n", a);
            } else {
                std::printf("%s from 0x%llx\n", std::string(rt::name(record.op)).c_str(), a);
            }
        } else if constexpr (std::is_same_v<T, hatf10::Alloc>) {
            std::printf("alloc size %llu at 0x%llx\n", static_cast<unsigned long long>(record.size),
                        static_cast<unsigned long long>(record.address));
        } else if constexpr (std::is_same_v<T, hatf10::Free>) {
            std::printf("free 0x%llx\n", static_cast<unsigned long long>(record.address));
        } else {
            std::printf("record of type %u\n", static_cast<unsigned>(T::type));
        }
    });
}

// Pull style: ask for the next record, look at its type, take the struct.
void summarize_trace(const std::string& path) {
    hatf10::Reader r(path);
    std::map<std::uint64_t, std::uint64_t> live;  // address -> size
    unsigned allocs = 0, frees = 0;
    while (r.next()) {
        if (r.type() == hatf10::RecordType::Alloc) {
            const auto& a = r.get<hatf10::Alloc>();
            live[a.address] = a.size;
            ++allocs;
        } else if (r.type() == hatf10::RecordType::Free) {
            live.erase(r.get<hatf10::Free>().address);
            ++frees;
        }
    }
    std::uint64_t bytes = 0;
    for (const auto& [address, size] : live) bytes += size;
    std::printf("%u allocs, %u frees: %zu blocks live, %llu bytes\n", allocs, frees, live.size(),
                static_cast<unsigned long long>(bytes));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "example.mtf";
    try {
        write_trace(path);
        std::printf("wrote %s\n", path.c_str());
        print_trace(path);
        summarize_trace(path);
    } catch (const rt::TraceError& e) {
        // Every trace error says what went wrong and where in the trace.
        std::fprintf(stderr, "write_and_read: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "write_and_read: %s\n", e.what());
        return 1;
    }
    return 0;
}
