// The resolver on valid DTDs: what each field resolves to.
#include "ir/json.hpp"
#include "support.hpp"

namespace {

using namespace metatf;
using metatf::test::briefs;
using metatf::test::field;
using metatf::test::record;
using metatf::test::schema_of;
using IK = ir::InterpretationKind;

std::vector<std::string> paths(const ir::Record& r) {
    std::vector<std::string> out;
    for (const auto& f : r.fields) out.push_back(f.path);
    return out;
}

// A layout as text: field indices, and COUNT*[...] for a repetition.
std::string layout_text(const std::vector<ir::LayoutItem>& items) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += ' ';
        if (const auto* f = std::get_if<std::uint32_t>(&item)) {
            out += std::to_string(*f);
        } else {
            const auto& r = std::get<ir::Repeat>(item);
            out += std::to_string(r.count) + "*[" + layout_text(r.items) + "]";
        }
    }
    return out;
}

}  // namespace

TEST_CASE("the predefined records exist with tags 1, 2 and 3 and their documented fields") {
    const ir::Schema s = schema_of("");
    REQUIRE(s.records.size() == 3);
    CHECK(record(s, "comment").tag == 1);
    CHECK(record(s, "comment").predefined == ir::Predefined::comment);
    CHECK(paths(record(s, "comment")) == std::vector<std::string>{"tag", "length", "data"});
    CHECK(field(record(s, "comment"), "data").type == ir::Type::bytes);
    CHECK(field(record(s, "comment"), "data").width_from == 1u);
    CHECK(record(s, "section").tag == 2);
    CHECK(field(record(s, "section"), "number").width == 1);
    const ir::Record& m = record(s, "metadata");
    CHECK(m.tag == 3);
    // Its values follow `property` undeclared: their count and width are the runtime's (predefined.hpp).
    CHECK(paths(m) == std::vector<std::string>{"tag", "record", "field", "property"});
    CHECK(field(m, "property").width == 1);
    CHECK(s.tag_width == 1);
}

TEST_CASE("metadata's record field follows the tag width") {
    const ir::Schema s = schema_of("tag.width = 2;");
    CHECK(s.tag_width == 2);
    CHECK(field(record(s, "metadata"), "record").width == 2);
    CHECK(field(record(s, "metadata"), "tag").width == 2);
}

TEST_CASE("user properties cannot change the predefined records") {
    const ir::Schema s = schema_of(
        "length.width = 2; value.width = 8; data.type = unsigned; number.width = 4; property.width = 2;\n"
        "x : (length, value, number, data, property) { tag.value = 9; data.width = 1; }");
    CHECK(field(record(s, "comment"), "length").width == 1);
    CHECK(field(record(s, "comment"), "data").type == ir::Type::bytes);
    CHECK(field(record(s, "metadata"), "property").width == 1);
    CHECK(field(record(s, "section"), "number").width == 1);
    CHECK(field(record(s, "x"), "property").width == 2);
    CHECK(field(record(s, "x"), "value").width == 8);
    CHECK(field(record(s, "x"), "data").type == ir::Type::unsigned_int);
}

TEST_CASE("properties inherit from the record, then its section, then the global scope") {
    const ir::Schema s = schema_of(
        "a.width = 1; b.width = 1; c.width = 1;\n"
        "section s 1 {\n"
        "    b.width = 2; c.width = 2;\n"
        "    r : (a, b, c) { tag.value = 4; c.width = 3; }\n"
        "}\n");
    const ir::Record& r = record(s, "r");
    CHECK(field(r, "a").width == 1);
    CHECK(field(r, "b").width == 2);
    CHECK(field(r, "c").width == 3);
    CHECK(r.section == 1);
}

TEST_CASE("a renamed field answers to its own name before its kind's") {
    const ir::Schema s = schema_of(
        "address.width = 4; newAddress.width = 8;\n"
        "realloc : (tag, oldAddress : address, newAddress : address) { tag.value = 4; }");
    const ir::Record& r = record(s, "realloc");
    CHECK(paths(r) == std::vector<std::string>{"tag", "oldAddress", "newAddress"});
    CHECK(field(r, "oldAddress").kind == "address");
    CHECK(field(r, "oldAddress").width == 4);
    CHECK(field(r, "newAddress").width == 8);
}

