// The PEGTL grammar of Meta-TF DTDs (docs/dtd-language.md gives it as EBNF).
//
// Small named rules; every point where an author can go wrong is a must<> whose
// message is defined in `errors` below. The control class enforces at compile
// time that every rule used under must<> has a message.
#pragma once

#include <cstddef>

#include <tao/pegtl.hpp>

namespace metatf::grammar {

using namespace tao::pegtl;

// ---- blanks and comments ------------------------------------------------
struct line_comment : seq<two<'/'>, until<eolf>> {};
struct comment_end : string<'*', '/'> {};
struct comment_body : until<comment_end> {};
struct block_comment : seq<string<'/', '*'>, must<comment_body>> {};
struct sep : star<sor<space, line_comment, block_comment>> {};

// ---- tokens ---------------------------------------------------------------
struct integer : seq<opt<one<'-'>>, sor<seq<one<'0'>, one<'x', 'X'>, plus<xdigit>>, plus<digit>>, not_at<identifier_other>> {};
struct dot : one<'.'> {};
struct dot_sep : seq<sep, dot, sep> {};

// ---- strings: "..." with the escapes \" \\ \n \t \xHH -------------------------
struct hex_byte : seq<xdigit, xdigit> {};
struct escape_code : sor<one<'"', '\\', 'n', 't'>, seq<one<'x'>, must<hex_byte>>> {};
struct escape : seq<one<'\\'>, must<escape_code>> {};
struct string_close : one<'"'> {};
struct string_literal : seq<one<'"'>, star<sor<escape, not_one<'"', '\n', '\r'>>>, must<string_close>> {};

// ---- values ---------------------------------------------------------------
struct path_name : identifier {};
struct reference : seq<path_name, dot_sep, list<path_name, dot_sep>> {};

// An interpretation's arguments are numbers; a field reference there is refused with its own message.
struct reference_argument : reference {};
template <typename Number>
struct argument : sor<Number, seq<at<reference>, raise<reference_argument>>> {};
struct default_arg : argument<integer> {};
struct base_arg : argument<integer> {};
struct delta_arg : argument<integer> {};
struct initial_arg : argument<integer> {};
struct stride_arg : argument<integer> {};
struct section_arg : sor<integer, identifier> {};
struct pool_arg : integer {};

struct interp_none : TAO_PEGTL_KEYWORD("none") {};
struct interp_default : seq<TAO_PEGTL_KEYWORD("default"), sep, must<default_arg>> {};
struct interp_base_offset : seq<TAO_PEGTL_KEYWORD("baseOffset"), sep, must<base_arg>> {};
struct interp_delta : seq<TAO_PEGTL_KEYWORD("delta"), sep, must<delta_arg>> {};
struct interp_stride : seq<TAO_PEGTL_KEYWORD("stride"), sep, must<initial_arg>, sep, must<stride_arg>> {};
struct interp_section_offset : seq<TAO_PEGTL_KEYWORD("sectionOffset"), sep, must<section_arg>> {};
struct interp_section_stride : seq<TAO_PEGTL_KEYWORD("sectionStride"), sep, must<section_arg>, sep, must<stride_arg>> {};
struct interp_live : seq<TAO_PEGTL_KEYWORD("live"), sep, must<pool_arg>> {};
struct predict_pool : integer {};
struct interp_predict : seq<TAO_PEGTL_KEYWORD("predict"), opt<sep, predict_pool>> {};
struct interp_intern : TAO_PEGTL_KEYWORD("intern") {};
struct interpretation : sor<interp_none, interp_default, interp_base_offset, interp_delta, interp_stride,
                            interp_section_offset, interp_section_stride, interp_live, interp_predict, interp_intern> {};

struct type_name : sor<TAO_PEGTL_KEYWORD("unsigned"), TAO_PEGTL_KEYWORD("signed"), TAO_PEGTL_KEYWORD("float"),
                       TAO_PEGTL_KEYWORD("bytes")> {};

// How a field is written in the text form: `decimal`, `hex`, `chars "RW" ignoreCase`, ...
struct ignore_case : TAO_PEGTL_KEYWORD("ignoreCase") {};
struct chars_arg : string_literal {};
struct digits_arg : integer {};
struct text_digits : seq<TAO_PEGTL_KEYWORD("digits"), sep, must<digits_arg>> {};
struct text_upper : TAO_PEGTL_KEYWORD("upper") {};
// `column 5` (printf's `%5d`), `column 3 left` (`%-3d`): blanks pad the value to a width.
struct column_arg : integer {};
struct text_left : TAO_PEGTL_KEYWORD("left") {};
struct text_column : seq<TAO_PEGTL_KEYWORD("column"), sep, must<column_arg>, opt<sep, text_left>> {};
// `tab 40`: blanks pad the line to 40 bytes before the text in front of the value (strace's result column).
struct tab_arg : integer {};
struct text_tab : seq<TAO_PEGTL_KEYWORD("tab"), sep, must<tab_arg>> {};
struct text_decimal : seq<TAO_PEGTL_KEYWORD("decimal"), opt<sep, text_digits>, opt<sep, text_column>, opt<sep, text_tab>> {};
struct text_clock : seq<TAO_PEGTL_KEYWORD("clock"), opt<sep, text_digits>, opt<sep, text_column>, opt<sep, text_tab>> {};  // 05:48:55.543726
struct text_hex : seq<TAO_PEGTL_KEYWORD("hex"), opt<sep, text_digits>, opt<sep, text_upper>, opt<sep, text_column>, opt<sep, text_tab>> {};
struct text_chars : seq<TAO_PEGTL_KEYWORD("chars"), sep, must<chars_arg>, opt<sep, ignore_case>, opt<sep, text_column>, opt<sep, text_tab>> {};
struct text_string : seq<TAO_PEGTL_KEYWORD("string"), opt<sep, text_column>, opt<sep, text_tab>> {};
struct text_line : seq<TAO_PEGTL_KEYWORD("line"), opt<sep, text_tab>> {};
struct text_omit : TAO_PEGTL_KEYWORD("omit") {};
struct text_enum : seq<TAO_PEGTL_KEYWORD("enum"), opt<sep, text_column>, opt<sep, text_tab>> {};  // the names the field's `enum` gives
// Bytes up to the field's `after` text outside brackets and "C strings" (strace's arguments).
struct text_nested : seq<TAO_PEGTL_KEYWORD("nested"), opt<sep, text_tab>> {};
struct text_format : sor<text_chars, text_decimal, text_hex, text_string, text_line, text_omit, text_enum, text_clock, text_nested> {};

// Rules: the names of an enumeration's values or a flag set's bits, `{ read = 1, write = 2 }`,
// and an order, `nondecreasing` or `increasing`, with `global` for one across record types.
struct named_value_name : identifier {};
struct named_value_equals : one<'='> {};
struct named_value_number : integer {};
struct named_value : seq<named_value_name, sep, must<named_value_equals>, sep, must<named_value_number>> {};
struct names_close : one<'}'> {};
struct name_list : seq<one<'{'>, sep, must<named_value>, star<sep, one<','>, sep, must<named_value>>, sep, must<names_close>> {};
struct order_kind : sor<TAO_PEGTL_KEYWORD("nondecreasing"), TAO_PEGTL_KEYWORD("increasing")> {};
struct order_global : TAO_PEGTL_KEYWORD("global") {};
struct order_value : seq<order_kind, opt<sep, order_global>> {};
// Where a field's previous value is kept (`history`): `global`, one across
// record types, or `per FIELD`, one per value of an earlier field.
struct history_global : TAO_PEGTL_KEYWORD("global") {};
struct history_key : identifier {};
struct history_per : seq<TAO_PEGTL_KEYWORD("per"), sep, must<history_key>> {};
struct history_value : sor<history_global, history_per> {};

struct value : sor<integer, string_literal, reference, interpretation, type_name, text_format, name_list, order_value, history_value> {};

// ---- properties: `field.property = value;` --------------------------------
struct property_path : list<path_name, dot_sep> {};
struct equals : one<'='> {};
struct semicolon : one<';'> {};
struct property_def : seq<path_name, dot_sep, must<property_path>, sep, must<equals>, sep, must<value>, sep,
                          must<semicolon>> {};

// A property inside `{ ... }` after a record's fields.
struct block_item : property_def {};
struct block_close : one<'}'> {};
struct property_block : seq<one<'{'>, sep, star<not_at<one<'}'>>, not_at<eof>, must<block_item>, sep>, must<block_close>> {};

// ---- fields -----------------------------------------------------------------
struct field;
struct field_name : identifier {};
struct close_paren : one<')'> {};
struct composite : seq<one<'('>, sep, must<field>, star<sep, one<','>, sep, must<field>>, sep, must<close_paren>> {};
struct repeat_element : sor<composite, field_name> {};
struct repeat_tail : seq<one<'*'>, sep, must<repeat_element>> {};
struct nested_tail : seq<one<':'>, sep, must<field>, sep, opt<property_block>> {};
struct named_field : seq<field_name, sep, opt<sor<repeat_tail, nested_tail>>> {};
struct field : sor<composite, named_field> {};

// ---- records: `name : field { properties }` ----------------------------------
struct record_name : identifier {};
struct record_def : seq<record_name, sep, one<':'>, sep, must<field>, sep, opt<property_block>> {};

// A name followed by neither ':' nor '.': say what may follow it.
struct name_follow : one<':', '.'> {};
struct stray_name : seq<identifier, sep, must<name_follow>> {};

// ---- sections: `section NAME NUMBER { ... }` ---------------------------------
struct section_keyword : TAO_PEGTL_KEYWORD("section") {};
struct section_name : identifier {};
struct section_number : integer {};
struct section_open : one<'{'> {};
struct section_item : sor<property_def, record_def, stray_name> {};
struct section_close : one<'}'> {};
struct section_def : seq<section_keyword, sep, not_at<one<':', '.'>>, must<section_name>, sep, must<section_number>, sep,
                         must<section_open>, sep, star<not_at<one<'}'>>, not_at<eof>, must<section_item>, sep>,
                         must<section_close>> {};

// ---- the text form: `text { separator = ","; begin = "..."; end = "..."; }` ------
struct text_keyword : TAO_PEGTL_KEYWORD("text") {};
struct text_setting_name : identifier {};
struct text_setting_value : string_literal {};
struct text_item : seq<text_setting_name, sep, must<equals>, sep, must<text_setting_value>, sep, must<semicolon>> {};
struct text_close : one<'}'> {};
// No must<> before '{': `text : ...` and `text.width` stay a record and a property.
struct text_def : seq<text_keyword, sep, one<'{'>, sep, star<not_at<one<'}'>>, not_at<eof>, must<text_item>, sep>,
                      must<text_close>> {};

// ---- native binary forms: `native lp64 { order = little; code = 2; sizeof(long) = 8; }` ----
struct native_keyword : TAO_PEGTL_KEYWORD("native") {};
struct native_form_name : identifier {};
struct native_setting_name : identifier {};
struct sizeof_keyword : TAO_PEGTL_KEYWORD("sizeof") {};
struct sizeof_open : one<'('> {};
struct native_ctype : identifier {};
struct sizeof_close : one<')'> {};
struct native_sizeof : seq<sizeof_keyword, sep, must<sizeof_open>, sep, must<native_ctype>, sep, must<sizeof_close>> {};
struct native_word : identifier {};
struct native_number : integer {};
struct native_next_number : integer {};  // after a comma; a rule with a message must match where it is tried
// One number, or several separated by commas (the magic words).
struct native_numbers : seq<native_number, star<sep, one<','>, sep, must<native_next_number>>> {};
struct native_setting_value : sor<native_numbers, string_literal, native_word> {};
struct native_item : seq<sor<native_sizeof, native_setting_name>, sep, must<equals>, sep, must<native_setting_value>, sep, must<semicolon>> {};
struct native_close : one<'}'> {};
// As for `text`: `native : ...` and `native.width` stay a record and a property.
struct native_def : seq<native_keyword, sep, opt<native_form_name, sep>, one<'{'>, sep,
                        star<not_at<one<'}'>>, not_at<eof>, must<native_item>, sep>, must<native_close>> {};

// ---- encoding variants: `variant narrow { alloc.size.width = 2; ... }` ----------
struct variant_keyword : TAO_PEGTL_KEYWORD("variant") {};
struct variant_name : identifier {};
struct variant_item : property_def {};
struct variant_close : one<'}'> {};
// As for `text`: `variant : ...` and `variant.width` stay a record and a property.
struct variant_def : seq<variant_keyword, sep, variant_name, sep, one<'{'>, sep,
                         star<not_at<one<'}'>>, not_at<eof>, must<variant_item>, sep>, must<variant_close>> {};

// ---- the whole DTD ----------------------------------------------------------
// A DTD is `sep (global_item sep)* eof`. The parser matches it one item at a
// time, so the parse tree never holds more than one item of a DTD that may be
// megabytes long; an empty match means the end of the input.
struct global_item : sor<section_def, text_def, native_def, variant_def, property_def, record_def, stray_name> {};
struct dtd_item : seq<sep, opt<not_at<eof>, must<global_item>>> {};

// ---- error messages, one for every rule used under must<> ------------------------
struct errors {
    template <typename Rule>
    static constexpr const char* message = nullptr;
};

template <> inline constexpr const char* errors::message<comment_body> = "unterminated comment: '/*' has no matching '*/'";
template <> inline constexpr const char* errors::message<reference_argument> =
    "an interpretation's argument is a number, not a field's value (docs/dtd-language.md, decision 41)";
template <> inline constexpr const char* errors::message<default_arg> = "expected the default value (an integer) after 'default'";
template <> inline constexpr const char* errors::message<base_arg> = "expected the base (an integer) after 'baseOffset'";
template <> inline constexpr const char* errors::message<history_key> = "expected the name of the field that keys the history after 'per'";
template <> inline constexpr const char* errors::message<delta_arg> = "expected the initial value (an integer) after 'delta'";
template <> inline constexpr const char* errors::message<initial_arg> = "expected the initial value (an integer) after 'stride'";
template <> inline constexpr const char* errors::message<stride_arg> = "expected the stride (an integer)";
template <> inline constexpr const char* errors::message<section_arg> = "expected a section number or section name";
template <> inline constexpr const char* errors::message<pool_arg> = "expected the pool (a number from 1 to 4) after 'live'";
template <> inline constexpr const char* errors::message<property_path> = "expected a property name after '.'";
template <> inline constexpr const char* errors::message<equals> = "expected '=' after the property name";
template <> inline constexpr const char* errors::message<hex_byte> = "expected two hexadecimal digits after '\\x'";
template <> inline constexpr const char* errors::message<escape_code> =
    "unknown escape in a string: the escapes are \\\", \\\\, \\n, \\t and \\xHH";
template <> inline constexpr const char* errors::message<string_close> = "unterminated string: expected '\"' before the end of the line";
template <> inline constexpr const char* errors::message<digits_arg> = "expected the number of digits after 'digits', as in 'hex digits 8'";
template <> inline constexpr const char* errors::message<column_arg> = "expected the column's width after 'column', as in 'decimal column 5'";
template <> inline constexpr const char* errors::message<tab_arg> = "expected the column to pad the line to after 'tab', as in 'decimal tab 40'";
template <> inline constexpr const char* errors::message<chars_arg> = "expected the characters as a string after 'chars', as in 'chars \"RW\"'";
template <> inline constexpr const char* errors::message<value> =
    "expected a value: an integer, a string, a field reference such as 'length.value', an interpretation "
    "(none, default, baseOffset, delta, stride, sectionOffset, sectionStride, live, predict, intern), a type (unsigned, signed, float, "
    "bytes), a text format (decimal, hex, chars \"...\", string, line, nested, omit, enum, clock), names such as '{ read = 1, write = 2 }', "
    "an order (nondecreasing, increasing) or a history (global, per FIELD)";
template <> inline constexpr const char* errors::message<named_value> = "expected a name and its number, as in '{ read = 1, write = 2 }'";
template <> inline constexpr const char* errors::message<named_value_equals> = "expected '=' after the name, as in '{ read = 1, write = 2 }'";
template <> inline constexpr const char* errors::message<named_value_number> = "expected the name's number (an integer), as in '{ read = 1, write = 2 }'";
template <> inline constexpr const char* errors::message<names_close> = "expected ',' or '}' in the list of names";
template <> inline constexpr const char* errors::message<text_setting_value> = "expected a string, as in 'separator = \",\";'";
template <> inline constexpr const char* errors::message<text_item> =
    "expected a text setting 'separator = \"...\";', 'begin = \"...\";', 'end = \"...\";' or '}'";
template <> inline constexpr const char* errors::message<text_close> = "expected '}' to end the text block";
template <> inline constexpr const char* errors::message<native_setting_value> = "expected a number, a string or a word, as in 'order = big;'";
template <> inline constexpr const char* errors::message<native_item> =
    "expected a native setting 'order = big;', 'code = 1;', 'header = \"...\";', 'sizeof(long) = 8;' or '}'";
template <> inline constexpr const char* errors::message<sizeof_open> = "expected '(' after 'sizeof', as in 'sizeof(long) = 8;'";
template <> inline constexpr const char* errors::message<native_ctype> = "expected the name of a C type, as in 'sizeof(long) = 8;'";
template <> inline constexpr const char* errors::message<sizeof_close> = "expected ')' after the C type's name";
template <> inline constexpr const char* errors::message<native_next_number> = "expected a number after ','";
template <> inline constexpr const char* errors::message<native_close> = "expected '}' to end the native block";
template <> inline constexpr const char* errors::message<variant_item> =
    "expected a property 'record.field.width = N;' or 'record.field.interpretation = ...;' or '}'";
template <> inline constexpr const char* errors::message<variant_close> = "expected '}' to end the variant";
template <> inline constexpr const char* errors::message<semicolon> = "expected ';' after the property value";
template <> inline constexpr const char* errors::message<block_item> = "expected a property 'field.property = value;' or '}'";
template <> inline constexpr const char* errors::message<block_close> = "expected '}' to end the property block";
template <> inline constexpr const char* errors::message<field> =
    "expected a field: a name, 'count*field', 'name : field' or '(field, ...)'";
template <> inline constexpr const char* errors::message<close_paren> = "expected ',' or ')' in the field list";
template <> inline constexpr const char* errors::message<repeat_element> =
    "expected the repeated field after '*': a name or '(field, ...)'";
template <> inline constexpr const char* errors::message<name_follow> =
    "expected ':' (to define a record) or '.' (to set a property) after the name";
template <> inline constexpr const char* errors::message<section_name> = "expected a section name after 'section'";
template <> inline constexpr const char* errors::message<section_number> = "expected the section number (an integer) after the section name";
template <> inline constexpr const char* errors::message<section_open> = "expected '{' to open the section";
template <> inline constexpr const char* errors::message<section_item> =
    "expected a record definition 'name : field', a property 'field.property = value;' or '}' to end the section";
template <> inline constexpr const char* errors::message<section_close> = "expected '}' to end the section";
template <> inline constexpr const char* errors::message<global_item> =
    "expected a record definition 'name : field', a property 'field.property = value;', a section, a text block or a variant";

template <typename Rule>
using control = must_if<errors>::control<Rule>;

// Fields nest through '(' and 'name :'. Deep nesting is refused before it can
// exhaust the stack.
inline constexpr std::size_t max_field_depth = 64;
inline constexpr const char* too_deep_message = "fields nest too deeply (the limit is 64 levels)";

}  // namespace metatf::grammar
