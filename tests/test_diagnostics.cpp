// Diagnostics: malformed DTDs, each with the exact errors it must produce, and their rendering.
#include "support.hpp"

namespace {

using metatf::test::briefs;

const std::string expected_value =
    "expected a value: an integer, a string, a field reference such as 'length.value', an interpretation (none, "
    "default, baseOffset, delta, stride, sectionOffset, sectionStride, live, predict, intern), a type (unsigned, signed, float, bytes), a "
    "text format (decimal, hex, chars \"...\", string, line, nested, omit, enum, clock), names such as '{ read = 1, write = 2 }', an order "
    "(nondecreasing, increasing) or a history (global, per FIELD)";

struct Case {
    std::string dtd;
    std::vector<std::string> diagnostics;
};

// One malformed DTD a line, with every diagnostic it yields ("LINE:COL: severity: message").
const std::vector<Case> malformed = {
    {"x.width = 4",
     {"1:12: error: expected ';' after the property value"}},
    {"x.width 4;",
     {"1:9: error: expected '=' after the property name"}},
    {"x. = 4;",
     {"1:4: error: expected a property name after '.'"}},
    {"x.width = ;",
     {"1:11: error: " + expected_value}},
    {"x.width = delat 0;",
     {"1:11: error: " + expected_value}},
    {"x.interpretation = default a.value;",
     {"1:28: error: an interpretation's argument is a number, not a field's value (docs/dtd-language.md, decision 41)"}},
    {"x.interpretation = sectionStride s n.value;",
     {"1:36: error: an interpretation's argument is a number, not a field's value (docs/dtd-language.md, decision 41)"}},
    {"x.interpretation = default;",
     {"1:27: error: expected the default value (an integer) after 'default'"}},
    {"x.interpretation = baseOffset;",
     {"1:30: error: expected the base (an integer) after 'baseOffset'"}},
    {"x.interpretation = delta x;",
     {"1:26: error: expected the initial value (an integer) after 'delta'"}},
    {"x.interpretation = stride 1;",
     {"1:28: error: expected the stride (an integer)"}},
    {"x.interpretation = stride;",
     {"1:26: error: expected the initial value (an integer) after 'stride'"}},
    {"x.interpretation = sectionOffset;",
     {"1:33: error: expected a section number or section name"}},
    {"x.interpretation = sectionStride s;",
     {"1:35: error: expected the stride (an integer)"}},
    {"a : ;",
     {"1:5: error: expected a field: a name, 'count*field', 'name : field' or '(field, ...)'"}},
    {"a : (b, c;",
     {"1:10: error: expected ',' or ')' in the field list"}},
    {"a : (b c)",
     {"1:8: error: expected ',' or ')' in the field list"}},
    {"a : (b, ) ",
     {"1:9: error: expected a field: a name, 'count*field', 'name : field' or '(field, ...)'"}},
    {"a : n*;",
     {"1:7: error: expected the repeated field after '*': a name or '(field, ...)'"}},
    {"a : b { b.width = 1 }",
     {"1:21: error: expected ';' after the property value"}},
    {"a : b { width = 1; }",
     {"1:15: error: expected a property 'field.property = value;' or '}'"}},
    {"a (b)",
     {"1:3: error: expected ':' (to define a record) or '.' (to set a property) after the name"}},
    {"section { }",
     {"1:9: error: expected a section name after 'section'"}},
    {"section s { }",
     {"1:11: error: expected the section number (an integer) after the section name"}},
    {"section s 1 a : b",
     {"1:13: error: expected '{' to open the section"}},
    {"section s 1 { a : b",
     {"1:20: error: expected '}' to end the section"}},
    {"section s 1 { 5 }",
     {"1:15: error: expected a record definition 'name : field', a property 'field.property = value;' or '}' to end the section"}},
    {"@",
     {"1:1: error: expected a record definition 'name : field', a property 'field.property = value;', a section, a text block or a variant"}},
    {"a : b /* never closed",
     {"1:22: error: unterminated comment: '/*' has no matching '*/'"}},
    {"x.width = 0x;",
     {"1:11: error: " + expected_value}},
    {"x.width = 18446744073709551616;",
     {"1:11: error: integer '18446744073709551616' does not fit in 64 bits"}},
    {"tag.width = 2; tag.width = 2;",
     {"1:16: error: 'tag.width' is already set in the global scope"}},
    {"tag.width = 9;",
     {"1:13: error: the tag's width must be a number of bytes from 1 to 8"}},
    {"tag.interpretation = none;",
     {"1:5: error: the tag's interpretation is always 'none' and cannot be set"}},
    {"section s 1 { tag.width = 2; }",
     {"1:15: error: the tag's width is set once, globally, not in section 's'"}},
    {"x.width = 1; a : x { tag.value = 4; tag.width = 2; }",
     {"1:41: error: the tag's width is set once, globally ('tag.width = N;' outside any record)"}},
    {"x.width = 1; a : x { tag.value = 256; }",
     {"1:34: error: tag 256 does not fit in the 1-byte tag (set a wider 'tag.width')"}},
    {"x.width = 1; a : x { tag.value = -1; }",
     {"1:34: error: 'tag.value' takes a non-negative integer"}},
    {"x.width = 1; a : x { tag.value = 1; }",
     {"1:34: error: tag 1 is reserved for the predefined record 'comment'"}},
    {"x.width = 1; a : x { tag.value = 4; } b : x { tag.value = 4; }",
     {"1:59: error: tag 4 is already used by record 'a'"}},
    {"x.width = 1; a : x { tag.value = 4; tag.value = 5; }",
     {"1:37: error: 'tag.value' is already set in record 'a'"}},
    {"x.width = 1; a : (x, tag) { tag.value = 4; }",
     {"1:22: error: 'tag' must be the first field of record 'a'"}},
    {"x.width = 1; h : (tag, x) a : (h) { tag.value = 4; }",
     {"1:19: error: 'tag' can only be the first field of a record that sets 'tag.value'"}},
    {"x.width = 1; h : (tag, x)",
     {"1:14: warning: record 'h' is never used: it sets no 'tag.value', so it cannot appear in a trace, and no record uses it as a field",
      "1:19: error: record 'h' has a 'tag' field but sets no 'tag.value'"}},
    {"a : x { tag.value = 4; }",
     {"1:5: error: field 'x' of record 'a' has no width; set 'x.width' in the record, its section or globally"}},
    {"a : x { tag.value = 4; x.widht = 1; }",
     {"1:26: error: unknown property 'widht'; did you mean 'width'? (the properties are width, interpretation, value, type, scale, feed, text, mnemonic, before, after, code, ctype, minimum, maximum, enum, flags, bits, order, dense and history)"}},
    {"x.width = 1; a : x { tag.value = 4; y.width = 1; }",
     {"1:37: error: record 'a' has no field 'y'; did you mean 'x'?"}},
    {"x.width = 1; a : x { tag.value = 4; x.width = 1; x.width = 2; }",
     {"1:50: error: 'x.width' is already set in record 'a'"}},
    {"x.width = 1; x.width = 2;",
     {"1:1: warning: 'x.width' has no effect: no field of the records defined here is named 'x'",
      "1:14: error: 'x.width' is already set in the global scope"}},
    {"x.width = 1; a : x { tag.value = 4; x.value = 300; }",
     {"1:47: error: value 300 does not fit field 'x' of record 'a', which takes 1 byte"}},
    {"x.width = 2; x.value = -1; a : x { tag.value = 4; }",
     {"1:24: error: value -1 is negative, but field 'x' of record 'a' is unsigned"}},
    {"x.width = 1; a : x { tag.value = 4; x.interpretation = default 5; x.value = 3; }",
     {"1:77: error: 'value' fixes field 'x' of record 'a' at 3, but its interpretation 'default' gives it another value"}},
    {"a : (n, x) { tag.value = 4; n.width = 1; x.type = bytes; x.width = n.value; x.value = 1; }",
     {"1:87: error: 'value' applies to integer fields; field 'x' of record 'a' is 'bytes'"}},
    {"x.width = 1; a : x { tag.value = 4; x.value = \"A\"; }",
     {"1:47: error: 'value' takes an integer, as in 'magic.value = 0x4d54;'"}},
    {"comment.length.width = 3;",
     {"1:24: error: a comment's length takes 1 or 2 bytes (up to 255 or 65,535 bytes of text)"}},
    {"comment.data.width = 2;",
     {"1:1: error: of the predefined records, a DTD sets only the width of a comment's length, as in 'comment.length.width = 2;'"}},
    {"metadata.field.width = 2;",
     {"1:1: error: of the predefined records, a DTD sets only the width of a comment's length, as in 'comment.length.width = 2;'"}},
    {"section s 1 { comment.length.width = 2; }",
     {"1:15: error: a comment's length width is set once, globally, not in section 's'"}},
    {"comment.length.width = 2; comment.length.width = 2;",
     {"1:27: error: 'comment.length.width' is already set"}},
    {"x.width = 0; a : x { tag.value = 4; x.value = 5; }",
     {"1:47: error: value 5 does not fit field 'x' of record 'a', which takes 0 bytes"}},
    {"x.width = 1; x.value = 256; a : x { tag.value = 4; }",
     {"1:24: error: value 256 does not fit field 'x' of record 'a', which takes 1 byte"}},
    {"a.b.width = 1;",
     {"1:3: error: a property outside a record names one field kind, not a path; set 'a.b.width' inside the record's '{ ... }'"}},
    {"x.width = 9; a : x { tag.value = 4; }",
     {"1:11: error: width 9 is too wide for field 'x' of record 'a': unsigned fields take 0 to 8 bytes"}},
    {"x.width = 70000; a : x { tag.value = 4; }",
     {"1:11: error: width 70000 is out of range: a width is a number of bytes from 0 to 65535"}},
    {"x.width = 4; x.type = float; x.interpretation = delta 0; a : x { tag.value = 4; }",
     {"1:49: error: interpretation 'delta' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"x.width = 2; x.type = float; a : x { tag.value = 4; }",
     {"1:11: error: width 2 does not suit field 'x' of record 'a': float fields take 4 or 8 bytes"}},
    {"x.width = 1; x.type = 4; a : x { tag.value = 4; }",
     {"1:23: error: 'type' takes unsigned, signed, float or bytes"}},
    {"x.width = none; a : x { tag.value = 4; }",
     {"1:11: error: 'width' takes a number of bytes or a reference such as 'length.value'"}},
    {"x.width = 1; x.interpretation = unsigned; a : x { tag.value = 4; }",
     {"1:33: error: 'interpretation' takes none, default, baseOffset, delta, stride, sectionOffset, sectionStride, live, predict or intern"}},
    {"x.width = 1; x.scale = 20; a : x { tag.value = 4; }",
     {"1:24: error: 'scale' takes a number of decimal places from 0 to 19"}},
    {"x.width = 4; x.type = float; x.scale = 2; a : x { tag.value = 4; }",
     {"1:40: error: 'scale' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"x.width = 1; x.interpretation = default -3; a : x { tag.value = 4; }",
     {"1:41: error: value -3 is negative, but field 'x' of record 'a' is unsigned"}},
    {"x.width = 1; x.type = signed; x.interpretation = default -9223372036854775809; a : x { tag.value = 4; }",
     {"1:58: error: value -9223372036854775809 does not fit the signed field 'x' of record 'a'"}},
    {"x.width = 1; x.interpretation = stride 0 0x8000000000000000; a : x { tag.value = 4; }",
     {"1:42: error: stride 0x8000000000000000 does not fit in a signed 64-bit integer"}},
    {"x.width = 1; x.interpretation = sectionOffset 3; a : x { tag.value = 4; }",
     {"1:47: error: there is no section number 3"}},
    {"x.width = 1; x.interpretation = sectionOffset strngs; section strings 1 { } a : x { tag.value = 4; }",
     {"1:47: error: there is no section 'strngs'; did you mean 'strings'?"}},
    {"a : (tag, len, s) { tag.value = 4; len.width = 1; s.width = len.size; }",
     {"1:65: error: a width can refer to a field's 'value' or 'width', not its 'size'"}},
    {"a : (tag, s, len) { tag.value = 4; len.width = 1; s.width = len.value; }",
     {"1:61: error: the width reference 'len' must name an earlier field of record 'a'"}},
    {"a : (tag, len, s) { tag.value = 4; len.width = 1; len.type = signed; s.width = len.value; }",
     {"1:80: error: the width of 's' comes from 'len', which must be a plain unsigned integer field, but it is 'signed'"}},
    {"a : (tag, len, s) { tag.value = 4; len.width = 1; s.type = unsigned; s.width = len.value; }",
     {"1:80: error: only a 'bytes' field can take its width from another field; field 's' of record 'a' is 'unsigned'"}},
    {"a : (tag, len, s) { tag.value = 4; len.width = 1; s.width = len.value; s.interpretation = default 0; }",
     {"1:91: error: interpretation 'default' applies to integer fields; field 's' of record 'a' is 'bytes'"}},
    {"a : (tag, n, n*x) { tag.value = 4; n.width = 4; n.type = float; x.width = 1; }",
     {"1:14: error: the repeat count 'n' must be a plain unsigned integer field, but it is 'float'"}},
    {"a : (tag, n, n*x) { tag.value = 4; n.width = 1; n.type = float; x.width = 1; }",
     {"1:46: error: width 1 does not suit field 'n' of record 'a': float fields take 4 or 8 bytes"}},
    {"a : (tag, n, n*x) { tag.value = 4; n.width = 1; n.scale = 2; x.width = 1; }",
     {"1:14: error: the repeat count 'n' must be a plain unsigned integer field, but it has scale 2"}},
    {"a : (tag, tag*x) { tag.value = 4; x.width = 1; }",
     {"1:11: error: the repeat count 'tag' must be a plain unsigned integer field, but it is the record's tag"}},
    {"a : (tag, s) { tag.value = 4; s.width = tag.value; }",
     {"1:41: error: the width of 's' comes from 'tag', which must be a plain unsigned integer field, but it is the record's tag"}},
    {"a : (tag, x, tag) { tag.value = 4; x.width = 1; }",
     {"1:14: error: record 'a' lists 'tag' twice",
      "1:14: error: 'tag' must be the first field of record 'a'"}},
    {"section s -3 { } x.width = 1; x.interpretation = sectionOffset 3; a : x { tag.value = 4; }",
     {"1:11: error: section number -3 is out of range: sections are numbered 1 to 255",
      "1:64: error: there is no section number 3"}},
    {"section s 1 { } r : (tag, a) { tag.value = 4; a.interpretation = sectionStride s 1; }",
     {"1:66: error: field 'a' of record 'r' strides through a section, so it needs the width of the section's elements: set 'a.width'"}},
    {"section s 1 { } r : (tag, a) { tag.value = 4; a.width = 8; a.interpretation = sectionStride s -1; }",
     {"1:95: error: the stride of 'sectionStride' counts elements forward and must be positive"}},
    {"section tag 1 { }",
     {"1:9: error: 'tag' is reserved and cannot name a section"}},
    // Pools of live values (section 9).
    {"x.interpretation = live;",
     {"1:24: error: expected the pool (a number from 1 to 4) after 'live'"}},
    {"a : (tag, x) { tag.value = 4; x.width = 2; x.interpretation = live 0; }",
     {"1:68: error: there is no pool 0 (pools are 1 to 4)"}},
    {"a : (tag, x) { tag.value = 4; x.width = 2; x.interpretation = live 5; }",
     {"1:68: error: there is no pool 5 (pools are 1 to 4)"}},
    {"a : (tag, x) { tag.value = 4; x.width = 0; x.interpretation = live 1; }",
     {"1:63: error: field 'x' of record 'a' refers to live values, so it needs a width of 1 to 8 bytes for its counts: "
      "set 'x.width'"}},
    // predict (docs/dtd-language.md, section 9): a pool or none, and a width for the codes.
    {"a : (tag, x) { tag.value = 4; x.width = 2; x.interpretation = predict 5; }",
     {"1:71: error: there is no pool 5 (pools are 1 to 4, and 0 refers to none)"}},
    {"a : (tag, x) { tag.value = 4; x.width = 0; x.interpretation = predict; }",
     {"1:63: error: field 'x' of record 'a' stores predictor codes, so it needs a width of 1 to 8 bytes for them: "
      "set 'x.width'"}},
    {"a : (tag, x) { tag.value = 4; x.width = 4; x.type = float; x.interpretation = predict 1; }",
     {"1:79: error: interpretation 'predict' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"section s 1 { } a : (tag, x) { tag.value = 4; x.width = 1; x.interpretation = predict; } "
     "b : (tag, y) { tag.value = 5; y.width = 1; y.interpretation = sectionOffset s; }",
     {"1:79: error: a DTD with tables (sectionOffset fields) has no pools of live values and no predict fields"}},
    {"a : (tag, x) { tag.value = 4; x.width = 8; x.feed = 5; }",
     {"1:53: error: there is no pool 5 (pools are 1 to 4, and 0 feeds none)"}},
    {"a : (tag, x) { tag.value = 4; x.width = 8; x.feed = live 1; }",
     {"1:53: error: 'feed' takes the number of a pool, 1 to 4, or 0 for none"}},
    {"a : (tag, x) { tag.value = 4; x.width = 8; x.type = float; x.feed = 1; }",
     {"1:69: error: 'feed' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"section s 1 { } a : (tag, x) { tag.value = 4; x.width = 8; x.feed = 1; } "
     "b : (tag, y) { tag.value = 5; y.width = 1; y.interpretation = sectionOffset s; }",
     {"1:69: error: a DTD with tables (sectionOffset fields) has no pools of live values and no predict fields"}},
    // Shared histories (docs/dtd-language.md, section 9).
    {"a : (tag, x) { tag.value = 4; x.width = 4; x.type = float; x.history = global; }",
     {"1:72: error: 'history' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"a : (tag, x, k) { tag.value = 4; x.width = 1; k.width = 1; x.history = per k; }",
     {"1:76: error: the history key 'k' must name an earlier field of record 'a'"}},
    {"a : (tag, x) { tag.value = 4; x.width = 1; x.history = per z; }",
     {"1:60: error: record 'a' has no field 'z'; did you mean 'x'?"}},
    {"a : (tag, x) { tag.value = 4; x.width = 1; x.history = 3; }",
     {"1:56: error: 'history' takes 'global' (one previous value across record types) or 'per FIELD' (one per value of an "
      "earlier field)"}},
    {"x.width = 1; a : (tag, n, n*x) { tag.value = 4; n.width = 1; x.history = global; }",
     {"1:74: error: field 'x' of record 'a' repeats in its record, so it cannot have a shared history"}},
    {"section s 1 { } a : (tag, x) { tag.value = 4; x.width = 1; x.history = global; } "
     "b : (tag, y) { tag.value = 5; y.width = 1; y.interpretation = sectionOffset s; }",
     {"1:72: error: a DTD with tables (sectionOffset fields) has no shared histories"}},
    // 'intern': the length of the bytes field right after it, and of it alone.
    {"a : (tag, n, x, s) { tag.value = 4; n.width = 1; n.interpretation = intern; s.type = bytes; s.width = n.value; x.width = 1; }",
     {"1:69: error: field 'n' of record 'a' cannot be 'intern': the string it measures, 's', must follow it at once"}},
    {"a : (tag, k, k*(n, s)) { tag.value = 4; k.width = 1; n.width = 1; n.interpretation = intern; s.type = bytes; s.width = n.value; }",
     {"1:86: error: field 'n' of record 'a' cannot be 'intern': it repeats in its record"}},
    {"a : (tag, n) { tag.value = 4; n.width = 1; n.interpretation = intern; }",
     {"1:63: error: field 'n' of record 'a' cannot be 'intern': it is the length of no bytes field"}},
    {"a : (tag, n, s, t) { tag.value = 4; n.width = 1; n.interpretation = intern; s.type = bytes; s.width = n.value; t.type = bytes; "
     "t.width = n.value; }",
     {"1:69: error: field 'n' of record 'a' cannot be 'intern': it is the length of both 's' and 't'"}},
    {"a : (tag, n, s) { tag.value = 4; n.width = 1; s.type = bytes; s.width = n.value; s.interpretation = intern; }",
     {"1:101: error: interpretation 'intern' applies to integer fields; field 's' of record 'a' is 'bytes'"}},
    {"section t 1 { } a : (tag, n, s) { tag.value = 4; n.width = 1; n.interpretation = intern; s.type = bytes; s.width = n.value; } "
     "b : (tag, y) { tag.value = 5; y.width = 1; y.interpretation = sectionOffset t; }",
     {"1:82: error: a DTD with tables (sectionOffset fields) has no interned strings"}},
    {"a : (tag, x) { tag.value = 4; x.width = 1; x.history = per; }",
     {"1:59: error: expected the name of the field that keys the history after 'per'"}},
    {"a : (tag, k, x) { tag.value = 4; x.width = 1; k.width = 1; k.type = bytes; x.history = per k; }",
     {"1:92: error: the history key 'k' must be an integer field, but it is 'bytes'"}},
    {"a : (tag, x) { tag.value = 4; x.width = 1; x.history = per tag; }",
     {"1:60: error: the history key cannot be the tag; a history per record type is what a field without 'history' has"}},
    {"section s 1 { x.width = 1; x.width = 2; }",
     {"1:15: warning: 'x.width' has no effect: no field of the records of section 's' is named 'x'",
      "1:28: error: 'x.width' is already set in section 's'"}},
    {"x.width = 1; a : x { tag.value = 4; ",
     {"1:37: error: expected '}' to end the property block"}},
    // `n*x` with no earlier `n` introduces the field `n`, so a later `n` is a second one.
    {"a : (tag, n*x, n) { tag.value = 4; n.width = 1; x.width = 1; }",
     {"1:16: error: record 'a' has two fields named 'n'; give one a name of its own, as in 'newN : n'"}},
    {"a : (tag, n*x, n) { tag.value = 4; x.width = 1; }",
     {"1:16: error: record 'a' has two fields named 'n'; give one a name of its own, as in 'newN : n'"}},
    {"a : (tag, count*x) { tag.value = 4; x.width = 1; }",
     {"1:11: error: the repeat count 'count' is neither an earlier field of record 'a' nor a field kind that any "
      "property describes; list it before the repetition, or set 'count.width' to make it a new field there"}},
    {"a : (tag, cnt, cuont*x) { tag.value = 4; cnt.width = 1; x.width = 1; }",
     {"1:16: error: the repeat count 'cuont' is neither an earlier field of record 'a' nor a field kind that any "
      "property describes; did you mean 'cnt'?"}},
    {"x.width = 1; a : (tag, tga*x) { tag.value = 4; }",  // the tag cannot count, so it is not suggested
     {"1:24: error: the repeat count 'tga' is neither an earlier field of record 'a' nor a field kind that any "
      "property describes; list it before the repetition, or set 'tga.width' to make it a new field there"}},
    {"m.width = 1; x.width = 1; a : (tag, w : (n*(m*x))) { tag.value = 4; }",
     {"1:42: error: the repeat count 'n' is neither an earlier field of record 'w' nor a field kind that any "
      "property describes; list it before the repetition, or set 'n.width' to make it a new field there"}},
    {"x.width = 1; h : (n*x) section s 1 { n.width = 1; a : (tag, h) { tag.value = 4; } } b : (tag, h) { tag.value = 5; }",
     {"1:19: error: the repeat count 'n' is neither an earlier field of record 'h' nor a field kind that any "
      "property describes; list it before the repetition, or set 'n.width' to make it a new field there"}},
    {"count.width = 4; count.type = float; x.width = 1; a : (tag, count*x) { tag.value = 4; }",
     {"1:61: error: the repeat count 'count' must be a plain unsigned integer field, but it is 'float'"}},
    {"count.width = 2; count.type = bytes; x.width = 1; a : (tag, count*x) { tag.value = 4; }",
     {"1:61: error: the repeat count 'count' must be a plain unsigned integer field, but it is 'bytes'"}},
    {"len.width = 1; x.width = 1; a : (tag, len, count*x) { tag.value = 4; count.width = len.value; }",
     {"1:44: error: the repeat count 'count' must be a plain unsigned integer field, but it is 'bytes'"}},
    {"count.width = 2; count.scale = 3; x.width = 1; a : (tag, count*x) { tag.value = 4; }",
     {"1:58: error: the repeat count 'count' must be a plain unsigned integer field, but it has scale 3"}},
    {"x.width = 1; h : (h*x) a : (tag, h) { tag.value = 4; }",
     {"1:19: error: record 'h' contains itself: h -> h"}},
    {"a : (tag, n, n*(len, s), t) { tag.value = 4; n.width = 1; len.width = 1; s.width = len.value; t.width = len.value; }",
     {"1:105: error: the width reference 'len' names a field inside a repetition that does not enclose 't'"}},
    {"a : (tag, address, address) { tag.value = 4; address.width = 4; }",
     {"1:20: error: record 'a' has two fields named 'address'; give one a name of its own, as in 'newAddress : address'"}},
    {"a : (tag, p) { tag.value = 4; p.width = 1; p.x.width = 1; }",
     {"1:46: error: 'p' is a single field and has no members"}},
    {"pair : (lo, hi) lo.width = 1; hi.width = 1; a : (tag, pair) { tag.value = 4; pair.width = 2; }",
     {"1:78: error: 'pair' is a record of 2 fields; name one of them, as in 'pair.lo'"}},
    {"a : (tag, b) { tag.value = 4; } b : (x, a) x.width = 1;",
     {"1:41: error: record 'a' contains itself: a -> b -> a"}},
    {"h : (x, g) g : (y, h) x.width = 1; y.width = 1; a : h { tag.value = 4; }",
     {"1:20: error: record 'h' contains itself: h -> g -> h"}},
    {"a : x { tag.value = 4; } b : (a) { tag.value = 5; } x.width = 1;",
     {"1:31: error: record 'a' sets 'tag.value', so it is a record of the trace and cannot be a field of 'b'"}},
    {"comment : vfield { tag.value = 9; }",
     {"1:1: error: 'comment' is a predefined record and cannot be redefined"}},
    {"tag : x",
     {"1:1: error: 'tag' is reserved for the record tag and cannot name a record"}},
    {"x.width = 1; a : x { tag.value = 4; } a : x { tag.value = 5; }",
     {"1:39: error: record 'a' is defined twice in the global scope"}},
    {"section s 1 { } section s 2 { }",
     {"1:25: error: section 's' is defined twice"}},
    {"section s 1 { } section t 1 { }",
     {"1:27: error: section number 1 is already used by section 's'"}},
    {"section s 0 { }",
     {"1:11: error: section number 0 is out of range: sections are numbered 1 to 255"}},
    {"section s 256 { }",
     {"1:11: error: section number 256 is out of range: sections are numbered 1 to 255"}},
    {"section global 1 { }",
     {"1:9: error: 'global' is reserved and cannot name a section"}},
    // ---- text forms
    {"x.mnemonic = \"a\";",
     {"1:3: error: only the tag takes a mnemonic ('tag.mnemonic = \"...\";' in a record's '{ ... }')"}},
    {"tag.mnemonic = \"a\";",
     {"1:5: error: a record's mnemonic is set inside its '{ ... }', not for a whole scope"}},
    {"x.width = 1; a : x { tag.value = 4; x.mnemonic = \"a\"; }",
     {"1:39: error: only the tag takes a mnemonic ('tag.mnemonic = \"...\";' in a record's '{ ... }')"}},
    {"x.width = 1; a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:52: error: record 'a' has a mnemonic, but the DTD has no 'text { ... }' block"}},
    {"x.width = 1; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = 3; }",
     {"1:78: error: 'tag.mnemonic' takes a string, as in 'tag.mnemonic = \"co\";'"}},
    {"x.width = 1; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; tag.mnemonic = \"b\"; }",
     {"1:83: error: 'tag.mnemonic' is already set in record 'a'"}},
    {"x.width = 1; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a b\"; }",
     {"1:78: error: the mnemonic of record 'a' cannot contain a blank, a line break or the separator ','"}},
    {"x.width = 1; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a,\"; }",
     {"1:78: error: the mnemonic of record 'a' cannot contain a blank, a line break or the separator ','"}},
    {"text { separator = \",\"; } text { separator = \" \"; }",
     {"1:27: error: the DTD already has a text block"}},
    {"text { }",
     {"1:1: error: the text block needs a separator, as in 'separator = \",\";'"}},
    {"text { separator = \"\"; }",
     {"1:20: error: the separator cannot be empty"}},
    {"text { separator = \",\"; separator = \";\"; }",
     {"1:25: error: 'separator' is already set in the text block"}},
    {"text { separatr = \",\"; }",
     {"1:1: error: the text block needs a separator, as in 'separator = \",\";'", "1:8: error: unknown text setting 'separatr' (the settings are separator, begin, end and mnemonicAfter)"}},
    // mnemonicAfter: every text record starts with the same plain fields up to it, and has a mnemonic.
    {"p.width = 1; q.width = 1; text { separator = \" \"; mnemonicAfter = \"p\"; } a : (tag, p) { tag.value = 4; tag.mnemonic = \"a\"; } b : (tag, q) { tag.value = 5; tag.mnemonic = \"b\"; }",
     {"1:67: error: 'mnemonicAfter' puts the mnemonic after field 'p', but record 'b' has no field 'p' at its top level"}},
    {"p.width = 1; text { separator = \" \"; mnemonicAfter = \"p\"; } a : (tag, p) { tag.value = 4; tag.mnemonic = \"a\"; } b : (tag, p) { tag.value = 5; tag.mnemonic = \"b\"; p.text = hex; }",
     {"1:54: error: 'mnemonicAfter' puts the mnemonic after field 'p', but record 'b' does not start with the fields record 'a' starts with (the same names, types, scales and text formats, up to 'p')"}},
    {"n.width = 1; s.type = bytes; s.width = n.value; n.text = omit; text { separator = \" \"; mnemonicAfter = \"s\"; } a : (tag, n, s) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:104: error: 'mnemonicAfter' puts the mnemonic after field 's', but record 'a' has field 'n' before it, which is not a plain token ('line', 'nested', 'omit', or a length another field gives)"}},
    // nested: up to its own 'after' text, its length from the line; tab: a column from 1 to 4096.
    {"n.width = 1; n.text = omit; s.type = bytes; s.width = n.value; s.text = nested; text { separator = \" \"; } a : (tag, n, s) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:73: error: 'nested' reads up to the field's own 'after' text, and field 's' of record 'a' has none (as in 's.after = \")\";')"}},
    {"s.type = bytes; s.width = 4; s.text = nested; s.after = \")\"; text { separator = \" \"; } a : (tag, s) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:39: error: 'nested' takes the bytes up to its 'after' text, whatever their number, so the length of field 's' of record 'a' must be a field the line omits ('sLength.text = omit;')"}},
    {"x.width = 1; x.text = nested; a : x { tag.value = 4; }",
     {"1:23: error: 'nested' applies to bytes fields; field 'x' of record 'a' is 'unsigned'"}},
    {"x.width = 1; x.text = decimal tab 0; a : x { tag.value = 4; }",
     {"1:23: error: 'tab' takes a column from 1 to 4096, not 0"}},
    {"x.width = 1; x.text = decimal tab;",
     {"1:34: error: expected the column to pad the line to after 'tab', as in 'decimal tab 40'"}},
    {"text { separator = \",\\n\"; }",
     {"1:20: error: the text setting 'separator' cannot contain a line break"}},
    {"text { separator = 1; }",
     {"1:20: error: expected a string, as in 'separator = \",\";'"}},
    {"text { separator = \",\"",
     {"1:23: error: expected ';' after the property value"}},
    {"text { separator = \",\" ;",
     {"1:25: error: expected '}' to end the text block"}},
    {"x.width = 1; x.text = \"a\"; a : x { tag.value = 4; }",
     {"1:23: error: 'text' takes a text format: decimal, hex, chars \"...\", string, line, nested, omit, enum or clock"}},
    {"x.width = 1; x.text = chars;",
     {"1:28: error: expected the characters as a string after 'chars', as in 'chars \"RW\"'"}},
    {"x.width = 1; x.text = chars \"\"; a : x { tag.value = 4; }",
     {"1:23: error: 'chars' needs at least one character (field 'x' of record 'a')"}},
    {"x.width = 1; x.text = chars \"RWR\"; a : x { tag.value = 4; }",
     {"1:23: error: 'chars' lists 'R' twice (field 'x' of record 'a')"}},
    {"x.width = 1; x.text = chars \"Rr\" ignoreCase; a : x { tag.value = 4; }",
     {"1:23: error: 'chars' lists 'r' twice (ignoring case) (field 'x' of record 'a')"}},
    {"x.width = 1; x.text = chars \"R,W\"; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:23: error: 'chars' of field 'x' of record 'a' contains the separator ','"}},
    {"x.width = 1; x.text = string; a : x { tag.value = 4; }",
     {"1:23: error: 'string' applies to bytes fields; field 'x' of record 'a' is 'unsigned'"}},
    {"x.width = 1; x.type = signed; x.text = hex; a : x { tag.value = 4; }",
     {"1:40: error: 'hex' applies to unsigned integers; field 'x' of record 'a' is 'signed'"}},
    {"x.width = 1; x.scale = 2; x.text = hex; a : x { tag.value = 4; }",
     {"1:36: error: 'hex' applies to integers without a scale; field 'x' of record 'a' has scale 2"}},
    {"x.width = 1; x.text = omit; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:23: error: 'omit' applies only to a field the line determines: the length of a bytes field written in the line, or the count of a repeated group at the top level of the record; field 'x' of record 'a' is neither"}},
    {"x.width = 1; y.width = 1; n.width = 1; n.text = omit; text { separator = \",\"; } a : (x, n, n*y, z : x) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:49: error: the count 'n' of record 'a' is omitted and its group does not end the record, so the group's first field needs a 'before' text of its own that is not blanks, which tells where an element starts (as in 'y.before = \" (\";')"}},
    {"x.width = 1; y.width = 1; y.before = \" (\"; n.width = 1; n.text = omit; text { separator = \" \"; } a : (x, n, n*y, z : x) { tag.value = 4; tag.mnemonic = \"a\"; z.x.before = \" (\"; }",
     {"1:66: error: the group counted by 'n' starts with ' (', and what follows the group, ' (', could be taken for it"}},
    {"n.width = 1; s : (l, d) { d.width = l.value; } l.width = 1; d.text = line; text { separator = \",\"; } a : (s, n) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:70: error: 'line' takes the rest of the line, so only the last field of a record can use it; field 's.d' of record 'a' is not last"}},
    // A 'line' field's length comes from the line, or the text could read into a trace not written back (issue 40).
    {"d.type = bytes; d.width = 4; d.text = line; text { separator = \",\"; } a : d { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:39: error: 'line' takes the rest of the line, whatever its length, and field 'd' of record 'a' has a fixed width of 4 bytes; 'string' takes exactly that many"}},
    {"n.width = 1; d.type = bytes; d.width = n.value; d.text = line; text { separator = \" \"; } a : (n, d) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:58: error: 'line' takes the rest of the line, whatever its length, and the length of field 'd' of record 'a' is 'n', written before it; omit the length ('n.text = omit;'), or use 'string', which takes as many bytes as the length says"}},
    {"n.width = 1; d.width = 2; d.type = bytes; n.text = omit; text { separator = \",\"; } a : (n, n*d) { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:52: error: the count 'n' of record 'a' is omitted, so each repeated element must be whole tokens: no nested group, no 'line' and no bytes field of a fixed or written length"}},
    // Text around values, digits and case (section 15).
    {"x.width = 1; x.text = hex digits 0; a : x { tag.value = 4; }",
     {"1:23: error: 'digits' takes a number from 1 to 64, not 0"}},
    {"x.width = 1; x.text = hex digits; a : x { tag.value = 4; }",
     {"1:33: error: expected the number of digits after 'digits', as in 'hex digits 8'"}},
    {"x.width = 1; x.scale = 2; x.text = decimal digits 3; a : x { tag.value = 4; }",
     {"1:36: error: 'digits' of a scaled number is the fewest fraction digits written, 1 to its scale; field 'x' of record 'a' has scale 2"}},
    {"x.width = 4; x.type = float; x.text = decimal digits 3; a : x { tag.value = 4; }",
     {"1:39: error: 'digits' applies to integers; field 'x' of record 'a' is 'float'"}},
    // Columns padded with blanks (section 15).
    {"x.width = 1; x.text = decimal column 0; a : x { tag.value = 4; }",
     {"1:23: error: 'column' takes a width from 1 to 255, not 0"}},
    {"x.width = 1; x.text = decimal column; a : x { tag.value = 4; }",
     {"1:37: error: expected the column's width after 'column', as in 'decimal column 5'"}},
    {"x.width = 1; x.text = hex column 2 upper; a : x { tag.value = 4; }",
     {"1:36: error: expected ';' after the property value"}},
    {"s.type = bytes; s.width = 2; s.text = string column 3; text { separator = \",\"; } a : s { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:39: error: 'column' pads a value whose length the line does not give, and field 's' of record 'a' takes exactly as many bytes as its length says, blanks included"}},
    // Values spelled by their enum's names (section 15).
    {"x.width = 1; x.text = enum; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:23: error: 'enum' writes a value as the name the field's 'enum' gives it, and field 'x' of record 'a' has no 'enum' (as in 'x.enum = { Read = 0, Write = 1 };')"}},
    {"x.width = 1; x.flags = { r = 1, w = 2 }; x.text = enum; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:51: error: 'enum' writes a value as the name the field's 'enum' gives it, and field 'x' of record 'a' has 'flags', not 'enum' (as in 'x.enum = { Read = 0, Write = 1 };')"}},
    {"x.type = bytes; x.width = 2; x.text = enum; a : x { tag.value = 4; }",
     {"1:39: error: 'enum' applies to integers; field 'x' of record 'a' is 'bytes'"}},
    {"x.width = 1; x.enum = { a_b = 1 }; x.text = enum; text { separator = \"_\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:45: error: the name 'a_b' of field 'x' of record 'a' contains the separator '_'"}},
    {"x.width = 1; x.before = \"\"; a : x { tag.value = 4; }",
     {"1:25: error: 'before' cannot be empty: a value needs text between it and the one before it (without 'before', the separator goes there)"}},
    {"x.width = 1; x.before = 3; a : x { tag.value = 4; }",
     {"1:25: error: 'before' takes a string, as in 'x.before = \",\";'"}},
    {"x.width = 1; x.after = \"a \"; text { separator = \" \"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; }",
     {"1:60: error: the text after field 'x' of record 'a' ends in a blank, which a reader drops at the end of a line when the separator is \" \""}},
    {"x.width = 1; x.text = omit; text { separator = \",\"; } a : (x, x*(y)) { tag.value = 4; tag.mnemonic = \"a\"; x.after = \"]\"; y.width = 1; }",
     {"1:117: error: 'after' has no effect on field 'x' of record 'a', which is omitted"}},
    {"x.width = 1; d.type = bytes; d.text = line; d.after = \".\"; text { separator = \",\"; } a : (x, d) { tag.value = 4; tag.mnemonic = \"a\"; d.width = x.value; }",
     {"1:55: error: 'after' cannot follow field 'd' of record 'a': 'line' takes the rest of the line"}},
    {"x.width = 1; tag.before = \"x\"; a : x { tag.value = 4; }",
     {"1:18: error: the text around a record's mnemonic is set inside its '{ ... }' ('tag.before = \" \";')"}},
    {"x.width = 1; a : x { tag.value = 4; tag.before = \"<\"; }",
     {"1:37: error: 'tag.before' places text around the mnemonic, and record 'a' has none ('tag.mnemonic = \"...\";')"}},
    {"x.width = 1; text { separator = \",\"; } a : x { tag.value = 4; tag.mnemonic = \"a\"; tag.after = \"\\n\"; }",
     {"1:95: error: 'after' cannot contain a line break (record 'a')"}},
    // The native binary form (section 16).
    {"x.width = 1; a : x { tag.value = 4; tag.code = 5; }",
     {"1:48: error: record 'a' has a type code, but the DTD has no 'native { ... }' block"}},
    {"x.width = 1; native { order = big; } a : x { tag.value = 4; }",
     {"1:14: error: the native block needs 'code = N;', the bytes of the type code (1, 2, 4 or 8, or 0 for none)"}},
    {"x.width = 1; native { order = middle; code = 1; } a : x { tag.value = 4; }",
     {"1:31: error: 'order' is 'big' or 'little'"}},
    {"x.width = 1; native { order = big; code = 3; } a : x { tag.value = 4; }",
     {"1:43: error: 'code' is the bytes of a record's type code: 1, 2, 4 or 8, or 0 when records carry none"}},
    {"x.width = 1; native { order = big; code = 0; } a : x { tag.value = 4; } b : x { tag.value = 5; } c : x { tag.value = 6; }",
     {"1:43: error: with 'code = 0' records carry no type code, so the native form holds one record type, not 3 ('a', 'b' and 'c'); leave the "
      "others out with 'tag.code = none'"}},
    {"x.width = 1; native { order = big; code = 0; } a : x { tag.value = 4; tag.code = none; }",
     {"1:43: error: with 'code = 0' records carry no type code, so the native form holds one record type, not 0"}},
    {"native { order = big; code = 0; } a : (tag) { tag.value = 4; }",
     {"1:35: error: record 'a' has no fields, and without a type code (the native form has 'code = 0') it would take no bytes"}},
    {"x.width = 1; native { order = big; code = 1; header = \"\"; } a : x { tag.value = 4; }",
     {"1:55: error: 'header' is the line that ends the file's ASCII header: a string on one line, as in 'header = \"$\";', or the record "
      "the file starts with, as in 'header = fileHeader;'"}},
    {"x.width = 1; native { order = big; code = 1; header = h; } a : x { tag.value = 4; }",
     {"1:55: error: 'header = h;' names no record of the DTD (a predefined one cannot be a file's header)"}},
    {"x.width = 1; native { order = big; code = 1; header = comment; } a : x { tag.value = 4; }",
     {"1:55: error: 'header = comment;' names no record of the DTD (a predefined one cannot be a file's header)"}},
    {"x.width = 1; native { order = big; code = 1; trailer = \"x\"; } a : x { tag.value = 4; }",
     {"1:46: error: unknown native setting 'trailer' (the settings are order, code, header, align, magic, bitfields and sizeof(ctype))"}},
    {"x.width = 1; native { order = big; code = 1; } a : x { tag.value = 4; tag.code = 300; }",
     {"1:82: error: the type code 300 of record 'a' does not fit in 1 byte(s) ('code' in the native block)"}},
    {"x.width = 1; native { order = big; code = 1; } a : x { tag.value = 4; } b : x { tag.value = 5; tag.code = 4; }",
     {"1:107: error: record 'b' has the type code 4, which record 'a' has already"}},
    {"x.width = 1; native { order = big; code = 1; } section s 5 { a : x { tag.value = 4; } }",
     {"1:14: error: a native form is one stream of records, and this DTD has sections"}},
    {"x.width = 1; tag.code = 3; native { order = big; code = 1; } a : x { tag.value = 4; }",
     {"1:18: error: a record's type code is set inside its '{ ... }' ('tag.code = 9;')"}},
    {"x.width = 1; native { order = big; code = 1 } a : x { tag.value = 4; }",
     {"1:45: error: expected ';' after the property value"}},
    // Several native forms, C types and alignment.
    {"x.width = 1; native { order = big; code = 1; } native { order = little; code = 1; } a : x { tag.value = 4; }",
     {"1:14: error: a DTD with several native blocks names each one, as in 'native lp64 { ... }'",
      "1:48: error: a DTD with several native blocks names each one, as in 'native lp64 { ... }'"}},
    {"x.width = 1; native f { order = big; code = 1; } native f { order = little; code = 1; } a : x { tag.value = 4; }",
     {"1:57: error: the DTD already has a native block named 'f'"}},
    {"x.width = 1; x.ctype = \"long\"; native f { order = big; code = 1; } a : x { tag.value = 4; }",
     {"1:24: error: field 'x' of record 'a' has the C type 'long', whose size the native form 'f' does not give ('sizeof(long) = N;')"}},
    {"x.width = 1; x.ctype = \"long int\"; native { order = big; code = 1; } a : x { tag.value = 4; }",
     {"1:24: error: 'ctype' takes the name of a C type as a string, as in 'time.ctype = \"long\";'"}},
    {"x.width = 1; x.ctype = \"t\"; native { order = big; code = 1; sizeof(t) = 3; } a : x { tag.value = 4; }",
     {"1:24: error: field 'x' of record 'a' is a number, and the native form makes its C type 't' 3 bytes"}},
    {"x.width = 1; native { order = big; code = 1; sizeof long = 4; } a : x { tag.value = 4; }",
     {"1:53: error: expected '(' after 'sizeof', as in 'sizeof(long) = 8;'"}},
    {"x.width = 1; native { order = big; code = 1; magic = 0x0123, ; } a : x { tag.value = 4; }",
     {"1:62: error: expected a number after ','"}},
    {"x.width = 1; native { order = big; code = 1; magic = 1234; } a : x { tag.value = 4; }",
     {"1:54: error: a magic number is written in hex with 2, 4, 8 or 16 digits, which give its bytes (1234)"}},
    {"x.width = 1; native { order = big; code = 1; align = 3; } a : x { tag.value = 4; }",
     {"1:54: error: 'align' is 'packed' (no padding), 'natural' (C's: each number at a multiple of its size) or the largest alignment, 1, 2, 4 or 8"}},
    {"x.width = 3; native { order = big; code = 1; align = natural; } a : x { tag.value = 4; }",
     {"1:69: error: field 'x' of record 'a' is 3 bytes wide, a size no C number has; an aligned native form needs 1, 2, 4 or 8"}},
    {"n.width = 1; s.type = bytes; s.width = n.value; s.ctype = \"name\"; native { order = big; code = 1; sizeof(name) = 8; }\n"
     "a : (tag, n, n*(x), s) { tag.value = 4; x.width = 1; }",
     {"1:59: error: field 's' of record 'a' is a C char array whose length field 'n' also counts a group"}},
    {"n.width = 1; len.width = 1; s.type = bytes; s.width = len.value; s.ctype = \"name\"; native { order = big; code = 1; sizeof(name) = 4; }\n"
     "a : (tag, len, n, n*(s)) { tag.value = 4; }",
     {"1:76: error: field 's' of record 'a' is a C char array whose length field 'len' is not in the same repeated group"}},
    {"x.width = 1; a : x { tag.value = 4; tag.code = none; }",
     {"1:48: error: record 'a' sets 'tag.code = none', but the DTD has no 'native { ... }' block"}},
    {"r.type = bytes; r.width = 4; r.ctype = \"t\"; native { order = big; code = 1; } a : (tag, r) { tag.value = 4; }",
     {"1:40: error: field 'r' of record 'a' has a fixed width, which is its size in a native form; 'ctype' is for numbers and for bytes whose length a field gives"}},
    // rules (docs/dtd-language.md, section 17)
    {"x.width = 1; x.enum = { a = 1, b };",
     {"1:34: error: expected '=' after the name, as in '{ read = 1, write = 2 }'"}},
    {"x.width = 1; x.enum = { a = 1, };",
     {"1:32: error: expected a name and its number, as in '{ read = 1, write = 2 }'"}},
    {"x.width = 1; x.enum = { a = 1 b = 2 };",
     {"1:31: error: expected ',' or '}' in the list of names"}},
    {"x.width = 1; x.flags = { a = };",
     {"1:30: error: expected the name's number (an integer), as in '{ read = 1, write = 2 }'"}},
    {"x.width = 1; x.enum = {};",
     {"1:24: error: expected a name and its number, as in '{ read = 1, write = 2 }'"}},
    {"x.width = 1; x.minimum = low; a : x { tag.value = 4; }",
     {"1:26: error: " + expected_value}},
    {"x.width = 1; x.minimum = \"0\"; a : x { tag.value = 4; }",
     {"1:26: error: 'minimum' takes an integer, as in 'length.minimum = 15;'"}},
    {"x.width = 1; x.minimum = -1; a : x { tag.value = 4; }",
     {"1:26: error: value -1 is negative, but field 'x' of record 'a' is unsigned"}},
    {"x.width = 1; x.minimum = 5; x.maximum = 4; a : x { tag.value = 4; }",
     {"1:41: error: field 'x' of record 'a' has a minimum above its maximum"}},
    {"x.width = 2; x.type = signed; x.minimum = -5; x.maximum = -6; a : x { tag.value = 4; }",
     {"1:59: error: field 'x' of record 'a' has a minimum above its maximum"}},
    {"x.width = 4; x.type = float; x.maximum = 4; a : x { tag.value = 4; }",
     {"1:42: error: 'maximum' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"x.width = 1; x.enum = { a = 1, b = 1 }; a : x { tag.value = 4; }",
     {"1:32: error: 'b' has the number of 'a'; each value takes one name"}},
    {"x.width = 1; x.enum = { a = 1, a = 2 }; a : x { tag.value = 4; }",
     {"1:32: error: the name 'a' is given twice"}},
    {"x.width = 1; x.flags = { a = 0 }; a : x { tag.value = 4; }",
     {"1:26: error: flag 'a' has no bits; a flag names one bit or more"}},
    {"x.width = 1; x.flags = { a = 3, b = 2 }; a : x { tag.value = 4; }",
     {"1:33: error: flag 'b' shares bits with 'a'"}},
    {"x.width = 1; x.flags = { a = 1 }; x.enum = { b = 1 }; a : x { tag.value = 4; }",
     {"1:24: error: field 'x' of record 'a' has both 'enum' and 'flags'; name its values one way"}},
    {"x.width = 1; x.enum = 3; a : x { tag.value = 4; }",
     {"1:23: error: 'enum' takes names and their numbers, as in 'x.enum = { read = 1, write = 2 };'"}},
    {"x.width = 2; x.type = signed; x.flags = { a = 1 }; a : x { tag.value = 4; }",
     {"1:41: error: 'flags' name bits of unsigned fields; field 'x' of record 'a' is 'signed'"}},
    {"x.width = 1; x.bits = { a = 6, b = 3 }; a : x { tag.value = 4; }",
     {"1:32: error: the parts up to 'b' take 9 bits, more than the 8 of field 'x' of record 'a'"}},
    {"x.width = 8; x.bits = { a = 64, b = 1 }; a : x { tag.value = 4; }",
     {"1:33: error: the parts up to 'b' take 65 bits, more than the 64 of field 'x' of record 'a'"}},
    {"x.width = 1; x.bits = { a = 0 }; a : x { tag.value = 4; }",
     {"1:25: error: part 'a' is 0 bits wide; a part takes 1 to 64 bits"}},
    {"x.width = 1; x.bits = { a = 1, a = 2 }; a : x { tag.value = 4; }",
     {"1:32: error: the name 'a' is given twice"}},
    {"x.width = 2; x.type = signed; x.bits = { a = 1 }; a : x { tag.value = 4; }",
     {"1:40: error: 'bits' packs parts of unsigned fields; field 'x' of record 'a' is 'signed'"}},
    {"x.width = 2; x.scale = 1; x.bits = { a = 1 }; a : x { tag.value = 4; }",
     {"1:36: error: 'bits' packs parts in a whole number; field 'x' of record 'a' has a scale"}},
    {"x.width = 4; x.type = float; x.bits = { a = 1 }; a : x { tag.value = 4; }",
     {"1:39: error: 'bits' applies to integer fields; field 'x' of record 'a' is 'float'"}},
    {"x.width = 1; x.flags = { a = 1 }; x.bits = { b = 1 }; a : x { tag.value = 4; }",
     {"1:44: error: field 'x' of record 'a' has both 'flags' and 'bits'; name its values one way"}},
    {"x.width = 1; x.bits = 3; a : x { tag.value = 4; }",
     {"1:23: error: 'bits' takes names and their widths in bits, as in 'x.bits = { fd = 6, index = 2 };'"}},
    {"x.width = 2; x.ctype = \"char\"; x.bits = { a = 12 }; a : x { tag.value = 4; } native { order = big; code = 1; sizeof(char) = 1; }",
     {"1:24: error: the parts of field 'x' of record 'a' take 12 bits, more than its 8 in the native form"}},
    {"x.width = 1; a : x { tag.value = 4; } native { order = big; code = 1; bitfields = middle; }",
     {"1:83: error: 'bitfields' is 'lsb' (a field's first part in its least significant bits) or 'msb' (in its most significant bits)"}},
    {"x.width = 1; x.minimum = 5; a : x { tag.value = 4; x.maximum = 4; }",
     {"1:64: error: field 'x' of record 'a' has a minimum above its maximum"}},
    {"t.width = 4; t.order = nondecreasing global; a : (tag, t) { tag.value = 4; }\nb : (tag, t) { tag.value = 5; t.scale = 3; }",
     {"2:1: error: field 't' of record 'b' and field 't' of record 'a' share the global order of 't', but differ in type or scale"}},
    {"x.width = 1; x.enum = { a = 1, b = 2\ny.width = 1;\nz.width = ;",
     {"2:1: error: expected ',' or '}' in the list of names",
      "3:11: error: " + expected_value}},
    {"x.width = 1; x.dense = -1; a : x { tag.value = 4; }",
     {"1:24: error: 'dense' takes the first value of the range, as in 'unit.dense = 0;'"}},
    {"x.width = 1; x.type = signed; x.dense = 0; a : x { tag.value = 4; }",
     {"1:41: error: 'dense' applies to unsigned fields without a scale; field 'x' of record 'a' is 'signed'"}},
    {"x.width = 1; x.scale = 2; x.dense = 0; a : x { tag.value = 4; }",
     {"1:37: error: 'dense' applies to unsigned fields without a scale; field 'x' of record 'a' has scale 2"}},
    {"x.width = 1; x.order = decreasing; a : x { tag.value = 4; }",
     {"1:24: error: " + expected_value}},
    {"x.width = 1; x.order = 1; a : x { tag.value = 4; }",
     {"1:24: error: 'order' takes nondecreasing or increasing, and 'global' after either for one order across record types"}},
    {"x.type = bytes; x.width = 2; x.order = increasing; a : x { tag.value = 4; }",
     {"1:40: error: 'order' applies to integer fields; field 'x' of record 'a' is 'bytes'"}},
    // Variants (section "Variants")
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.wdth = 2; }",
     {"1:55: error: a variant sets 'width' and 'interpretation' only, not 'wdth'"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { b.x.width = 2; }",
     {"1:51: error: variant 'v': no record of the trace is named 'b'; did you mean 'a'?"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.y.width = 2; }",
     {"1:53: error: record 'a' has no field 'y'; did you mean 'x'?"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.width = 9; }",
     {"1:63: error: width 9 is too wide for field 'x' of record 'a': unsigned fields take 0 to 8 bytes"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.width = a.x.value; }",
     {"1:55: error: a variant's width is a number, as in 'alloc.size.width = 2;'"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.width = 2; a.x.width = 1; }",
     {"1:70: error: variant 'v' of record 'a': sets 'x.width' twice"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.width = 2; }",
     {"1:53: error: a variant's property names a record and its field, as in 'alloc.size.width = 2;'"}},
    {"n.width = 1; x.width = 1; a : (n, n*x) { tag.value = 4; } variant v { a.x.width = 2; }",
     {"1:67: error: variant 'v' of record 'a': variants are for records of a fixed layout, and this one repeats a group"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.width = 2 }",
     {"1:65: error: expected ';' after the property value"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.width = 2;",
     {"1:65: error: expected '}' to end the variant"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.interpretation = live 1; }",
     {"1:47: error: variant 'v' of record 'a': field 'x' is live, which a fixed layout cannot hold"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.x.interpretation = delta 0; } variant v { a.x.width = 2; }",
     {"1:91: error: variant 'v' is defined twice for record 'a'"}},
    {"x.width = 1; y.type = bytes; a : (x, y) { tag.value = 4; y.width = x.value; } variant v { a.x.width = 2; }",
     {"1:87: error: variant 'v' of record 'a': the length of 'y' must be fixed: set 'x.interpretation = default N;' with N at most 65535"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { } variant w { c.x.width = 1; }",
     {"1:47: warning: variant 'v' sets nothing",
      "1:65: error: variant 'w': no record of the trace is named 'c'; did you mean 'a'?"}},
    {"x.width = 1; y.type = bytes; n.width = 1; n.interpretation = default 2; a : (x, n, y) { tag.value = 4; y.width = n.value; } variant v { a.y.width = 3; }",
     {"1:133: error: variant 'v' of record 'a': field 'y' would change its type or where its width comes from, which metadata cannot"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { a.tag.width = 2; }",
     {"1:57: error: a variant cannot change the tag"}},
    {"x.width = 1; a : x { tag.value = 4; } variant v { comment.length.width = 2; }",
     {"1:51: error: variant 'v': the predefined record 'comment' has no variants"}},
    // A record that fails is not said to be missing.
    {"a : x { tag.value = 4; } variant v { a.x.width = 2; }",
     {"1:5: error: field 'x' of record 'a' has no width; set 'x.width' in the record, its section or globally"}},
    {"x.width = 1; a : x { tag.value = 4; x.value = 3; } variant v { a.x.width = 2; }",
     {"1:60: error: variant 'v' of record 'a': field 'x' has a fixed value ('value = N'), read field by field"}},
    {"x.text = \"a",
     {"1:12: error: unterminated string: expected '\"' before the end of the line"}},
    {"x.text = \"\\q\";",
     {"1:12: error: unknown escape in a string: the escapes are \\\", \\\\, \\n, \\t and \\xHH"}},
    {"x.text = \"\\x4\";",
     {"1:14: error: expected two hexadecimal digits after '\\x'"}},
};

}  // namespace

TEST_CASE("each malformed DTD yields exactly its diagnostics") {
    REQUIRE(malformed.size() >= 40);
    for (const Case& c : malformed) {
        INFO("DTD: " << c.dtd);
        CHECK(briefs(c.dtd) == c.diagnostics);
        CHECK_FALSE(metatf::compile("test.dtd", c.dtd).schema.has_value());
    }
}

TEST_CASE("a diagnostic renders as FILE:LINE:COL, the source line and a caret, then its notes") {
    const metatf::Compilation c =
        metatf::compile("dir/r.dtd", "address.width = 4;\n\tr : (tag,\taddress, address) {\n  tag.value = 4; }\n");
    REQUIRE(c.diagnostics.all().size() == 1);
    CHECK(c.diagnostics.all()[0].render() ==
          "dir/r.dtd:2:21: error: record 'r' has two fields named 'address'; give one a name of its own, as in "
          "'newAddress : address'\n"
          "    \tr : (tag,\taddress, address) {\n"
          "    \t         \t         ^\n"
          "dir/r.dtd:2:12: note: the first 'address' is here\n"
          "    \tr : (tag,\taddress, address) {\n"
          "    \t         \t^\n");
}

TEST_CASE("a source file finds each line by number, without its terminator") {
    const metatf::SourceFile file("f.dtd", "first\r\n\nthird\nlast");
    CHECK(file.line_text(1) == "first");
    CHECK(file.line_text(2).empty());
    CHECK(file.line_text(3) == "third");
    CHECK(file.line_text(4) == "last");
    CHECK(file.line_text(5).empty());
    CHECK(metatf::SourceFile("g.dtd", "a;\n").line_text(2).empty());
}

TEST_CASE("a long source line is shown around the column, so a one-line DTD renders in linear time") {
    const std::string left(100, 'a'), right(100, 'b');
    const metatf::Compilation c = metatf::compile("long.dtd", "/*" + left + "*/ x.width = 1; /*" + right + "*/\n");
    REQUIRE(c.diagnostics.all().size() == 1);
    CHECK(c.diagnostics.all()[0].render() ==
          "long.dtd:1:106: warning: 'x.width' has no effect: no field of the records defined here is named 'x'\n"
          "    ..." + std::string(57, 'a') + "*/ x.width = 1; /*" + std::string(45, 'b') + "...\n"
          "    " + std::string(63, ' ') + "^\n");
    // Near the start of a long line only the end is cut.
    const metatf::Compilation d = metatf::compile("long.dtd", "x.width = 1; /*" + right + right + "*/");
    REQUIRE(d.diagnostics.all().size() == 1);
    CHECK(d.diagnostics.all()[0].render() ==
          "long.dtd:1:1: warning: 'x.width' has no effect: no field of the records defined here is named 'x'\n"
          "    x.width = 1; /*" + std::string(45, 'b') + "...\n"
          "    ^\n");
}

TEST_CASE("the paper's Appendix C, verbatim, yields its one real defect and two warnings") {
    const metatf::Compilation c = metatf::compile_file(METATF_SOURCE_DIR "/tests/fixtures/paper-appendix-c.dtd");
    std::vector<std::string> got;
    for (const auto& d : c.diagnostics.all()) got.push_back(d.brief());
    CHECK(got == std::vector<std::string>{
                     "8:1: warning: 'attributes.width' has no effect: no field of the records defined here is named 'attributes'",
                     "8:23: warning: 'attributes.interpretation' has no effect: no field of the records defined here is named 'attributes'",
                     "17:30: error: record 'realloc' has two fields named 'address'; give one a name of its own, as "
                     "in 'newAddress : address'"});
    CHECK_FALSE(c.schema.has_value());
}

TEST_CASE("after a syntax error the parser resumes at the next top-level item") {
    CHECK(briefs("a.width = ;\n"
                 "section s 1 {\n"
                 "    r : (tag, x y) { tag.value = 4; }\n"
                 "    q : (tag, x) { tag.value = 5; }\n"
                 "}\n"
                 "b.width 1;\n"
                 "ok : x { tag.value = 6; }\n"
                 "c : (x,\n") ==
          std::vector<std::string>{"1:11: error: " + expected_value,
                                   "3:17: error: expected ',' or ')' in the field list",
                                   "6:9: error: expected '=' after the property name",
                                   "9:1: error: expected a field: a name, 'count*field', 'name : field' or '(field, ...)'"});
}

TEST_CASE("items on either side of a syntax error still report their own errors") {
    CHECK(briefs("a.width = 99999999999999999999;\nb.width = ;\nc.width = 0x10000000000000000;\n") ==
          std::vector<std::string>{"1:11: error: integer '99999999999999999999' does not fit in 64 bits",
                                   "2:11: error: " + expected_value,
                                   "3:11: error: integer '0x10000000000000000' does not fit in 64 bits"});
}

TEST_CASE("semantic errors are reported together, in source order") {
    CHECK(briefs("x.width = 9;\n"
                 "a : (tag, x) { tag.value = 4; }\n"
                 "b : (tag, y) { tag.value = 4; }\n") ==
          std::vector<std::string>{
              "1:11: error: width 9 is too wide for field 'x' of record 'a': unsigned fields take 0 to 8 bytes",
              "3:11: error: field 'y' of record 'b' has no width; set 'y.width' in the record, its section or globally",
              "3:28: error: tag 4 is already used by record 'a'"});
}

TEST_CASE("endless syntax errors stop after fifty") {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "@;\n";
    const auto got = briefs(text);
    REQUIRE(got.size() == 51);
    CHECK(got.back() == "50:1: error: too many syntax errors; stopping here");
}

TEST_CASE("an unreadable file is a diagnostic, not a crash") {
    const metatf::Compilation missing = metatf::compile_file("/nonexistent/dir/x.dtd");
    REQUIRE(missing.diagnostics.all().size() == 1);
    CHECK(missing.diagnostics.all()[0].render() ==
          "/nonexistent/dir/x.dtd: error: cannot read the file: No such file or directory\n");
    CHECK(metatf::compile_file(METATF_SOURCE_DIR).diagnostics.all()[0].brief() ==
          "0:0: error: cannot read the file: Is a directory");
}

TEST_CASE("records that would expand enormously are refused at once") {
    std::string text = "x.width = 1;\n";
    for (int i = 1; i < 20; ++i) {
        text += "a" + std::to_string(i) + " : (p : a" + std::to_string(i + 1) + ", q : a" + std::to_string(i + 1) + ")\n";
    }
    text += "a20 : x\nr : a1 { tag.value = 4; }\n";
    CHECK(briefs(text) == std::vector<std::string>{"22:1: error: record 'r' expands to more than 4096 fields and groups"});
}

TEST_CASE("outside braces, recovery also resumes at the next line that starts with a name") {
    CHECK(briefs("b : (x,)\nc : (y)\nd.width 4;\n") ==
          std::vector<std::string>{
              "1:8: error: expected a field: a name, 'count*field', 'name : field' or '(field, ...)'",
              "3:9: error: expected '=' after the property name"});
}
