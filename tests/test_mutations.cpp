// Thousands of random mutations of the shipped DTDs: the compiler must answer
// each with a schema or with errors, never crash or hang. CI runs this under
// AddressSanitizer and UndefinedBehaviorSanitizer.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "address_sanitizer.hpp"
#include "back/cpp.hpp"
#include "ir/json.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> corpus() {
    std::vector<std::string> out;
    for (const char* dir : {"dtds", "tests/fixtures"}) {
        for (const auto& entry : fs::directory_iterator(fs::path(METATF_SOURCE_DIR) / dir)) {
            if (entry.path().extension() != ".dtd") continue;
            std::ifstream in(entry.path(), std::ios::binary);
            std::ostringstream s;
            s << in.rdbuf();
            out.push_back(s.str());
        }
    }
    return out;
}

// Pieces of the language, so mutants stay close to valid DTDs and reach the resolver.
const std::vector<std::string> tokens = {
    "(", ")", "{", "}", ",", ";", ":", ".", "*", "=", "-", "0x", "/*", "*/", "//", "\n", " ", "0", "1", "8",
    "255", "65536", "18446744073709551615", "tag", "value", "width", "interpretation", "type", "scale", "section",
    "vfield", "comment", "metadata", "none", "default 0", "delta 1", "stride 0 -4", "baseOffset 7",
    "sectionOffset 1", "sectionStride 1 1", "signed", "float", "bytes", "length.value", "tag.width", "n*",
    "x : y", "section s 1 {", "a.b.c", "\t", "\r\n", "\xff"};

std::string mutate(std::string text, std::mt19937_64& rng) {
    auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
    const int edits = 1 + static_cast<int>(pick(4));
    for (int e = 0; e < edits; ++e) {
        const std::size_t at = pick(text.size() + 1);
        switch (pick(6)) {
            case 0: text.insert(at, tokens[pick(tokens.size())]); break;
            case 1: text.erase(at, 1 + pick(12)); break;
            case 2:
                if (at < text.size()) text[at] = static_cast<char>(pick(256));
                break;
            case 3: text.insert(at, text.substr(pick(text.size()), pick(40))); break;
            case 4: text.resize(at); break;
            default: {  // swap two slices
                const std::size_t b = pick(text.size() + 1), len = pick(30);
                const std::string x = text.substr(at, len), y = text.substr(b, len);
                text.replace(at, x.size(), y);
                if (b + x.size() <= text.size()) text.replace(b, x.size(), x);
            }
        }
    }
    return text;
}

}  // namespace

// Under AddressSanitizer a mutant costs about ten times as much, and
// fuzz_mtfc fuzzes the compiler under the sanitizers anyway.
constexpr int mutants = metatf::test::address_sanitizer ? 2500 : 10000;

TEST_CASE("random mutations of the shipped DTDs never crash the compiler") {
    const std::vector<std::string> seeds = corpus();
    REQUIRE(!seeds.empty());
    std::mt19937_64 rng(20001015);  // fixed, so a failure can be replayed
    std::size_t valid = 0, invalid = 0;
    for (int i = 0; i < mutants; ++i) {
        const std::string text = mutate(seeds[static_cast<std::size_t>(i) % seeds.size()], rng);
        const metatf::Compilation c = metatf::compile("mutant.dtd", text);
        // Every outcome is coherent: a schema exactly when there is no error, and
        // every diagnostic renders with a real position.
        CHECK(c.schema.has_value() == !c.diagnostics.has_errors());
        for (const auto& d : c.diagnostics.all()) {
            CHECK(d.where.line >= 1);
            CHECK(!d.render().empty());
        }
        if (c.schema) {
            CHECK(!metatf::ir::to_json_text(*c.schema).empty());
            CHECK(!metatf::back::generate_cpp(*c.schema).empty());
            ++valid;
        } else {
            ++invalid;
        }
    }
    MESSAGE("mutants: " << valid << " valid, " << invalid << " rejected");
    CHECK(invalid > 0);
    CHECK(valid > 0);
}