TEST_CASE("the block of the record in the trace overrides the blocks of the records it uses") {
    const ir::Schema s = schema_of(
        "pair : (lo, hi) { lo.width = 1; hi.width = 1; }\n"
        "a : (tag, pair, inner : x { x.width = 2; }) { tag.value = 4; pair.hi.width = 4; }\n"
        "b : (tag, pair, inner : x { x.width = 2; }) { tag.value = 5; inner.width = 8; }");
    CHECK(paths(record(s, "a")) == std::vector<std::string>{"tag", "pair.lo", "pair.hi", "inner"});
    CHECK(field(record(s, "a"), "pair.lo").width == 1);
    CHECK(field(record(s, "a"), "pair.hi").width == 4);
    CHECK(field(record(s, "a"), "inner").width == 2);
    CHECK(field(record(s, "b"), "pair.hi").width == 1);
    CHECK(field(record(s, "b"), "inner").width == 8);
}

TEST_CASE("a global helper record used in a section sees that section's properties") {
    const ir::Schema s = schema_of(
        "pair : (lo, hi)\n"
        "lo.width = 1; hi.width = 1;\n"
        "section s 1 { hi.width = 2; a : (tag, pair) { tag.value = 4; } }\n"
        "b : (tag, pair) { tag.value = 5; }");
    CHECK(field(record(s, "a"), "pair.hi").width == 2);
    CHECK(field(record(s, "b"), "pair.hi").width == 1);
}

TEST_CASE("a width reference set in a scope is read where the field is written") {
    const ir::Schema s = schema_of(
        "pair : (len, s)\nlen.width = 1; s.width = len.value;\na : (tag, n : len, pair) { tag.value = 4; }");
    CHECK(field(record(s, "a"), "pair.s").width_from == 2u);
}

TEST_CASE("the tag is added in front when a record does not list it") {
    const ir::Schema s = schema_of("note : vfield { tag.value = 9; }\nx.width = 1;\ny : x { tag.value = 10; }");
    CHECK(paths(record(s, "note")) == std::vector<std::string>{"tag", "length", "data"});
    CHECK(field(record(s, "note"), "data").width_from == 1u);
    CHECK(paths(record(s, "y")) == std::vector<std::string>{"tag", "x"});
}

TEST_CASE("records come out by section, then tag; global records first") {
    const ir::Schema s = schema_of(
        "x.width = 1;\n"
        "section two 2 { c : x { tag.value = 4; } }\n"
        "section one 1 { b : x { tag.value = 9; } a : x { tag.value = 5; } }\n"
        "z : x { tag.value = 200; }");
    std::vector<std::string> names;
    for (const auto& r : s.records) names.push_back(r.name);
    CHECK(names == std::vector<std::string>{"comment", "section", "metadata", "z", "a", "b", "c"});
    REQUIRE(s.sections.size() == 3);
    CHECK(s.sections[1].name == "one");
    CHECK(s.sections[2].number == 2);
}

TEST_CASE("the same tag may serve different sections") {
    const ir::Schema s = schema_of(
        "x.width = 1;\nsection a 1 { p : x { tag.value = 4; } }\nsection b 2 { q : x { tag.value = 4; } }");
    CHECK(record(s, "p").tag == 4);
    CHECK(record(s, "q").tag == 4);
}

TEST_CASE("repeats: the count is an earlier field; groups nest") {
    const ir::Schema s = schema_of(
        "n.width = 1; m.width = 2; id.width = 4; len.width = 1;\n"
        "fo : (tag, n, m, n*id, m*(id2 : id, len, name : text { text.width = len.value; }), m*(len2 : len, len2*(id3 : id))) {\n"
        "    tag.value = 4;\n"
        "}");
    const ir::Record& r = record(s, "fo");
    CHECK(paths(r) == std::vector<std::string>{"tag", "n", "m", "id", "id2", "len", "name", "len2", "id3"});
    REQUIRE(r.layout.size() == 6);
    const auto& first = std::get<ir::Repeat>(r.layout[3]);
    CHECK(first.count == 1);
    CHECK(std::get<std::uint32_t>(first.items.at(0)) == 3);
    const auto& second = std::get<ir::Repeat>(r.layout[4]);
    CHECK(second.count == 2);
    CHECK(second.items.size() == 3);
    CHECK(r.fields[6].type == ir::Type::bytes);
    CHECK(r.fields[6].width_from == 5u);
    const auto& third = std::get<ir::Repeat>(r.layout[5]);
    const auto& inner = std::get<ir::Repeat>(third.items.at(1));
    CHECK(inner.count == 7);
    CHECK(std::get<std::uint32_t>(inner.items.at(0)) == 8);
}

