// libFuzzer harness of the text reader: any bytes, read as text with each
// shipped DTD that has a text form (SPC, PTF, Laplace), must give records or
// a TextError. Every record read is written back with TextWriter and read
// again, and must come back with the same values: the writer refusing a
// record the reader gave, or a different record, is a finding. So is a
// crash, a sanitizer report, a hang or any other exception (libFuzzer
// reports an uncaught one).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <memory>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <metatf/text.hpp>

#include "back/descriptor.hpp"
#include "compile.hpp"

namespace rt = metatf::rt;

namespace {

// The DTDs, compiled once as mtf compiles a --dtd file (tools/mtf/common.cpp, load_dtd).
std::vector<std::unique_ptr<metatf::back::RuntimeDtd>> compile_dtds() {
    std::vector<std::unique_ptr<metatf::back::RuntimeDtd>> out;
    for (const char* name : {"spc", "ptf", "laplace"}) {
        const std::string path = std::string(METATF_SOURCE_DIR) + "/dtds/" + name + ".dtd";
        const metatf::Compilation c = metatf::compile_file(path);
        if (!c.schema) {
            std::fprintf(stderr, "fuzz_text_reader: %s does not compile\n", path.c_str());
            std::abort();
        }
        out.push_back(std::make_unique<metatf::back::RuntimeDtd>(*c.schema));
    }
    return out;
}

const std::vector<std::unique_ptr<metatf::back::RuntimeDtd>> dtds = compile_dtds();

// Reads the fuzzer's bytes in place.
struct View : std::streambuf {
    View(const std::uint8_t* data, std::size_t size) {
        char* p = const_cast<char*>(reinterpret_cast<const char*>(data));
        setg(p, p, p + size);
    }
};

bool same(const rt::GenericRecord& a, const rt::GenericRecord& b) {
    if (a.slot != b.slot || a.values.size() != b.values.size()) return false;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        const rt::GenericValue &x = a.values[i], &y = b.values[i];
        if (x.field != y.field || x.integer != y.integer || std::memcmp(&x.real, &y.real, sizeof x.real) != 0 ||
            x.bytes.size() != y.bytes.size() ||
            (!x.bytes.empty() && std::memcmp(x.bytes.data(), y.bytes.data(), x.bytes.size()) != 0)) {
            return false;
        }
    }
    return true;
}

[[noreturn]] void finding(const rt::DtdDesc& dtd, std::uint64_t line, const std::string& what) {
    std::fprintf(stderr, "fuzz_text_reader: %s, line %llu: %s\n", dtd.name, static_cast<unsigned long long>(line), what.c_str());
    std::abort();
}

// Writes `record` as a text of its own and reads that text back.
void round_trip(const rt::DtdDesc& dtd, const rt::GenericRecord& record, std::uint64_t line) {
    std::ostringstream text;
    try {
        rt::TextWriter writer(text, dtd);
        writer.write(record);
        writer.close();
    } catch (const rt::TextError& e) {
        finding(dtd, line, std::string("the writer refuses the record read: ") + e.what());
    }
    std::istringstream in(text.str());
    rt::GenericRecord again;
    try {
        rt::TextReader reader(in, dtd);
        if (!reader.next(again)) finding(dtd, line, "the written text has no record: " + text.str());
        if (!same(record, again)) finding(dtd, line, "the record reads back different: " + text.str());
        if (reader.next(again)) finding(dtd, line, "the written text has more than one record: " + text.str());
    } catch (const rt::TextError& e) {
        finding(dtd, line, std::string("the written text does not read: ") + e.what() + "\n" + text.str());
    }
}

// A small line limit, so that long lines are fuzzed too.
void read_all(const rt::DtdDesc& dtd, const std::uint8_t* data, std::size_t size, bool skip_bad) {
    View buffer(data, size);
    std::istream in(&buffer);
    rt::TextReadOptions options;
    options.skip_bad = skip_bad;
    options.max_line_length = 512;
    try {
        rt::TextReader reader(in, dtd, options);
        rt::GenericRecord record;
        while (reader.next(record)) round_trip(dtd, record, reader.line());
    } catch (const rt::TextError&) {
        // the expected outcome for text that is not records
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    for (const auto& dtd : dtds) {
        read_all(dtd->desc(), data, size, false);
        read_all(dtd->desc(), data, size, true);
    }
    return 0;
}
