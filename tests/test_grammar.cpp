// The grammar and parser: every construct of the language parses into the syntax tree it should.
#include <tao/pegtl/contrib/analyze.hpp>

#include "front/grammar.hpp"
#include "front/parser.hpp"
#include "support.hpp"

namespace {

using namespace metatf;

ast::Dtd parse(const std::string& text) {
    Diagnostics diags;
    auto source = std::make_shared<const SourceFile>(SourceFile{"test.dtd", text});
    auto dtd = front::parse_dtd(source, diags);
    for (const Diagnostic& d : diags.all()) INFO(d.render());
    REQUIRE(dtd.has_value());
    return std::move(*dtd);
}

const ast::Integer& integer(const ast::Value& v) { return std::get<ast::Integer>(v); }
const ast::Interpretation& interp(const ast::Value& v) { return *std::get<ast::InterpretationPtr>(v); }

std::string name_of(const ast::Field& f) { return std::get<ast::Field::Named>(f.node).name.text; }
const ast::Field::Composite& composite(const ast::Field& f) { return std::get<ast::Field::Composite>(f.node); }

}  // namespace

TEST_CASE("the grammar has no left recursion or other problems PEGTL's analyzer finds") {
    CHECK(tao::pegtl::analyze<grammar::dtd_item>() == 0);
}

TEST_CASE("empty input and input of only blanks and comments are valid DTDs") {
    for (const char* text : {"", "  \n\t\r\n", "// only a comment", "/* block */", "/* a\n * b */ // c\n"}) {
        const ast::Dtd dtd = parse(text);
        CHECK(dtd.records.empty());
        CHECK(dtd.properties.empty());
        CHECK(dtd.sections.empty());
    }
}

TEST_CASE("comments may stand between any two tokens") {
    const ast::Dtd dtd = parse("a /*1*/ : /*2*/ ( /*3*/ b // 4\n , c ) /*5*/ { b /*6*/ . width = /*7*/ 4 ; }");
    REQUIRE(dtd.records.size() == 1);
    CHECK(composite(*dtd.records[0].field).members.size() == 2);
    CHECK(integer(dtd.records[0].properties[0].value).magnitude == 4);
}

TEST_CASE("global properties: names, property, integer values in decimal and hex, negative values") {
    const ast::Dtd dtd = parse("size.width = 4;\naddress.width=0x8;\nx.interpretation = stride 0x10 -16;");
    REQUIRE(dtd.properties.size() == 3);
    CHECK(dtd.properties[0].target[0].text == "size");
    CHECK(dtd.properties[0].property.text == "width");
    CHECK(dtd.properties[0].property.where.line == 1);
    CHECK(dtd.properties[0].property.where.column == 6);
    CHECK(integer(dtd.properties[1].value).magnitude == 8);
    CHECK(integer(dtd.properties[1].value).where.line == 2);
    const auto& s = interp(dtd.properties[2].value);
    CHECK(s.kind == ast::InterpretationKind::stride);
    CHECK(s.first->magnitude == 16);
    CHECK(s.step->negative);
    CHECK(s.step->magnitude == 16);
}

TEST_CASE("the largest 64-bit integers parse") {
    const ast::Dtd dtd = parse("a.x = 18446744073709551615; b.x = 0xFFFFFFFFFFFFFFFF; c.x = -9223372036854775808;");
    CHECK(integer(dtd.properties[0].value).magnitude == UINT64_MAX);
    CHECK(integer(dtd.properties[1].value).magnitude == UINT64_MAX);
    CHECK(integer(dtd.properties[2].value).magnitude == (std::uint64_t(1) << 63));
}

TEST_CASE("every interpretation parses with its arguments") {
    const ast::Dtd dtd = parse(
        "a.interpretation = none;\n"
        "b.interpretation = default 7;\n"
        "c.interpretation = baseOffset 0x1000;\n"
        "d.interpretation = delta 5;\n"
        "e.interpretation = stride 100 8;\n"
        "f.interpretation = sectionOffset 2;\n"
        "g.interpretation = sectionOffset strings;\n"
        "h.interpretation = sectionStride addresses 1;\n");
    using K = ast::InterpretationKind;
    const K kinds[] = {K::none,  K::default_value,  K::base_offset,    K::delta,
                       K::stride, K::section_offset, K::section_offset, K::section_stride};
    REQUIRE(dtd.properties.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) CHECK(interp(dtd.properties[i].value).kind == kinds[i]);
    CHECK(interp(dtd.properties[1].value).first->magnitude == 7);
    CHECK(interp(dtd.properties[2].value).first->magnitude == 0x1000);
    CHECK(interp(dtd.properties[3].value).first->magnitude == 5);
    CHECK(interp(dtd.properties[4].value).first->magnitude == 100);
    CHECK(interp(dtd.properties[4].value).step->magnitude == 8);
    CHECK(std::get<ast::Integer>(*interp(dtd.properties[5].value).section).magnitude == 2);
    CHECK(std::get<ast::Name>(*interp(dtd.properties[6].value).section).text == "strings");
    CHECK(std::get<ast::Name>(*interp(dtd.properties[7].value).section).text == "addresses");
    CHECK(interp(dtd.properties[7].value).step->magnitude == 1);
}

