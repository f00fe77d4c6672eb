// The lowering: what the runtime's descriptor of a DTD holds (generated code
// prints the same value as constants, mtf reads traces with it).
#include <string>
#include <utility>
#include <vector>

#include <metatf/core/layout.hpp>

#include <metatf/encoding/predefined.hpp>

#include "lower/lower.hpp"
#include "support.hpp"

namespace {

using namespace metatf;
namespace rt = metatf::rt;

// Nested repeats, a bytes field whose width is an earlier field's value,
// initial encodings, a section, and a text form with a record outside it.
const char* const dtd_text = R"(tag.width = 2;
n.width = 1;
m.width = 1;
m.text = hex;
len.width = 1;
op.width = 1;
op.text = chars "rw" ignoreCase;
w.width = 2;
w.interpretation = stride 10 3;
text { separator = " "; end = "."; }

section strings 5 {
    name : (tag, vfield) { tag.value = 9; }
}

batch : (tag, op, n, n*(item : (m, m*(part : (len, data) { data.type = bytes; data.width = len.value; }), w)), t) {
    tag.value = 4;
    tag.mnemonic = "b";
    t.width = 4; t.interpretation = delta 7;
}
)";

// A layout program as text: fN a field, rN[ ... ] a group repeated by field N's value.
std::string layout_text(const rt::RecordDesc& r) {
    std::string out;
    for (std::uint32_t i = 0; i < r.layout_count; ++i) {
        const rt::LayoutStep& s = r.layout[i];
        if (!out.empty()) out += ' ';
        if (s.op == rt::LayoutStep::field) out += "f" + std::to_string(s.index);
        if (s.op == rt::LayoutStep::repeat) out += "r" + std::to_string(s.index) + "[";
        if (s.op == rt::LayoutStep::end) out += "]";
    }
    return out;
}

std::vector<std::string> field_paths(const rt::RecordDesc& r) {
    std::vector<std::string> out;
    for (std::uint32_t i = 0; i < r.field_count; ++i) out.emplace_back(r.fields[i].path);
    return out;
}

const rt::RecordDesc& batch_of(const rt::DtdDesc& d) {
    REQUIRE(d.record_count == 5);  // comment, section, metadata, batch, name
    REQUIRE(std::string(d.records[3].name) == "batch");
    return d.records[3];
}

}  // namespace

TEST_CASE("lowering: the DTD's name, text, tag width and declared sections") {
    const ir::Schema schema = test::schema_of(dtd_text);
    const lower::LoweredDtd lowered = lower::lower(schema);
    const rt::DtdDesc& d = lowered.desc();
    CHECK(std::string(d.name) == "test");
    CHECK(std::string(d.text) == dtd_text);
    CHECK(d.tag_width == 2);
    REQUIRE(d.section_count == 1);  // section 0, the global part, is not listed
    CHECK(d.sections[0].number == 5);
    CHECK(std::string(d.sections[0].name) == "strings");
    CHECK(rt::defines_section(d, 5));
    CHECK(d.records[4].section == 5);
    CHECK(d.records[4].tag == 9);
    CHECK(d.records[0].predefined == rt::Predefined::comment);
    CHECK(d.records[3].predefined == rt::Predefined::none);
}

TEST_CASE("lowering: a comment's length takes 1 byte, or 2 where the DTD says so, and the fingerprint tells them apart") {
    const lower::LoweredDtd one = lower::lower(test::schema_of("r : (tag) { tag.value = 4; }"));
    const lower::LoweredDtd two = lower::lower(test::schema_of("comment.length.width = 2; r : (tag) { tag.value = 4; }"));
    REQUIRE(one.desc().records[0].predefined == rt::Predefined::comment);
    CHECK(rt::comment_length_width(one.desc().records[0]) == 1);
    CHECK(rt::comment_length_width(two.desc().records[0]) == 2);
    CHECK(rt::max_comment_bytes(2) == 65535);
    CHECK(rt::fingerprint(one.desc()) != rt::fingerprint(two.desc()));
}

