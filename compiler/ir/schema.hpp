// The resolved model of a DTD: the only thing back ends and tools read.
//
// Every field here has a concrete type, width and interpretation; names are
// resolved, properties inherited and references turned into field indices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <metatf/core/bytes.hpp>
#include <metatf/core/descriptor.hpp>
#include <metatf/core/vocabulary.hpp>

namespace metatf::ir {

namespace rt = metatf::rt;

// The shared words (runtime/include/metatf/core/vocabulary.hpp).
using rt::Interp;
using rt::name;
using rt::stores_bytes;
using Type = rt::Type;
using InterpretationKind = rt::Interp;
using TextFormat = rt::TextFormat;
using Predefined = rt::Predefined;

struct Interpretation {
    InterpretationKind kind = InterpretationKind::none;
    // The default value, base or initial value, as the field's 64 bits
    // (two's complement for a signed field).
    std::uint64_t value = 0;
    std::int64_t stride = 0;    // stride and sectionStride
    std::uint8_t section = 0;   // sectionOffset and sectionStride: the section's number
    std::uint8_t pool = 0;      // live: the pool its values are taken from

    bool operator==(const Interpretation&) const = default;
};

struct FieldText {
    TextFormat format = TextFormat::decimal;
    std::string chars;         // chars: the characters, value 0 first
    bool ignore_case = false;  // chars: either case accepted on input
    std::uint8_t digits = 0;   // decimal, hex: the fewest digits written, zeros in front (0: no padding)
    bool upper = false;        // hex: upper-case digits
    std::uint8_t column = 0;   // the width blanks pad the value to (0: none)
    bool left = false;         // with a column: the value first, the blanks after it
    std::uint16_t tab = 0;     // blanks pad the line to this many bytes before the value's text (0: none)
    std::optional<std::string> before;  // written before the value instead of the separator
    std::string after;                  // written after the value

    bool operator==(const FieldText&) const = default;
};

// A name for one value of an enumeration, or for a bit (or bits) of a flag set.
struct NamedValue {
    std::string name;
    std::uint64_t value = 0;  // the field's 64 bits (two's complement for a signed field)

    bool operator==(const NamedValue&) const = default;
};

// What a spec states about an integer field's values (rt::FieldRules).
struct FieldRules {
    std::optional<std::uint64_t> minimum;  // the stored integer, compared as the field's type
    std::optional<std::uint64_t> maximum;
    std::vector<NamedValue> names;  // an enumeration's values, a flag set's bits, or the parts' masks
    rt::Naming naming = rt::Naming::values;
    rt::Order order = rt::Order::none;
    std::string global;  // order across record types: the field kind whose values form one sequence, or ""
    std::optional<std::uint64_t> dense;  // the values in a trace run from this one up, with no gap

    bool empty() const { return !minimum && !maximum && names.empty() && order == rt::Order::none && !dense; }
    bool operator==(const FieldRules&) const = default;
};

struct Field {
    std::uint32_t index = 0;  // position in the record, counting the tag as 0
    std::string path;         // name within the record: "size", "vfield.length"
    std::string kind;         // the field kind whose properties it inherits: "address" for "oldAddress"
    Type type = Type::unsigned_int;
    std::uint32_t scale = 0;  // integer types: the value is the stored integer / 10^scale

    // Bytes the field takes in a record under its interpretation (0 when the
    // interpretation stores none, or when `width_from` gives the width).
    std::uint32_t width = 0;
    // A `bytes` field whose width is the value of an earlier field of the record.
    std::optional<std::uint32_t> width_from;
    // The width a metadata change back to a byte-storing interpretation restores
    // (the last non-zero width); 0 when the DTD gives none.
    std::uint32_t restore_width = 0;
    Interpretation interpretation;
    std::uint8_t feed = 0;  // the pool its values join (docs/trace-format.md, section 5.1), 0 for none
    FieldText text;  // meaningful when the record has a text form
    std::string ctype;  // the C type whose size a native form gives this field, or ""
    // `value = N`: the field's fixed value (its 64 bits), which writers store and readers check
    std::optional<std::uint64_t> value;
    FieldRules rules;
    // `history`: the previous value is shared across record types by the
    // field's path, one per value of the field `history_key` names ("": one).
    bool history = false;
    std::string history_key;
};

// A field's encoding in a variant (Record::variants): what metadata may set.
struct VariantField {
    std::uint32_t width = 0;
    std::uint32_t restore_width = 0;
    Interpretation interpretation;

