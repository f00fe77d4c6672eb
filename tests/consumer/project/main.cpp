// Writes a trace of tiny.dtd with the generated Writer, reads it back with
// the generated Reader, and checks every record. Exit status 0 only if the
// trace reads back exactly as written. The same DTD generated under other
// names (tiny.v2.dtd, and NAME/NAMESPACE) must compile beside it.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <tiny-renamed.hpp>
#include <tiny.hpp>
#include <tiny.v2.hpp>

// Headers and namespaces named as mtfc names them, and as NAME and NAMESPACE ask.
static_assert(std::string_view(tiny_v2::dtd.name) == "tiny.v2");
static_assert(std::string_view(renamed::dtd.name) == "tiny-renamed");
static_assert(sizeof(tiny_v2::Sample) == sizeof(renamed::Sample));

namespace {

const std::vector<tiny::Sample> samples = {
    {.id = 0, .level = 0},
    {.id = 1, .level = -1},
    {.id = 0xfffffffe, .level = 32767},
    {.id = 42, .level = -32768},
};
constexpr const char* note = "written by the consumer test";

int check(const std::string& path) {
    tiny::Reader r(path);
    if (!r.next() || r.type() != tiny::RecordType::Comment || r.get<tiny::Comment>().text != note) {
        std::printf("consumer: FAILED: the trace does not start with the comment \"%s\"\n", note);
        return 1;
    }
    std::size_t i = 0;
    for (; r.next(); ++i) {
        if (i >= samples.size() || r.type() != tiny::RecordType::Sample) {
            std::printf("consumer: FAILED: record %zu is not one of the samples written\n", i + 1);
            return 1;
        }
        const tiny::Sample& got = r.get<tiny::Sample>();
        if (!(got == samples[i])) {
            std::printf("consumer: FAILED: sample %zu read back as {id %llu, level %lld}, written as {id %llu, level %lld}\n",
                        i, static_cast<unsigned long long>(got.id), static_cast<long long>(got.level),
                        static_cast<unsigned long long>(samples[i].id), static_cast<long long>(samples[i].level));
            return 1;
        }
    }
    if (i != samples.size()) {
        std::printf("consumer: FAILED: read back %zu samples, wrote %zu\n", i, samples.size());
        return 1;
    }
    std::printf("consumer: OK: the comment and %zu samples read back as written\n", i);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "consumer.mtf";
    try {
        metatf::rt::WriterOptions options;
        options.output.replace = true;
        tiny::Writer w(path, options);
        w.comment(note);
        for (const tiny::Sample& s : samples) w.write(s);
        w.close();
        return check(path);
    } catch (const std::exception& e) {
        std::printf("consumer: FAILED: %s\n", e.what());
        return 1;
    }
}