TEST_CASE("repeats in the paper's reading: a count that is no earlier field becomes a field before its elements") {
    const ir::Schema s = schema_of(
        "count.width = 1; object.width = 4; time.width = 8;\n"
        "collect : (tag, time, count*object) { tag.value = 4; }");
    const ir::Record& r = record(s, "collect");
    CHECK(paths(r) == std::vector<std::string>{"tag", "time", "count", "object"});
    CHECK(layout_text(r.layout) == "0 1 2 2*[3]");
    const ir::Field& count = field(r, "count");
    CHECK(count.kind == "count");
    CHECK(count.type == ir::Type::unsigned_int);
    CHECK(count.width == 1);
    // In the IR the introduced count is an ordinary field, listed where it is stored.
    CHECK(ir::to_json(s)["records"][3]["fields"][2].dump() ==
          R"({"index":2,"path":"count","kind":"count","type":"unsigned","scale":0,"width":1,"restoreWidth":1,)"
          R"("interpretation":{"kind":"none"}})");
    CHECK(ir::to_json(s)["records"][3]["fields"][3]["repeat"]["count"] == 2);
}

TEST_CASE("an introduced count takes its properties like any field: block, section, global, or a record of one field") {
    const ir::Schema s = schema_of(
        "x.width = 1; one : (c) { c.width = 2; }\n"
        "list : (items*x)\n"
        "section s 1 { items.width = 4; listed : (tag, list) { tag.value = 4; } }\n"
        "inBlock : (tag, k*(x, y)) { tag.value = 5; k.width = 3; y.width = 1; }\n"
        "byRecord : (tag, one*x) { tag.value = 6; }\n"
        "whole : k*x { tag.value = 7; k.width = 1; }");
    const ir::Record& listed = record(s, "listed");
    CHECK(paths(listed) == std::vector<std::string>{"tag", "list.items", "list.x"});
    CHECK(field(listed, "list.items").width == 4);
    CHECK(layout_text(listed.layout) == "0 1 1*[2]");
    const ir::Record& in_block = record(s, "inBlock");
    CHECK(field(in_block, "k").width == 3);
    CHECK(layout_text(in_block.layout) == "0 1 1*[2 3]");
    const ir::Record& by_record = record(s, "byRecord");
    CHECK(paths(by_record) == std::vector<std::string>{"tag", "one", "x"});
    CHECK(field(by_record, "one").kind == "c");
    CHECK(field(by_record, "one").width == 2);
    CHECK(layout_text(by_record.layout) == "0 1 1*[2]");
    CHECK(layout_text(record(s, "whole").layout) == "0 1 1*[2]");
}

TEST_CASE("both readings in one DTD: earlier fields are referred to, other counts introduced once") {
    const ir::Schema s = schema_of(
        "n.width = 1; m.width = 2; x.width = 1; y.width = 1; z.width = 1;\n"
        "r : (tag, n, n*x, m*(y), m*z) { tag.value = 4; }\n"
        "outer : (tag, n, w : (n*x, m*y)) { tag.value = 5; }");
    const ir::Record& r = record(s, "r");
    CHECK(paths(r) == std::vector<std::string>{"tag", "n", "x", "m", "y", "z"});
    CHECK(layout_text(r.layout) == "0 1 1*[2] 3 3*[4] 3*[5]");  // the second m*... refers to the introduced m
    const ir::Record& outer = record(s, "outer");
    CHECK(paths(outer) == std::vector<std::string>{"tag", "n", "w.x", "w.m", "w.y"});
    CHECK(layout_text(outer.layout) == "0 1 1*[2] 3 3*[4]");  // n of the definition around w
}

TEST_CASE("introduced counts nest: each element of a repeated group stores its own count") {
    const ir::Schema s = schema_of(
        "n.width = 1; m.width = 1; a.width = 2; x.width = 4;\n"
        "r : (tag, n*(a, m*x)) { tag.value = 4; }\n"
        "deep : (tag, n*(m*(x))) { tag.value = 5; }");
    const ir::Record& r = record(s, "r");
    CHECK(paths(r) == std::vector<std::string>{"tag", "n", "a", "m", "x"});
    CHECK(layout_text(r.layout) == "0 1 1*[2 3 3*[4]]");
    CHECK(layout_text(record(s, "deep").layout) == "0 1 1*[2 2*[3]]");
}

