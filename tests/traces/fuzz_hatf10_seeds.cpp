// Writes the fuzzer's seed corpus into the directory given: valid HATF 1.0
// traces using every record type and metadata of every sort (predict among them), in both classes
// and byte orders and all six container versions, version 1 also in a compact
// form without the embedded DTD text
// (the reader checks the DTD's name and fingerprint, not its text), so that
// mutations land on the header, index and records rather than on comments.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <hatf10.hpp>

#include "trace_support.hpp"

namespace rt = metatf::rt;
using metatf::test::TraceBytes;

namespace {

void write_rich(const std::string& path, rt::WriterOptions options) {
    using namespace hatf10;
    Writer w(path, options);
    w.comment("seed");
    w.write(Alloc{.size = 24, .address = 0x1000});
    w.set_width(RecordType::Alloc, Alloc::size_field, 2);
    w.set_interpretation(RecordType::Alloc, Alloc::address_field, rt::MetaOp::base_offset, 0x10000);
    w.write(Alloc{.size = 300, .address = 0x10010});
    w.set_interpretation(RecordType::Alloc, Alloc::thread_field, rt::MetaOp::none);
    w.set_interpretation(RecordType::Alloc, Alloc::heap_field, rt::MetaOp::default_value, 3);
    w.set_interpretation(RecordType::Alloc, Alloc::time_field, rt::MetaOp::delta, 100);
    w.set_interpretation(RecordType::Alloc, Alloc::attributes_attributesLength_field, rt::MetaOp::none);
    const std::string caller = "abc";
    w.write(Alloc{.size = 16, .address = 0x10020, .thread = 2, .heap = 3, .time = 150,
                  .attributes_attributesLength = caller.size(), .attributes_attributesData = rt::as_bytes(caller)});
    w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::stride, 0x2000, 16);
    w.write(Free{.address = 0x2010});
    w.write(Free{.address = 0x2020});
    // predict (docs/trace-format.md, 5.3): a code for the repeat, the escape and a difference.
    w.set_interpretation(RecordType::Free, Free::address_field, rt::MetaOp::predict, 0, rt::all_predictors);
    w.set_width(RecordType::Free, Free::address_field, 1);
    w.write(Free{.address = 0x2020});
    w.write(Free{.address = 0x9000});
    w.section(0);
    w.write(ReallocNoAlloc{.size = 8, .oldAddress = 0x3000, .newAddress = 0x3000});
    w.write(ReallocAllocFree{.size = 64, .oldAddress = 0x3000, .newAddress = 0x4000});
    w.write(ReallocAlloc{.size = 32, .oldAddress = 0, .newAddress = 0x5000});
    w.write(ReallocFree{.size = 0, .oldAddress = 0x5000, .newAddress = 0});
    w.set_interpretation(RecordType::CreateHeap, CreateHeap::heap_field, rt::MetaOp::none);
    w.write(CreateHeap{.heap = 7});
    w.write(DestroyHeap{});
    w.set_width(RecordType::CreateThread, CreateThread::attributes_attributesLength_field, 2);
    w.set_interpretation(RecordType::CreateThread, CreateThread::attributes_attributesLength_field, rt::MetaOp::none);
    const std::string stack = "main;run";
    w.write(CreateThread{.attributes_attributesLength = stack.size(), .attributes_attributesData = rt::as_bytes(stack)});
    w.write(DestroyThread{});
    w.comment("");
    w.close();
}

// Removes the DTD text of a version-1 trace, moving the data and index up and
// patching the words (TraceBytes knows version 1's layout only).
void make_compact(const std::string& from, const std::string& to) {
    TraceBytes b = TraceBytes::load(from);
    const std::uint64_t text = b.word(TraceBytes::text_length);
    const std::uint64_t at = b.word(TraceBytes::data_start) - text;
    b.b.erase(b.b.begin() + static_cast<std::ptrdiff_t>(at), b.b.begin() + static_cast<std::ptrdiff_t>(at + text));
    b.set_word(TraceBytes::text_length, 0);
    b.set_word(TraceBytes::data_start, at);
    b.set_word(TraceBytes::index_offset, b.word(TraceBytes::index_offset) - text);
    for (std::uint64_t i = 0; i < b.word(TraceBytes::chunk_count); ++i) {
        b.set_entry(i, TraceBytes::start, b.entry(i, TraceBytes::start) - text);
    }
    b.save(to);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    try {
        std::filesystem::create_directories(dir);
        struct Seed {
            const char* name;
            rt::WriterOptions options;
        };
        Seed seeds[] = {
            {"rich-64le", {rt::Class::bits64, rt::ByteOrder::little, std::size_t(1) << 20, {true, {}}, 2}},
            {"rich-32be-chunks", {rt::Class::bits32, rt::ByteOrder::big, 24, {true, {}}, 2}},
            {"rich-64le-v1", {rt::Class::bits64, rt::ByteOrder::little, std::size_t(1) << 20, {true, {}}, 1}},
            {"rich-32be-chunks-v3", {rt::Class::bits32, rt::ByteOrder::big, 24, {true, {}}, 3}},
            {"rich-32be-chunks-v4", {rt::Class::bits32, rt::ByteOrder::big, 24, {true, {}}, 4}},
            {"rich-32be-chunks-v5", {rt::Class::bits32, rt::ByteOrder::big, 24, {true, {}}, 5}},  // compressed below
            {"rich-32be-chunks-v6", {rt::Class::bits32, rt::ByteOrder::big, 24, {true, {}}, 6}},
        };
        for (Seed& s : seeds) {
            if (s.options.version >= 5) s.options.compress = 3;  // versions 5 and 6 are a compressing writer's
            const std::string full = (dir / (std::string(s.name) + ".mtf")).string();
            const std::string compact = (dir / (std::string(s.name) + "-compact.mtf")).string();
            write_rich(full, s.options);
            std::vector<std::string> written{full};
            if (s.options.version == 1) {
                make_compact(full, compact);
                written.push_back(compact);
            }
            // Each must read back whole.
            for (const std::string& path : written) {
                const std::uint64_t records = metatf::test::read_all<hatf10::Reader>(path);
                if (records != 30) {
                    std::fprintf(stderr, "%s: %llu records, expected 30\n", path.c_str(), static_cast<unsigned long long>(records));
                    return 1;
                }
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