TEST_CASE("lowering: nested repeats become a flat layout program without the tag") {
    const ir::Schema schema = test::schema_of(dtd_text);
    const lower::LoweredDtd lowered = lower::lower(schema);
    const rt::RecordDesc& batch = batch_of(lowered.desc());
    CHECK(field_paths(batch) ==
          std::vector<std::string>{"tag", "op", "n", "item.m", "item.part.len", "item.part.data", "item.w", "t"});
    CHECK(layout_text(batch) == "f1 f2 r2[ f3 r3[ f4 f5 ] f6 ] f7");
    CHECK(rt::detail::layout_end(batch, 2) == 9);
    CHECK(rt::detail::layout_end(batch, 4) == 7);
    const lower::LoweredDtd tag_only = lower::lower(test::schema_of("r : (tag) { tag.value = 4; }"));
    CHECK(tag_only.desc().records[3].layout_count == 0);
}

TEST_CASE("lowering: width_from, types and initial encodings of the fields") {
    const ir::Schema schema = test::schema_of(dtd_text);
    const lower::LoweredDtd lowered = lower::lower(schema);
    const rt::RecordDesc& batch = batch_of(lowered.desc());
    const rt::FieldDesc& data = batch.fields[5];
    CHECK(data.type == rt::Type::bytes);
    CHECK(data.width_from == 4);  // item.part.len
    CHECK(data.initial.width == 0);
    CHECK(batch.fields[4].width_from == rt::no_field);

    const rt::Encoding& w = batch.fields[6].initial;  // stride 10 3: stores nothing, restores width 2
    CHECK(w.kind == rt::Interp::stride);
    CHECK(w.width == 0);
    CHECK(w.restore == 2);
    CHECK(w.value == 10);
    CHECK(w.stride == 3);

    const rt::Encoding& t = batch.fields[7].initial;
    CHECK(t.kind == rt::Interp::delta);
    CHECK(t.width == 4);
    CHECK(t.value == 7);
}

TEST_CASE("lowering: the text form, per record and per field") {
    const ir::Schema schema = test::schema_of(dtd_text);
    const lower::LoweredDtd lowered = lower::lower(schema);
    const rt::DtdDesc& d = lowered.desc();
    REQUIRE(d.text_form != nullptr);
    CHECK(std::string(d.text_form->separator) == " ");
    CHECK(std::string(d.text_form->begin).empty());
    CHECK(std::string(d.text_form->end) == ".");
    CHECK(d.text_form->records[4].mnemonic == nullptr);  // `name` has no mnemonic: no text form
    CHECK(d.text_form->records[4].fields == nullptr);
    const rt::TextRecordDesc& batch = d.text_form->records[3];
    REQUIRE(batch.mnemonic != nullptr);
    CHECK(std::string(batch.mnemonic) == "b");
    CHECK(batch.fields[1].format == rt::TextFormat::chars);
    CHECK(std::string(batch.fields[1].chars) == "rw");
    CHECK(batch.fields[1].ignore_case);
    CHECK(batch.fields[3].format == rt::TextFormat::hex);
    CHECK(batch.fields[5].format == rt::TextFormat::string);
    CHECK(std::string(batch.fields[7].chars).empty());

    const lower::LoweredDtd without = lower::lower(test::schema_of("x.width = 1; r : (tag, x) { tag.value = 4; }"));
    CHECK(without.desc().text_form == nullptr);
    CHECK(without.desc().section_count == 0);
    CHECK(without.desc().sections == nullptr);
}

TEST_CASE("lowering: a moved value keeps its tables, and the fingerprint with them") {
    const ir::Schema schema = test::schema_of(dtd_text);
    lower::LoweredDtd first = lower::lower(schema);
    const rt::DtdDesc* before = &first.desc();
    const std::uint64_t fingerprint = rt::fingerprint(first.desc());
    std::vector<lower::LoweredDtd> held;
    held.push_back(std::move(first));
    held.push_back(lower::lower(test::schema_of("x.width = 1; r : (tag, x) { tag.value = 4; }")));  // may move held[0] again
    const rt::DtdDesc& d = held[0].desc();
    CHECK(&d == before);
    CHECK(rt::fingerprint(d) == fingerprint);
    CHECK(std::string(batch_of(d).fields[5].path) == "item.part.data");
    CHECK(std::string(d.text_form->records[3].mnemonic) == "b");
}