TEST_CASE("types: signed, float, bytes of a fixed width, and scaled decimals") {
    const ir::Schema s = schema_of(
        "r : (tag, off, unit, name, ts) {\n"
        "    tag.value = 4;\n"
        "    off.type = signed; off.width = 4; off.interpretation = default -1;\n"
        "    unit.type = float; unit.width = 8;\n"
        "    name.type = bytes; name.width = 80;\n"
        "    ts.width = 8; ts.scale = 6; ts.interpretation = delta 0;\n"
        "}");
    const ir::Record& r = record(s, "r");
    CHECK(field(r, "off").type == ir::Type::signed_int);
    CHECK(field(r, "off").interpretation.value == ~std::uint64_t(0));
    CHECK(field(r, "off").width == 0);
    CHECK(field(r, "off").restore_width == 4);
    CHECK(field(r, "unit").type == ir::Type::floating);
    CHECK(field(r, "unit").width == 8);
    CHECK(field(r, "name").type == ir::Type::bytes);
    CHECK(field(r, "name").width == 80);
    CHECK(field(r, "ts").scale == 6);
    CHECK(field(r, "ts").interpretation.kind == IK::delta);
}

TEST_CASE("every interpretation resolves with its arguments and its width") {
    const ir::Schema s = schema_of(
        "section strings 7 { }\n"
        "section addresses 9 { }\n"
        "r : (tag, a, b, c, d, e, f, g) {\n"
        "    tag.value = 4;\n"
        "    a.width = 2; a.interpretation = none;\n"
        "    b.width = 2; b.interpretation = default 0xFFFF;\n"
        "    c.width = 1; c.interpretation = baseOffset 0x10000000;\n"
        "    d.width = 2; d.interpretation = delta 100;\n"
        "    e.width = 4; e.interpretation = stride 0x1000 -32;\n"
        "    f.width = 2; f.interpretation = sectionOffset strings;\n"
        "    g.width = 8; g.interpretation = sectionStride 9 1;\n"
        "}");
    const ir::Record& r = record(s, "r");
    CHECK(field(r, "a").interpretation == ir::Interpretation{IK::none, 0, 0, 0});
    CHECK(field(r, "b").interpretation == ir::Interpretation{IK::default_value, 0xFFFF, 0, 0});
    CHECK(field(r, "c").interpretation == ir::Interpretation{IK::base_offset, 0x10000000, 0, 0});
    CHECK(field(r, "d").interpretation == ir::Interpretation{IK::delta, 100, 0, 0});
    CHECK(field(r, "e").interpretation == ir::Interpretation{IK::stride, 0x1000, -32, 0});
    CHECK(field(r, "f").interpretation == ir::Interpretation{IK::section_offset, 0, 0, 7});
    CHECK(field(r, "g").interpretation == ir::Interpretation{IK::section_stride, 0, 1, 9});
    const std::uint32_t widths[] = {2, 0, 1, 2, 0, 2, 0};
    const std::uint32_t restore[] = {2, 2, 1, 2, 4, 2, 8};
    for (std::uint32_t i = 0; i < 7; ++i) {
        CHECK(r.fields[i + 1].width == widths[i]);
        CHECK(r.fields[i + 1].restore_width == restore[i]);
    }
}

TEST_CASE("a zero-width interpretation without any width leaves the restore width unknown") {
    const ir::Schema s = schema_of("time.interpretation = default 0; r : (tag, time) { tag.value = 4; }");
    CHECK(field(record(s, "r"), "time").width == 0);
    CHECK(field(record(s, "r"), "time").restore_width == 0);
}

TEST_CASE("a width may copy another field's width") {
    const ir::Schema s = schema_of("tag.width = 2; r : (tag, t) { tag.value = 4; t.width = tag.width; }");
    CHECK(field(record(s, "r"), "t").width == 2);
}

