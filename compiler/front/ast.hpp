// The syntax tree of a Meta-TF DTD, exactly as written: no names are resolved here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <metatf/core/vocabulary.hpp>

#include "../diagnostics.hpp"

namespace metatf::ast {

namespace rt = metatf::rt;

struct Name {
    std::string text;
    Location where;
};

// An integer literal: decimal or 0x-hex, with an optional leading '-'.
struct Integer {
    bool negative = false;
    std::uint64_t magnitude = 0;
    std::string text;
    Location where;
};

// `a.b.value` or `tag.width`: a path of field names and the property read from it.
struct Reference {
    std::vector<Name> path;
    Name property;
};

// A section named by number (`sectionOffset 2`) or by name (`sectionOffset strings`).
using SectionRef = std::variant<Integer, Name>;

using InterpretationKind = rt::Interp;

struct Interpretation {
    InterpretationKind kind = InterpretationKind::none;
    Location where;                     // of the keyword
    std::optional<Integer> first;       // default value, base, initial value, live's pool
    std::optional<Integer> step;        // stride
    std::optional<SectionRef> section;  // sectionOffset, sectionStride
};

// `unsigned`, `signed`, `float` or `bytes`.
struct TypeName {
    Name name;
};

// A string literal, escapes decoded.
struct String {
    std::string value;
    Location where;
};

// A field's text format: `decimal`, `hex`, `chars "RW" ignoreCase`, `string`, `line` or `omit`,
// with `digits N` (decimal, hex), `upper` (hex) and `column N [left]` (all but line and omit).
using TextFormatKind = rt::TextFormat;
struct TextFormat {
    TextFormatKind kind = TextFormatKind::decimal;
    Location where;
    String chars;  // chars only
    bool ignore_case = false;
    std::optional<Integer> digits;
    bool upper = false;
    std::optional<Integer> column;  // `column N`: the width blanks pad the value to
    bool left = false;              // `column N left`: the blanks after the value
    std::optional<Integer> tab;     // `tab N`: blanks pad the line to N bytes before the value's text
};

// `{ read = 1, write = 2 }`: an enumeration's values or a flag set's bits, named.
struct NamedNumber {
    Name name;
    Integer number;
};
struct NameList {
    Location where;
    std::vector<NamedNumber> items;
};

// `nondecreasing`, `increasing`, either followed by `global`.
struct OrderValue {
    rt::Order order = rt::Order::none;
    bool global = false;
    Location where;
};

// `global` (no key) or `per FIELD`: where a field's previous value is kept.
struct HistoryValue {
    std::optional<Name> key;
    Location where;
};

// An interpretation is held by pointer: it is three times the size of any other
// value, and a DTD may hold millions of properties.
using InterpretationPtr = std::unique_ptr<Interpretation>;
using Value = std::variant<Integer, Reference, InterpretationPtr, TypeName, String, TextFormat, NameList, OrderValue, HistoryValue>;

// `target.property = value;`, with target a path of one or more field names.
struct Property {
    std::vector<Name> target;
    Name property;
    Value value;
};

struct RecordDef;

struct Field;
using FieldPtr = std::unique_ptr<Field>;

// A field as written in a record definition.
struct Field {
    struct Named {  // `size`: a field kind or a record used as a field
        Name name;
    };
    struct Composite {  // `(a, b, ...)`
        Location where;
        std::vector<FieldPtr> members;
    };
    struct Repeat {  // `count*element`
        Name count;
        FieldPtr element;
    };
    struct Nested {  // `name : field { ... }` written inside another record
        std::unique_ptr<RecordDef> def;
    };
    std::variant<Named, Composite, Repeat, Nested> node;
};

struct RecordDef {
    Name name;
    FieldPtr field;
    std::vector<Property> properties;
};

struct Section {
    Name name;
    Integer number;
    std::vector<RecordDef> records;
    std::vector<Property> properties;
};

// `text { name = "value"; ... }`: the DTD's text form.
struct TextSetting {
    Name name;
    String value;
};
struct TextBlock {
    Location where;
    std::vector<TextSetting> settings;
};

// `native NAME { name = value; sizeof(ctype) = N; ... }`: a value is a
// number, several numbers separated by commas, a string or a word.
struct NativeSetting {
    Name name;              // "sizeof" for `sizeof(ctype) = N;`
    std::optional<Name> of;  // sizeof: the C type
    std::variant<Integer, String, Name, std::vector<Integer>> value;
};
struct NativeBlock {
    Location where;
    std::optional<Name> name;  // none for a DTD's one unnamed form
    std::vector<NativeSetting> settings;
};

// `variant NAME { record.field.property = value; ... }`: other encodings of
// the records it names, for which generated code is specialized.
struct Variant {
    Name name;
    std::vector<Property> properties;
};

struct Dtd {
    std::shared_ptr<const SourceFile> source;
    std::vector<Variant> variants;
    std::vector<TextBlock> text_blocks;
    std::vector<NativeBlock> native_blocks;
    std::vector<RecordDef> records;
    std::vector<Property> properties;
    std::vector<Section> sections;
};

}  // namespace metatf::ast