TEST_CASE("type names and references are values") {
    const ast::Dtd dtd = parse(
        "a.type = unsigned; b.type = signed; c.type = float; d.type = bytes;\n"
        "e.width = length.value; f.width = tag.width; g.width = v.length.value; h.width = default.value;");
    for (std::size_t i = 0; i < 4; ++i) CHECK(std::holds_alternative<ast::TypeName>(dtd.properties[i].value));
    CHECK(std::get<ast::TypeName>(dtd.properties[2].value).name.text == "float");
    const auto& r = std::get<ast::Reference>(dtd.properties[6].value);
    REQUIRE(r.path.size() == 2);
    CHECK(r.path[0].text == "v");
    CHECK(r.path[1].text == "length");
    CHECK(r.property.text == "value");
    CHECK(std::get<ast::Reference>(dtd.properties[5].value).property.text == "width");
    // An interpretation keyword can still head a reference.
    CHECK(std::get<ast::Reference>(dtd.properties[7].value).path[0].text == "default");
}

TEST_CASE("records: a single field, a composite, nested definitions, repeats and property blocks") {
    const ast::Dtd dtd = parse(
        "comment2 : vfield\n"
        "alloc : (tag, size, oldAddress : address { address.width = 8; }, n, n*(a, b), m*c) {\n"
        "    tag.value = 4;\n"
        "    oldAddress.address.width = 2;\n"
        "}\n"
        "chain : x : y\n");
    REQUIRE(dtd.records.size() == 3);
    CHECK(name_of(*dtd.records[0].field) == "vfield");
    CHECK(dtd.records[0].properties.empty());

    const ast::RecordDef& alloc = dtd.records[1];
    const auto& members = composite(*alloc.field).members;
    REQUIRE(members.size() == 6);
    CHECK(name_of(*members[0]) == "tag");
    const auto& nested = std::get<ast::Field::Nested>(members[2]->node);
    CHECK(nested.def->name.text == "oldAddress");
    CHECK(name_of(*nested.def->field) == "address");
    REQUIRE(nested.def->properties.size() == 1);
    const auto& rep = std::get<ast::Field::Repeat>(members[4]->node);
    CHECK(rep.count.text == "n");
    CHECK(composite(*rep.element).members.size() == 2);
    CHECK(name_of(*std::get<ast::Field::Repeat>(members[5]->node).element) == "c");
    REQUIRE(alloc.properties.size() == 2);
    CHECK(alloc.properties[1].target.size() == 2);
    CHECK(alloc.properties[1].target[1].text == "address");

    const auto& chain = std::get<ast::Field::Nested>(dtd.records[2].field->node);
    CHECK(chain.def->name.text == "x");
    CHECK(name_of(*chain.def->field) == "y");
}

TEST_CASE("sections hold records and properties; 'section' only starts one before a name") {
    const ast::Dtd dtd = parse(
        "section heap 1 {\n"
        "    size.width = 2;\n"
        "    alloc : (tag, size) { tag.value = 4; }\n"
        "}\n"
        "section strings 0x2 { }\n"
        "sectionish : x\n"
        "section.width = 1;\n");
    REQUIRE(dtd.sections.size() == 2);
    CHECK(dtd.sections[0].name.text == "heap");
    CHECK(dtd.sections[0].number.magnitude == 1);
    CHECK(dtd.sections[0].records.size() == 1);
    CHECK(dtd.sections[0].properties.size() == 1);
    CHECK(dtd.sections[1].number.magnitude == 2);
    REQUIRE(dtd.records.size() == 1);
    CHECK(dtd.records[0].name.text == "sectionish");
    REQUIRE(dtd.properties.size() == 1);
    CHECK(dtd.properties[0].target[0].text == "section");
}

TEST_CASE("fields nest up to the limit; deeper nesting is refused, not a stack overflow") {
    const auto nested = [](std::size_t depth) {
        return "a : " + std::string(depth, '(') + "x" + std::string(depth, ')');
    };
    // nested(63) is 64 levels of fields: 63 composites and the name inside them.
    CHECK(metatf::test::briefs(nested(63) + " { tag.value = 4; x.width = 1; }").empty());
    CHECK(metatf::test::briefs(nested(64)) ==
          std::vector<std::string>{"1:69: error: fields nest too deeply (the limit is 64 levels)"});
    CHECK(metatf::test::briefs(nested(200000)).size() == 1);
    std::string chain = "a";
    for (int i = 0; i < 200000; ++i) chain += " : a";
    CHECK(metatf::test::briefs(chain).size() == 1);
}
