// Writes a large canonical text trace of SPC, PTF or Laplace with the
// generated TextWriter: make_text FORMAT RECORDS OUT. The values are random
// but reproducible, and some are chosen to outgrow the DTDs' initial widths,
// so a conversion to binary must widen fields with metadata.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "laplace.hpp"
#include "ptf.hpp"
#include "spc.hpp"

namespace {

namespace rt = metatf::rt;

struct Random {
    std::uint64_t state = 0x9e3779b97f4a7c15u;
    std::uint64_t next() {  // splitmix64
        std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) { return next() % n; }
    bool chance(unsigned percent) { return below(100) < percent; }
    // Printable text without the separator; blanks only inside when `inner_blanks`.
    std::string text(std::size_t max, char separator, bool inner_blanks) {
        std::string s(1 + below(max), 'x');
        for (char& c : s) {
            do {
                c = static_cast<char>(' ' + below(95));
            } while (c == separator || (!inner_blanks && c == ' '));
        }
        if (s.front() == ' ') s.front() = '_';
        if (s.back() == ' ') s.back() = '_';
        return s;
    }
};

void spc_trace(std::ostream& out, std::uint64_t n, Random& r) {
    spc::TextWriter w(out);
    std::vector<std::string> texts;
    std::uint64_t time = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        spc::Spc s;
        // Like a real storage trace: 24 units, 1 TiB of blocks, up to 64 KiB per I/O, sub-millisecond
        // gaps with rare pauses. The last record outgrows the initial widths of LBA and size, and
        // adds a 25th unit (the units stay dense from 0, as SPC requires and mtf check checks).
        const bool last = i + 1 == n;
        s.asu = last ? 24 : r.below(24);
        s.lba = last ? std::uint64_t(1) << 40 : r.below(std::uint64_t(1) << 31);
        s.size = last ? std::uint64_t(1) << 33 : r.chance(2) ? 0 : 512 * (1 + r.below(128));
        s.opcode = r.below(2);
        time += r.chance(1) ? 30'000'000 + r.below(1'000'000) : r.below(1000);
        s.timestamp = time * 1000;  // microseconds, as SPC traces give them; the DTD keeps nanoseconds
        texts.clear();
        if (r.chance(10)) {
            for (std::uint64_t k = 1 + r.below(3); k > 0; --k) texts.push_back(r.text(12, ',', true));
        }
        s.optionalCount = texts.size();
        for (const std::string& t : texts) s.optionalCount_items.push_back({t.size(), rt::as_bytes(t)});
        w.write(s);
    }
    w.close();
}

void ptf_trace(std::ostream& out, std::uint64_t n, Random& r) {
    ptf::TextWriter w(out);
    std::uint64_t oid = 41;
    std::string name;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t f = 10 + r.below(40), o = 40 + r.below(oid);
        switch (r.below(14)) {
            case 0: {
                ptf::Fo fo;
                fo.formatId = ++oid;
                fo.superFormatId = r.chance(50) ? 0 : f;
                fo.numberOfPointers = r.below(4);
                fo.numberOfDataMembers = r.below(4);
                for (std::uint64_t k = 0; k < fo.numberOfDataMembers; ++k) fo.numberOfDataMembers_items.push_back({10 + r.below(10)});
                fo.numberOfArrayMembers = r.below(3);
                for (std::uint64_t k = 0; k < fo.numberOfArrayMembers; ++k) fo.numberOfArrayMembers_items.push_back({30 + r.below(10), 1 + r.below(100)});
                name = r.text(20, '\n', true);  // read back by its length, so blanks inside are fine
                fo.lengthOfClassName = name.size();
                fo.className = rt::as_bytes(name);
                w.write(fo);
                break;
            }
            case 1: w.write(ptf::Co{f, ++oid}); break;
            case 2: w.write(ptf::Cao{f, ++oid, o, 1 + r.below(1000)}); break;
            case 3: w.write(ptf::Do_{f, o}); break;
            case 4: w.write(ptf::Sr{f, o}); break;
            case 5: w.write(ptf::Gr{}); break;
            case 6: w.write(ptf::Dr{f, o, r.below(16)}); break;
            case 7: w.write(ptf::Dw{f, o, r.below(16)}); break;
            case 8: w.write(ptf::Adr{f, o, r.chance(50) ? -1 : std::int64_t(r.below(16)), r.below(100), 1 + r.below(100)}); break;
            case 9: w.write(ptf::Adw{f, o, r.chance(50) ? -1 : std::int64_t(r.below(16)), r.below(100), 1 + r.below(100)}); break;
            case 10: w.write(ptf::Er{f, o, r.below(8)}); break;
            case 11: w.write(ptf::Ew{f, o, r.below(8), r.chance(10) ? 0 : 40 + r.below(oid)}); break;
            case 12: w.write(ptf::Ts{}); break;
            default: w.write(ptf::Te{}); break;
        }
    }
    w.close();
}

template <typename Reference>
Reference reference(std::uint64_t time, Random& r) {
    Reference ref;
    ref.timestamp = time;
    ref.length = 1 << r.below(4);
    ref.virtualPage = r.below(1 << 20);
    ref.canonicalPage = r.next();
    return ref;
}

void laplace_trace(std::ostream& out, std::uint64_t n, Random& r) {
    laplace::TextWriter w(out);
    std::uint64_t time = 0x123456789abcdef0u;
    std::string name;
    for (std::uint64_t i = 0; i < n; ++i) {
        time += r.chance(1) ? std::uint64_t(1) << 40 : r.below(300);
        switch (r.chance(1) ? 6 + r.below(2) : r.below(6)) {
            case 0: w.write(reference<laplace::UserRead>(time, r)); break;
            case 1: w.write(reference<laplace::UserWrite>(time, r)); break;
            case 2: w.write(reference<laplace::UserFetch>(time, r)); break;
            case 3: w.write(reference<laplace::KernelRead>(time, r)); break;
            case 4: w.write(reference<laplace::KernelWrite>(time, r)); break;
            case 5: w.write(reference<laplace::KernelFetch>(time, r)); break;
            case 6: w.write(laplace::KernelEventF{time, r.below(1 << 16), r.below(1 << 16)}); break;
            default: {
                name = r.text(30, '\n', true);
                w.write(laplace::KernelEventM{time, r.below(1 << 16), r.next(), r.below(1 << 20), r.next(), r.below(64),
                                              r.below(8), r.next(), name.size(), rt::as_bytes(name)});
                break;
            }
        }
    }
    w.close();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: make_text spc|ptf|laplace RECORDS OUT\n";
        return 2;
    }
    const std::string format = argv[1];
    const std::uint64_t n = std::strtoull(argv[2], nullptr, 10);
    std::ofstream out(argv[3], std::ios::binary);
    Random r;
    if (format == "spc") {
        spc_trace(out, n, r);
    } else if (format == "ptf") {
        ptf_trace(out, n, r);
    } else if (format == "laplace") {
        laplace_trace(out, n, r);
    } else {
        std::cerr << "make_text: unknown format '" << format << "'\n";
        return 2;
    }
    return out ? 0 : 1;
}
