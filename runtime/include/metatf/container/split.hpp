// Split streams chosen when a trace is written (docs/trace-format.md, 5.2):
// the value sections a writer adds to a DTD so that fields stride through
// sections of their own, without the DTD being edited.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatf/core/descriptor.hpp"

namespace metatf::rt {

// The embedded DTD text of a trace with added sections: the DTD's own text,
// then this line, then one line `section split_N N { }` per added section.
inline constexpr std::string_view added_sections_marker = "\n// Value sections added by the writer for split streams:\n";

// The lines a writer appends to the DTD text for sections `numbers`.
std::string added_sections_text(std::span<const std::uint8_t> numbers);

// A trace's embedded DTD text, split into the DTD's own text and the
// numbers of the sections the writer added. Lines of any other form after
// the marker are a bad_header TraceError; `offset` is the text's in the file.
struct EmbeddedDtd {
    std::string_view own;
    std::vector<std::uint8_t> added;
};
EmbeddedDtd split_embedded_dtd(std::string_view text, std::uint64_t offset);

// A DTD's tables with the added sections in its section table; the rest
// is the DTD's own. The fingerprint stays the DTD's (computed from it).
class DtdWithSections {
public:
    // A number the DTD declares is a bad_header TraceError at `offset`.
    DtdWithSections(const DtdDesc& dtd, std::span<const std::uint8_t> added, std::uint64_t offset);
    DtdWithSections(const DtdWithSections&) = delete;
    DtdWithSections& operator=(const DtdWithSections&) = delete;
    const DtdDesc& desc() const { return desc_; }

private:
    std::vector<std::string> names_;
    std::vector<SectionDesc> sections_;
    DtdDesc desc_;
};

// A field routed to a section of its own (WriterOptions::split).
struct SplitField {
    std::uint32_t slot, field;
    std::uint8_t section;
};

// The fields `names` name, with their sections: each name is
// "record.field", or several joined by '+' that share one section (their
// values interleave there in the order they are written). Each name takes
// the lowest section number the DTD leaves free, in order. A field that is
// not an integer field of one global record, or more names than free
// numbers, is a usage TraceError.
std::vector<SplitField> split_fields(const DtdDesc& dtd, std::span<const std::string> names);
// Their sections, each once.
std::vector<std::uint8_t> sections_of(std::span<const SplitField> fields);

}  // namespace metatf::rt
