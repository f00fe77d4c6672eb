// mtf: reads Meta-TF traces of any DTD, taking the DTD from the trace itself.
// Each command lives in a file of its own and has one entry in `commands`.
#include <iostream>
#include <string>
#include <vector>

#include <metatf/container/output.hpp>

#include "common.hpp"
#include "version.hpp"

namespace mtf::commands {
extern const Command info, dump, check, stats, convert, recode, recover;
}

namespace {

using mtf::Command;

const Command* const commands[] = {&mtf::commands::info, &mtf::commands::dump, &mtf::commands::check,
                                   &mtf::commands::stats, &mtf::commands::convert,
                                   &mtf::commands::recode, &mtf::commands::recover};

void print_usage() {
    std::cout << "Usage: mtf COMMAND [OPTIONS] ARGUMENTS\n\n"
                 "Reads Meta-TF traces of any DTD: the DTD embedded in each trace says how\n"
                 "to decode it. 'convert' also reads and writes a format's native text.\n"
                 "A file argument may be '-' for standard input.\n\nCommands:\n";
    for (const Command* c : commands) std::cout << "  " << c->name << std::string(8 - std::string(c->name).size(), ' ') << c->summary << '\n';
    std::cout << "  help    show this help; 'mtf help COMMAND' describes COMMAND and its options\n\n"
                 "Options:\n"
                 "  -h, --help     show this help; 'mtf COMMAND --help' describes COMMAND\n"
                 "  -V, --version  show the version\n\n"
                 "Exit status: 0 on success, 1 for bad input or a failed check, 2 for a\n"
                 "command-line mistake.\n";
}

const Command* find(const std::string& name) {
    for (const Command* c : commands) {
        if (name == c->name) return c;
    }
    return nullptr;
}

int fail(const std::string& where, const std::string& message, int status) {
    std::cerr << "mtf: " << where << message << '\n';
    return status;
}

int run(const Command& c, const std::vector<std::string>& args) {
    const std::string where = std::string(c.name) + ": ";
    try {
        return c.run(args);
    } catch (const mtf::UsageError& e) {
        return fail(where, std::string(e.what()) + " (see 'mtf " + c.name + " --help')", 2);
    } catch (const mtf::InputError& e) {
        return fail(where, e.what(), 1);
    } catch (const std::exception& e) {
        return fail(where, e.what(), 1);
    }
}

bool is_help(const std::string& a) { return a == "-h" || a == "--help"; }

// `mtf help [COMMAND]`.
int help(const std::vector<std::string>& args) {
    if (args.size() > 1) return fail("", "unexpected argument '" + args[1] + "' after COMMAND (mtf help COMMAND)", 2);
    if (args.empty() || args[0] == "help") {
        print_usage();
        return 0;
    }
    const Command* c = find(args[0]);
    if (!c) return fail("", "unknown command '" + args[0] + "' (see 'mtf --help')", 2);
    std::cout << c->help;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    metatf::rt::remove_temporary_files_on_signals();
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) return fail("", "no command given (see 'mtf --help')", 2);
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (is_help(args[0])) return help({});
    if (args[0] == "help") return help(rest);
    if (args[0] == "-V" || args[0] == "--version") {
        std::cout << "mtf " << metatf::version << '\n';
        return 0;
    }
    const Command* c = find(args[0]);
    if (!c) return fail("", "unknown command '" + args[0] + "' (see 'mtf --help')", 2);
    // Asking for help wins over any mistake elsewhere on the line; after "--" it is an argument.
    for (auto a = rest.begin(); a != rest.end() && *a != "--"; ++a) {
        if (is_help(*a)) return help({c->name});
    }
    return run(*c, rest);
}
