// mtfc: the Meta-TF DTD compiler's command line.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <metatf/container/output.hpp>

#include "back/cpp.hpp"
#include "compile.hpp"
#include "ir/json.hpp"
#include "version.hpp"

namespace {

constexpr const char* usage = R"(Usage: mtfc [OPTIONS] FILE.dtd

Compiles a Meta-TF DTD: checks it and prints what it finds wrong as
FILE:LINE:COL: error: MESSAGE, with the source line and a caret.
FILE may be '-' for standard input (named "stdin" in diagnostics).

Options:
  --check             only check the DTD (the default when no --emit is given)
  --emit ir           print the resolved model (IR) as JSON; docs/dtd-language.md
                      describes its schema
  --emit cpp          generate a C++ reader and writer: with -o DIR, writes
                      DIR/NAME.hpp
  -o, --output FILE   write the output to FILE instead of standard output
                      (for --emit cpp, a directory, created if missing)
  -f, --force         replace an existing output file (never replaced without;
                      one that holds the output already is left untouched)
  --name NAME         the DTD's name, which traces and the IR carry; by default
                      FILE without directory and last extension, "stdin" for -
  --namespace NS      the C++ namespace of --emit cpp; by default NAME made an
                      identifier (docs/dtd-language.md, section 11)
  -h, --help          show this help and exit
  -V, --version       show the version and exit
A long option's value may also follow '=', as in --emit=cpp.

Exit status: 0 when the DTD is valid (warnings allowed), 1 when it has errors,
2 for a command-line mistake or output that cannot be written.
)";

struct UsageError {
    std::string message;
};

struct Options {
    std::optional<std::string> input, emit, output, name, ns;
    bool check = false;
    bool force = false;
    bool help = false;
    bool version = false;
};

// If args[i] is the option `name` (or its short form), its value: what follows
// '=' in the same argument, or the next argument, which is then consumed.
std::optional<std::string> value_of(const std::vector<std::string_view>& args, std::size_t& i, std::string_view name,
                                    std::string_view short_name = {}) {
    const std::string_view arg = args[i];
    if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
        return std::string(arg.substr(name.size() + 1));
    }
    if (arg != name && (short_name.empty() || arg != short_name)) return std::nullopt;
    if (++i == args.size()) throw UsageError{std::string(arg) + " needs a value"};
    return std::string(args[i]);
}

void set_once(std::optional<std::string>& option, std::string value, std::string_view name) {
    if (option) throw UsageError{std::string(name) + " is given twice"};
    option = std::move(value);
}

Options parse_arguments(const std::vector<std::string_view>& args) {
    Options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg == "-h" || arg == "--help") {
            o.help = true;
            return o;
        }
        if (arg == "-V" || arg == "--version") {
            o.version = true;
            return o;
        }
        if (arg == "--check") {
            o.check = true;
        } else if (arg == "-f" || arg == "--force") {
            if (o.force) throw UsageError{"-f is given twice"};
            o.force = true;
        } else if (auto emit = value_of(args, i, "--emit")) {
            set_once(o.emit, std::move(*emit), "--emit");
        } else if (auto output = value_of(args, i, "--output", "-o")) {
            set_once(o.output, std::move(*output), "-o");
        } else if (auto name = value_of(args, i, "--name")) {
            set_once(o.name, std::move(*name), "--name");
        } else if (auto ns = value_of(args, i, "--namespace")) {
            set_once(o.ns, std::move(*ns), "--namespace");
        } else if (arg.size() > 1 && arg[0] == '-') {
            throw UsageError{"unknown option '" + std::string(arg) + "'"};
        } else {
            if (o.input) throw UsageError{"one DTD file at a time"};
            o.input = std::string(arg);
        }
    }
    return o;
}

// Why `name` cannot be a DTD's name, or "": it names the header NAME.hpp.
std::string name_problem(const std::string& name) {
    if (name.empty() || name == "." || name == "..") return "is not a file name";
    if (name.find('/') != std::string::npos) return "has a '/'";
    const auto control = [](unsigned char c) { return c < 0x20 || c == 0x7f; };
    if (std::any_of(name.begin(), name.end(), control)) return "has control characters";
    return {};
}

