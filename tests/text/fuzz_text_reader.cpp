// libFuzzer harness of the native forms' readers: any bytes, read as text
// with each shipped DTD that has a text form (SPC, PTF, Laplace, Lackey) and
// with tests/fixtures/blkparse.dtd (columns padded with blanks),
// dtds/msr.dtd (words an enum names) and dtds/strace.dtd (shapes tried in
// order, nested values, a tab), must give records or a TextError. The records
// read are written back with TextWriter and read again, and must come back
// the same: the writer refusing a record the reader gave, or a different
// record, is a finding. A record that an earlier shape reads back (an
// 'other' line that looks like a call once its head is written canonically)
// must be written as the very same line. So is a
// crash, a sanitizer report, a hang or any other exception (libFuzzer reports
// an uncaught one). Each input is read with and without skip_bad. The same
// bytes are read as each native binary form too (PTF's, CHARISMA's, pcap's),
// and the records read must be written back as the very bytes they came from.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <istream>
#include <memory>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <metatf/forms/native.hpp>
#include <metatf/forms/text.hpp>

#include "compile.hpp"
#include "lower/lower.hpp"

namespace rt = metatf::rt;

namespace {

// The DTDs, compiled once as mtf compiles a --dtd file (tools/mtf/common.cpp, load_dtd).
std::vector<metatf::lower::LoweredDtd> compile_dtds() {
    std::vector<metatf::lower::LoweredDtd> out;
    for (const char* name : {"dtds/spc", "dtds/ptf", "dtds/laplace", "dtds/lackey", "dtds/charisma", "dtds/pcap",
                             "tests/fixtures/blkparse", "dtds/msr", "dtds/blkparse", "dtds/strace"}) {
        const std::string path = std::string(METATF_SOURCE_DIR) + "/" + name + ".dtd";
        const metatf::Compilation c = metatf::compile_file(path);
        if (!c.schema) {
            std::fprintf(stderr, "fuzz_text_reader: %s does not compile\n", path.c_str());
            std::abort();
        }
        out.push_back(metatf::lower::lower(*c.schema));
    }
    return out;
}

const std::vector<metatf::lower::LoweredDtd> dtds = compile_dtds();

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

// A record with its own copy of the bytes it views, which the reader reuses at the next line.
struct Owned {
    rt::GenericRecord record;
    std::uint64_t line = 0;  // where it was read
    std::deque<std::string> bytes;  // grows without moving what the values view
};

Owned own(const rt::GenericRecord& record, std::uint64_t line) {
    Owned o{record, line, {}};
    for (rt::GenericValue& v : o.record.values) {
        const std::string& copy = o.bytes.emplace_back(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
        v.bytes = rt::as_bytes(copy);
    }
    return o;
}

// The line a record is written as.
std::string line_of(const rt::DtdDesc& dtd, const rt::GenericRecord& record) {
    std::ostringstream text;
    rt::TextWriter(text, dtd).write(record);
    return text.str();
}

// Writes the records read as one text and reads that back.
void round_trip(const rt::DtdDesc& dtd, const std::deque<Owned>& records) {
    std::ostringstream text;
    rt::TextWriter writer(text, dtd);
    for (const Owned& o : records) {
        try {
            writer.write(o.record);
        } catch (const rt::TextError& e) {
            finding(dtd, o.line, std::string("the writer refuses the record read: ") + e.what());
        }
    }
    writer.close();
    std::istringstream in(text.str());
    rt::GenericRecord again;
    try {
        rt::TextReader reader(in, dtd);
        for (const Owned& o : records) {
            if (!reader.next(again)) finding(dtd, o.line, "the written text ends before this record:\n" + text.str());
            if (again.slot != o.record.slot ? line_of(dtd, again) != line_of(dtd, o.record) : !same(o.record, again)) {
                finding(dtd, o.line, "the record reads back different:\n" + text.str());
            }
        }
        if (reader.next(again)) finding(dtd, 0, "the written text has more records than were read:\n" + text.str());
    } catch (const rt::TextError& e) {
        finding(dtd, 0, std::string("the written text does not read: ") + e.what() + "\n" + text.str());
    }
}

// A small line limit, so that long lines are fuzzed too.
void read_all(const rt::DtdDesc& dtd, const std::uint8_t* data, std::size_t size, bool skip_bad) {
    View buffer(data, size);
    std::istream in(&buffer);
    rt::TextReadOptions options;
    options.skip_bad = skip_bad;
    options.max_line_length = 512;
    std::deque<Owned> records;  // never moved: the values view their own bytes
    try {
        rt::TextReader reader(in, dtd, options);
        rt::GenericRecord record;
        while (reader.next(record)) records.push_back(own(record, reader.line()));
    } catch (const rt::TextError&) {
        // the expected outcome for text that is not records; those before it are still checked
    }
    round_trip(dtd, records);
}

// Whether a native form keeps every byte it reads: no padding it skips, no
// bytes after a C string's NUL.
bool keeps_every_byte(const rt::DtdDesc& dtd, const rt::NativeFormDesc& form) {
    if (form.align != 0) return false;
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        if (dtd.records[slot].predefined != rt::Predefined::none) continue;
        for (std::uint32_t i = 0; i < dtd.records[slot].field_count; ++i) {
            if (form.records[slot].fields[i].kind == rt::NativeKind::chars) return false;
        }
    }
    return true;
}

// Reads the native records at the start of `bytes` and writes them again;
// `read` is set to the bytes of the records read.
std::string rewrite_native(const rt::DtdDesc& dtd, const rt::NativeFormDesc& form, std::string_view bytes, std::uint64_t& read) {
    View buffer(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    std::istream in(&buffer);
    std::optional<rt::NativeReader> reader;
    read = 0;
    try {
        reader.emplace(in, dtd, form, 4096);
    } catch (const rt::TraceError&) {
        return {};  // no magic or header
    }
    std::ostringstream out;
    rt::NativeWriter writer(out, dtd, form);
    read = reader->offset();  // past the last whole record
    rt::GenericRecord record;
    std::uint64_t written = 0;
    while (true) {
        try {
            if (!reader->next(record)) break;
        } catch (const rt::TraceError&) {
            break;  // the expected outcome for bytes that are not records; those before it are still checked
        }
        try {
            writer.write(record);
        } catch (const rt::TraceError& e) {
            finding(dtd, 0, std::string("the native writer refuses a record read: ") + e.what());
        }
        read = reader->offset();
        ++written;
    }
    if (written == 0 && form.header_slot != rt::no_slot) {
        read = 0;  // not even the header record: nothing to write back
        return {};
    }
    writer.close();
    return out.str();
}

// Each native form: the records read, written again, are the very bytes they
// were read from (the header included); in a form that drops padding and
// what follows a C string's NUL, they are once written a second time.
void read_native(const rt::DtdDesc& dtd, const std::uint8_t* data, std::size_t size) {
    for (std::uint32_t k = 0; k < dtd.native_form_count; ++k) {
        const rt::NativeFormDesc& form = dtd.native_forms[k];
        std::uint64_t read = 0;
        const std::string once = rewrite_native(dtd, form, std::string_view(reinterpret_cast<const char*>(data), size), read);
        if (read == 0) continue;
        const std::string_view original(reinterpret_cast<const char*>(data), static_cast<std::size_t>(read));
        const std::string twice = keeps_every_byte(dtd, form) ? std::string(original) : rewrite_native(dtd, form, once, read);
        if (once != twice) finding(dtd, 0, "the native records read are written back as other bytes");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    for (const auto& dtd : dtds) {
        if (dtd.desc().text_form) {
            read_all(dtd.desc(), data, size, false);
            read_all(dtd.desc(), data, size, true);
        }
        if (dtd.desc().native_form_count) read_native(dtd.desc(), data, size);
    }
    return 0;
}
