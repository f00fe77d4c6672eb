// What the runtime knows of a DTD: plain tables, emitted by the C++ back end
// as constants or built from the IR by a DTD-driven tool. The runtime itself
// knows no particular DTD.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "metatf/core/bytes.hpp"
#include "metatf/core/vocabulary.hpp"

namespace metatf::rt {

// A field's encoding: the state metadata records change.
struct Encoding {
    Interp kind = Interp::none;
    std::uint32_t width = 0;    // bytes in each record now
    std::uint32_t restore = 0;  // the last non-zero width, restored by a byte-storing interpretation
    std::uint64_t value = 0;    // default value, base or initial value; predict: the predictors it uses (predictor.hpp)
    std::int64_t stride = 0;
    std::uint8_t section = 0;
    std::uint8_t pool = 0;  // live and predict: the pool its values are taken from (predict: 0 for none)
    std::uint8_t feed = 0;  // the pool its values are added to, 0 for none (any interpretation)
    // What one step of the stored integer is worth under none, baseOffset and
    // delta: the stored integer times the unit is the value, the difference
    // or the offset. Only metadata sets it (a trace's timestamps kept to the
    // nanosecond that all fall on microseconds store microseconds).
    std::uint64_t unit = 1;
    // Under sectionStride, how the section's elements store the value: as
    // it is (sectionStride, the paper's), or under none, baseOffset or delta
    // with the unit, which a `split` metadata record keeps from the field's
    // interpretation (a split stream of time differences).
    Interp element = Interp::section_stride;
};

// The interpretation whose arithmetic a field's stored integers follow:
// its own, or under sectionStride its elements'.
constexpr Interp stored_as(const Encoding& e) { return e.kind == Interp::section_stride ? e.element : e.kind; }

inline constexpr std::int32_t no_field = -1;

// A value of an enumeration, or a bit (or bits) of a flag set, and its name.
struct NamedValue {
    const char* name;
    std::uint64_t value;  // the field's 64 bits (two's complement for a signed field)
};

// What a spec states about an integer field's values (docs/dtd-language.md,
// "Rules"): checked by RuleChecker (rules.hpp), never by the reader itself.
// Bounds are the stored integer (a scaled field's bound times 10^scale).
struct FieldRules {
    bool has_minimum = false;
    bool has_maximum = false;
    std::uint64_t minimum = 0;  // compared as the field's type: signed or unsigned
    std::uint64_t maximum = 0;
    // an enumeration's values by value (as 64-bit words), or a flag set's
    // bits or the parts' masks in the DTD's order
    const NamedValue* names = nullptr;
    std::uint32_t name_count = 0;
    Naming naming = Naming::values;
    Order order = Order::none;  // against the previous value of the field
    // order across record types: the field kind whose values, in every record
    // type, form one sequence; nullptr: each record type's field has its own
    const char* global = nullptr;
    // dense: the values in a trace are dense_start, dense_start + 1, ... up to the largest, each at least once
    bool dense = false;
    std::uint64_t dense_start = 0;
};

struct FieldDesc {
    const char* path;
    Type type;
    std::uint8_t scale;
    std::int32_t width_from;  // index of the field whose value is this bytes field's width, or no_field
    Encoding initial;
    const FieldRules* rules = nullptr;  // none: the DTD states no rule for the field (not in the fingerprint)
    // `value = N`: every record's value of the field is N, which writers
    // store and readers check (not in the fingerprint: the layout is the same)
    bool fixed = false;
    std::uint64_t fixed_value = 0;
    // `history` (docs/dtd-language.md, "Shared histories"): the DTD's table
    // of previous values this field's delta or stride uses and updates, or
    // no_field for the field's own; `history_key`: the earlier field of the
    // record whose value picks the entry, or no_field for one entry. A
    // record with such fields is read and written field by field.
    std::int32_t history = no_field;
    std::int32_t history_key = no_field;
    bool keys_history = false;  // a later field's history_key: its value is kept in FieldState::previous