void check_options(const Options& o) {
    if (!o.input) throw UsageError{"no DTD file given"};
    if (o.emit && *o.emit != "ir" && *o.emit != "cpp") throw UsageError{"unknown --emit kind '" + *o.emit + "' (known: ir, cpp)"};
    if (o.check && o.emit) throw UsageError{"--check and --emit exclude each other"};
    if (o.output && !o.emit) throw UsageError{"-o needs --emit: a check writes no output"};
    if (o.force && !o.output) throw UsageError{"-f needs -o: only an output file is replaced"};
    if (o.emit == "cpp" && !o.output) throw UsageError{"--emit=cpp needs -o DIR"};
    if (o.ns && o.emit != "cpp") throw UsageError{"--namespace needs --emit=cpp"};
    if (o.ns) {
        if (const std::string why = metatf::back::namespace_problem(*o.ns); !why.empty()) {
            throw UsageError{"--namespace '" + *o.ns + "' " + why};
        }
    }
    if (o.name) {
        if (const std::string why = name_problem(*o.name); !why.empty()) throw UsageError{"--name '" + *o.name + "' " + why};
    }
}

int usage_error(std::string_view message) {
    std::cerr << "mtfc: " << message << "\nTry 'mtfc --help'.\n";
    return 2;
}

// Writes `text` to standard output; when that fails (a full disk, a closed pipe), says why.
int print(std::string_view text) {
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0) return 0;
    std::cerr << "mtfc: cannot write to standard output: " << (errno ? std::strerror(errno) : "write error") << '\n';
    return 2;
}

// Whether `path` is a regular file that holds `text` already.
bool holds(const std::string& path, const std::string& text) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) != text.size() || ec) return false;
    std::ifstream in(path, std::ios::binary);
    std::string now(text.size(), '\0');
    return in.read(now.data(), static_cast<std::streamsize>(now.size())) && now == text;
}

// Writes `text` as docs/mtf.md's "Output files" says: under a temporary name
// renamed into place, an existing file replaced only with -f, a FIFO in place.
// A file that -f would replace with the same text is left as it is, so that
// a build (CMake's restat) recompiles nothing after a change to mtfc that
// leaves a generated header alone.
int write_file(const std::string& output, const std::string& text, const Options& o) {
    if (o.force && holds(output, text)) return 0;
    try {
        metatf::rt::OutputFile file(output, metatf::rt::OutputOptions{o.force, {*o.input}});
        file.write(text.data(), text.size());
        file.commit();
        return 0;
    } catch (const metatf::rt::OutputError& e) {
        std::cerr << "mtfc: " << e.what() << '\n';
        return 2;
    }
}

// Writes DIR/NAME.hpp.
int write_header(const std::string& dir, const metatf::ir::Schema& schema, const Options& o) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        std::cerr << "mtfc: cannot create the directory '" << dir << "': " << ec.message() << '\n';
        return 2;
    }
    const std::string path = (std::filesystem::path(dir) / metatf::back::cpp_header_name(schema)).string();
    return write_file(path, o.ns ? metatf::back::generate_cpp(schema, *o.ns) : metatf::back::generate_cpp(schema), o);
}

}  // namespace

int main(int argc, char** argv) {
    metatf::rt::remove_temporary_files_on_signals();
    Options o;
    try {
        o = parse_arguments(std::vector<std::string_view>(argv + 1, argv + argc));
        if (o.help) return print(usage);
        if (o.version) return print(std::string("mtfc ") + metatf::version + '\n');
        check_options(o);
    } catch (const UsageError& e) {
        return usage_error(e.message);
    }

    const metatf::Compilation result =
        *o.input == "-" ? metatf::compile_stdin(o.name) : metatf::compile_file(*o.input, o.name);
    for (const metatf::Diagnostic& d : result.diagnostics.all()) std::cerr << d.render();
    if (!result.schema) return 1;
    if (!o.emit) return 0;
    if (const std::string why = name_problem(result.schema->name); !why.empty()) {
        return usage_error("the DTD's name '" + result.schema->name + "' (from its file name) " + why +
                           "; give one with --name");
    }

    if (*o.emit == "cpp") return write_header(*o.output, *result.schema, o);
    const std::string text = metatf::ir::to_json_text(*result.schema);
    return o.output ? write_file(*o.output, text, o) : print(text);
}
