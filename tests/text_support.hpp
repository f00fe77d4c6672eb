// Helpers of the tests that read and write text forms through the runtime's
// generic TextReader and TextWriter.
#pragma once

#include <sstream>
#include <string>

#include <metatf/forms/text.hpp>

namespace metatf::test {

// Reads `text` with `dtd`'s text form and writes each record back: its canonical form.
inline std::string normalized(const rt::DtdDesc& dtd, const std::string& text) {
    std::istringstream in(text);
    std::ostringstream out;
    rt::TextReader reader(in, dtd);
    rt::TextWriter writer(out, dtd);
    rt::GenericRecord record;
    while (reader.next(record)) writer.write(record);
    writer.close();
    return out.str();
}

// The error reading `text` gives, or "no error".
inline std::string text_error(const rt::DtdDesc& dtd, const std::string& text) {
    try {
        normalized(dtd, text);
    } catch (const rt::TextError& e) {
        return e.what();
    }
    return "no error";
}

// The line `dtd`'s text form writes for `r`.
inline std::string written(const rt::DtdDesc& dtd, const rt::GenericRecord& r) {
    std::ostringstream out;
    rt::TextWriter writer(out, dtd);
    writer.write(r);
    return out.str();
}

}  // namespace metatf::test
