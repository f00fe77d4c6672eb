// mtfc: the Meta-TF DTD compiler's command line.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "back/cpp.hpp"
#include "compile.hpp"
#include "ir/json.hpp"
#include "version.hpp"

namespace {

constexpr const char* usage = R"(Usage: mtfc [OPTIONS] FILE.dtd

Compiles a Meta-TF DTD: checks it and prints what it finds wrong as
FILE:LINE:COL: error: MESSAGE, with the source line and a caret.
FILE may be '-' for standard input (the DTD is then named "stdin").

Options:
  --check        only check the DTD (the default when no --emit is given)
  --emit=ir      print the resolved model (IR) as JSON; docs/dtd-language.md
                 describes its schema
  --emit=cpp     generate a C++ reader and writer: with -o DIR, writes
                 DIR/NAME.hpp (NAME is the DTD's name)
  -o FILE        write the output to FILE instead of standard output
                 (for --emit=cpp, a directory, created if missing)
  --help         show this help and exit
  --version      show the version and exit

Exit status: 0 when the DTD is valid (warnings allowed), 1 when it has errors,
2 for a command-line mistake or an output file that cannot be written.
)";

std::string read_stdin() {
    std::ostringstream text;
    text << std::cin.rdbuf();
    return text.str();
}

int write_file(const std::string& output, const std::string& text) {
    // Write beside the target and rename, so a failed run never leaves a partial file.
    const std::string temporary = output + ".tmp";
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    out.close();
    std::error_code ec;
    if (out) std::filesystem::rename(temporary, output, ec);
    if (!out || ec) {
        std::filesystem::remove(temporary, ec);
        std::cerr << "mtfc: cannot write '" << output << "'\n";
        return 2;
    }
    return 0;
}

int usage_error(std::string_view message) {
    std::cerr << "mtfc: " << message << "\nTry 'mtfc --help'.\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string input, output, emit;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << usage;
            return 0;
        }
        if (arg == "--version") {
            std::cout << "mtfc " << metatf::version << '\n';
            return 0;
        }
        if (arg == "--check") {
            emit.clear();
        } else if (arg.substr(0, 7) == "--emit=") {
            emit = arg.substr(7);
            if (emit != "ir" && emit != "cpp") return usage_error("unknown --emit kind '" + emit + "' (known: ir, cpp)");
        } else if (arg == "-o") {
            if (++i == argc) return usage_error("-o needs a file name");
            output = argv[i];
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usage_error("unknown option '" + std::string(arg) + "'");
        } else if (!input.empty()) {
            return usage_error("one DTD file at a time");
        } else {
            input = arg;
        }
    }
    if (input.empty()) return usage_error("no DTD file given");
    if (!output.empty() && emit.empty()) return usage_error("-o needs --emit: a check writes no output");
    if (emit == "cpp" && output.empty()) return usage_error("--emit=cpp needs -o DIR");

    const metatf::Compilation result = input == "-" ? metatf::compile("stdin", read_stdin()) : metatf::compile_file(input);
    for (const metatf::Diagnostic& d : result.diagnostics.all()) std::cerr << d.render();
    if (!result.schema) return 1;
    if (emit.empty()) return 0;

    if (emit == "cpp") {
        std::error_code ec;
        std::filesystem::create_directories(output, ec);
        const std::string path = (std::filesystem::path(output) / metatf::back::cpp_header_name(*result.schema)).string();
        return write_file(path, metatf::back::generate_cpp(*result.schema));
    }
    const std::string text = metatf::ir::to_json_text(*result.schema);
    if (output.empty()) {
        std::cout << text;
        return std::cout.flush() ? 0 : 2;
    }
    return write_file(output, text);
}