    bool operator==(const VariantField&) const = default;
};

// `variant NAME { ... }`: other encodings of a record's fields, for which
// generated code has a path of its own (docs/dtd-language.md, "Variants").
struct Variant {
    std::string name;
    std::vector<VariantField> fields;  // indexed like Record::fields
};

// How a native form stores a field (rt::NativeKind says what each kind means).
struct NativeField {
    std::uint32_t width = 0;  // bytes; 0 for implied, and for bytes whose length field gives it
    rt::NativeKind kind = rt::NativeKind::value;
};

// The record's fields in order; repeated groups nest.
struct Repeat;
using LayoutItem = std::variant<std::uint32_t, Repeat>;  // a field index, or a repeated group
struct Repeat {
    std::uint32_t count = 0;  // index of the field whose value is the number of repetitions
    std::vector<LayoutItem> items;
};

struct Record {
    std::string name;
    std::uint64_t tag = 0;
    std::uint8_t section = 0;  // 0: the global part, allowed in every section
    Predefined predefined = Predefined::none;
    std::vector<Field> fields;       // indexed by Field::index
    std::vector<LayoutItem> layout;  // the same fields, with repetition
    // The record's first token in the text form ("" for none); no value: no text form.
    std::optional<std::string> mnemonic;
    // The record's type code in the native binary forms (its tag unless set);
    // none when the DTD has no native form or says 'tag.code = none'.
    std::optional<std::uint64_t> code;
    // Per native form (Schema::native), how it stores each field; empty for the predefined records.
    std::vector<std::vector<NativeField>> native;
    std::vector<Variant> variants;  // in the DTD's order
};

struct Section {
    std::uint8_t number = 0;
    std::string name;
};

// The DTD's native text form: one line per record, tokens joined by a separator.
struct TextForm {
    std::string separator;
    std::string begin;  // a line before the records, or empty
    std::string end;    // a line after them, or empty
    // mnemonicAfter: the field the mnemonic follows; every record's line
    // starts with the same `head` fields, up to it (0: the mnemonic starts the line).
    std::string mnemonic_after;
    std::uint32_t head = 0;
};

// A DTD's native binary form: magic bytes, an ASCII header, then each record
// as its type code and its fields' values, packed or with C alignment.
struct NativeForm {
    std::string name;  // "" for a DTD's one unnamed form
    rt::ByteOrder order = rt::ByteOrder::big;
    std::uint32_t code_width = 1;           // bytes of the type code
    std::optional<std::string> header_end;  // the line that ends an ASCII header
    std::optional<std::uint32_t> header_record;  // the record (index) the file starts with, without a type code
    std::uint32_t align = 0;                // 0: packed; N: numbers aligned at their size, up to N
    bool high_bits_first = false;           // parts ('bits') allocated from a field's most significant bit
    std::vector<std::uint8_t> magic;        // the bytes that start a file, in the form's order
    std::vector<std::pair<std::string, std::uint32_t>> sizes;  // sizeof(ctype) = N, in the DTD's order
};

struct Schema {
    std::string name;  // the DTD's name: its file name without directory and extension
    std::uint32_t tag_width = 1;
    std::vector<Section> sections;  // in number order
    std::vector<Record> records;    // by section number, then tag
    std::optional<TextForm> text;   // the native text form, if the DTD gives one
    std::vector<NativeForm> native;  // the native binary forms the DTD gives
    std::string source;             // the DTD's text, which every trace carries
};

}  // namespace metatf::ir