TEST_CASE("legal but suspicious DTDs compile with warnings") {
    CHECK(briefs("x.width = 0; r : x { tag.value = 4; }") ==
          std::vector<std::string>{"1:11: warning: field 'x' of record 'r' has width 0 with interpretation 'none', so "
                                   "it stores nothing; say 'interpretation = default V' if the value is constant"});
    CHECK(briefs("x.width = 1; unused.width = 2; r : x { tag.value = 4; }") ==
          std::vector<std::string>{"1:14: warning: 'unused.width' has no effect: no field of the records defined here is named 'unused'"});
    CHECK(briefs("x.width = 1; helper : (x) r : x { tag.value = 4; }") ==
          std::vector<std::string>{"1:14: warning: record 'helper' is never used: it sets no 'tag.value', so it "
                                   "cannot appear in a trace, and no record uses it as a field"});
    CHECK(briefs("x.width = 1; x.interpretation = stride 5 0; r : x { tag.value = 4; }") ==
          std::vector<std::string>{"1:42: warning: stride 0 never moves: every value of field 'x' of record 'r' "
                                   "equals the initial value"});
    CHECK(briefs("section s 1 { y.width = 1; } x.width = 1; r : x { tag.value = 4; }") ==
          std::vector<std::string>{"1:15: warning: 'y.width' has no effect: no field of the records of section 's' is named 'y'"});
}

TEST_CASE("a shared definition's errors are reported once, at the definition, however many records use it") {
    // Its block and its count are wrong in every record that expands it.
    CHECK(briefs("attrs : (a, b, n*c) { a.type = 4; b.widht = 1; zz.width = 1; a.width = 1; c.width = 1; }\n"
                 "r1 : (tag, attrs) { tag.value = 4; }\n"
                 "r2 : (tag, attrs) { tag.value = 5; }\n"
                 "r3 : (tag, attrs) { tag.value = 6; }\n") ==
          std::vector<std::string>{
              "1:16: error: the repeat count 'n' is neither an earlier field of record 'attrs' nor a field kind that "
              "any property describes; did you mean 'a'?",
              "1:37: error: unknown property 'widht'; did you mean 'width'? (the properties are width, "
              "interpretation, value, type, scale, feed, text, mnemonic, before, after, code, ctype, minimum, maximum, enum, flags, bits, "
              "order, dense and history)",
              "1:48: error: record 'attrs' has no field 'zz'; did you mean 'a'?"});
    // A message that names the record is one per record; one that does not, one per site.
    CHECK(briefs("x.width = 9;\n"
                 "g : (k, k*x) { k.width = 4; k.type = float; }\n"
                 "r1 : (tag, g) { tag.value = 4; }\n"
                 "r2 : (tag, g) { tag.value = 5; }\n"
                 "r3 : (tag, g) { tag.value = 6; }\n") ==
          std::vector<std::string>{
              "1:11: error: width 9 is too wide for field 'g.x' of record 'r1': unsigned fields take 0 to 8 bytes",
              "1:11: error: width 9 is too wide for field 'g.x' of record 'r2': unsigned fields take 0 to 8 bytes",
              "1:11: error: width 9 is too wide for field 'g.x' of record 'r3': unsigned fields take 0 to 8 bytes",
              "2:9: error: the repeat count 'k' must be a plain unsigned integer field, but it is 'float'"});
}

TEST_CASE("a definition used twice in one record reports a trace record among its fields once for that record") {
    CHECK(briefs("x.width = 1;\n"
                 "t : (tag, x) { tag.value = 4; }\n"
                 "h : (x, t)\n"
                 "r1 : (tag, h, other : h) { tag.value = 5; }\n"
                 "r2 : (tag, h) { tag.value = 6; }\n") ==
          std::vector<std::string>{
              "3:9: error: record 't' sets 'tag.value', so it is a record of the trace and cannot be a field of 'r1'",
              "3:9: error: record 't' sets 'tag.value', so it is a record of the trace and cannot be a field of 'r2'"});
}

TEST_CASE("a reference set in a scope is looked up in each definition whose field reads it") {
    CHECK(briefs("data.width = len.value;\n"
                 "a : (len, data) { len.width = 1; }\n"
                 "b : (data)\n"
                 "c : (data)\n"
                 "r1 : (tag, a) { tag.value = 4; }\n"
                 "r2 : (tag, b) { tag.value = 5; }\n"
                 "r3 : (tag, c, again : b) { tag.value = 6; }\n") ==
          std::vector<std::string>{"1:14: error: record 'b' has no field 'len'",
                                   "1:14: error: record 'c' has no field 'len'"});
}