    // Whether `value` is not the value the DTD fixes for the field.
    constexpr bool breaks_fixed(std::uint64_t value) const { return fixed && value != fixed_value; }
};

// A record's layout as a flat program: a field, or the start or end of a repeated group.
struct LayoutStep {
    enum Op : std::uint8_t { field, repeat, end } op;
    std::uint32_t index;  // field: the field; repeat: the count field; end: unused
};

// Other encodings of a record's fields that the DTD names (`variant NAME
// { ... }`): generated code reads and writes a record whose encodings metadata
// has made equal to a variant's with that variant's layout, known when the
// header is compiled (see VariantMatch in field_state.hpp). Not part of the
// fingerprint: variants change no trace.
struct VariantDesc {
    const char* name;
    const Encoding* fields;  // per field of the record
};

struct RecordDesc {
    const char* name;
    std::uint64_t tag;
    std::uint8_t section;  // 0: global, allowed in every section
    Predefined predefined;
    const FieldDesc* fields;
    std::uint32_t field_count;
    const LayoutStep* layout;
    std::uint32_t layout_count;
    const VariantDesc* variants = nullptr;
    std::uint32_t variant_count = 0;
};

// Whether some field of `r` keeps its previous value in a shared history.
constexpr bool has_history(const RecordDesc& r) {
    for (std::uint32_t f = 0; f < r.field_count; ++f) {
        if (r.fields[f].history != no_field) return true;
    }
    return false;
}

struct SectionDesc {
    std::uint8_t number;
    const char* name;
};

// ---- the native text form (docs/dtd-language.md, "Text forms"): one line per record

struct TextFieldDesc {
    TextFormat format;
    bool ignore_case;     // chars: either case is accepted on input
    const char* chars;    // chars: the characters, value 0 first; otherwise ""
    std::uint8_t digits;  // hex, decimal: the fewest digits written (zeros in front), or 0
    bool upper;           // hex: upper-case digits
    const char* before;   // the text before the value instead of the separator; nullptr: the separator
    const char* after;    // the text after the value, or ""
    std::uint8_t column;  // the width blanks pad the value to, or 0
    bool left;            // column: the value first, then the blanks
    std::uint16_t tab;    // blanks pad the line to this many bytes before the text in front of the value, or 0
};

struct TextRecordDesc {
    const char* mnemonic;          // the line's first token; nullptr: the record has no text form
    const TextFieldDesc* fields;   // per field of the record; the tag's entry gives the text around the mnemonic
};

struct TextFormDesc {
    const char* separator;  // between the tokens of a line
    const char* begin;      // a line before the records, or ""
    const char* end;        // a line after the records, or ""
    const TextRecordDesc* records;  // per slot
    // The fields every record's line starts with before its mnemonic (the
    // DTD's mnemonicAfter), the same in each; 0: the mnemonic starts the line.
    std::uint32_t head = 0;
};

// ---- the native binary form (docs/dtd-language.md, "Native binary forms"): the
// format's own file, each record a type code and then its fields' values

// How a field is stored in a native form.
enum class NativeKind : std::uint8_t {
    value,    // its number (width bytes) or its bytes, as in the DTD
    chars,    // a bytes field held in a C char array of `width` bytes: its text, then NULs
    implied,  // not stored: the length of the chars field it measures, found from the NUL
};

struct NativeFieldDesc {
    std::uint32_t width;  // bytes in the native record (value: 0 for bytes whose length field gives it)
    NativeKind kind;
};

struct NativeRecordDesc {
    bool held;            // false: the form has no such record ('tag.code = none')
    std::uint64_t code;   // the record's type code
    const NativeFieldDesc* fields;  // per field, the tag's entry first
};

// A native form's header_slot when the file does not start with a record.
inline constexpr std::uint32_t no_slot = 0xffffffff;

struct NativeFormDesc {
    const char* name;              // "" for a DTD's one unnamed form
    ByteOrder order;
    std::uint8_t code_width;       // bytes of the type code that starts each record
    std::uint8_t align;            // 0: packed; N: C alignment, each number at its size up to N bytes
    bool high_bits_first;          // a field's parts ('bits') are allocated from its most significant bit
    const char* header_end;        // the line that ends an ASCII header, or nullptr for none
    const std::uint8_t* magic;     // the bytes the file starts with (before any header)
    std::uint32_t magic_size;
    const NativeRecordDesc* records;  // per slot (unused for the predefined records)
    std::uint32_t header_slot;     // the record the file starts with, without a type code, or no_slot
};

struct DtdDesc {
    const char* name;
    const char* text;  // the DTD source, embedded in every trace
    std::uint32_t tag_width;
    const SectionDesc* sections;
    std::uint32_t section_count;
    const RecordDesc* records;  // slot order: records[i] is slot i
    std::uint32_t record_count;
    const TextFormDesc* text_form;  // the native text form, or nullptr (not part of the fingerprint)
    const NativeFormDesc* native_forms;  // the native binary forms (not part of the fingerprint)
    std::uint32_t native_form_count;
};

// A hash of everything in a DTD that decides how its traces are laid out
// (tags, sections, fields, types, initial encodings, repetition), but not of
// its comments or spelling. Traces carry it, and a reader checks it.
std::uint64_t fingerprint(const DtdDesc& dtd);

// The number of shared histories (FieldDesc::history) in a DTD's records.
std::uint32_t history_count(const DtdDesc& dtd);

// What is wrong with `value` of field `f` of record `r`, which is not the
// field's fixed value (FieldDesc::fixed): readers and text readers say it.
std::string not_fixed_message(const RecordDesc& r, const FieldDesc& f, std::uint64_t value);

// Whether the DTD declares section `number` (1-255).
bool defines_section(const DtdDesc& dtd, std::uint8_t number);

// Whether section `number` is a table: some field's initial encoding is
// sectionOffset into it (its records are read back out of sequence, with
// the DTD's initial encodings). With number -1: whether the DTD has a table.
bool table_section(const DtdDesc& dtd, int number);

// Whether some field's initial interpretation is `intern`.
bool declares_intern(const DtdDesc& dtd);

// The record type whose fields hold `field`, or nullptr.
const RecordDesc* record_of(const DtdDesc& dtd, const FieldDesc& field);

// Why field `f` of `r` cannot be under `intern`, or nothing when it can: it
// is an unsigned field outside repeated groups, with no shared history, the
// length of one bytes field only, which follows it at once.
std::optional<std::string> intern_problem(const RecordDesc& r, std::uint32_t f);

}  // namespace metatf::rt
