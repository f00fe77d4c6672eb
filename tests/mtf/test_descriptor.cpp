// RuntimeDtd builds, from a DTD's IR at run time, the very tables the C++
// back end generates: compared here field by field with generated headers.
#include <string>

#include <features.hpp>
#include <hatf10.hpp>
#include <paper-count.hpp>
#include <spc.hpp>

#include <doctest/doctest.h>

#include "back/descriptor.hpp"
#include "compile.hpp"

namespace rt = metatf::rt;

namespace {

std::string str(const char* s) { return s ? s : "(null)"; }

void check_field(const rt::FieldDesc& a, const rt::FieldDesc& b) {
    CAPTURE(str(b.path));
    CHECK(str(a.path) == str(b.path));
    CHECK(a.type == b.type);
    CHECK(a.scale == b.scale);
    CHECK(a.width_from == b.width_from);
    CHECK(a.initial.kind == b.initial.kind);
    CHECK(a.initial.width == b.initial.width);
    CHECK(a.initial.restore == b.initial.restore);
    CHECK(a.initial.value == b.initial.value);
    CHECK(a.initial.stride == b.initial.stride);
    CHECK(a.initial.section == b.initial.section);
}

void check_record(const rt::RecordDesc& a, const rt::RecordDesc& b) {
    CAPTURE(str(b.name));
    CHECK(str(a.name) == str(b.name));
    CHECK(a.tag == b.tag);
    CHECK(a.section == b.section);
    CHECK(a.predefined == b.predefined);
    REQUIRE(a.field_count == b.field_count);
    for (std::uint32_t f = 0; f < a.field_count; ++f) check_field(a.fields[f], b.fields[f]);
    REQUIRE(a.layout_count == b.layout_count);
    for (std::uint32_t s = 0; s < a.layout_count; ++s) {
        CHECK(a.layout[s].op == b.layout[s].op);
        CHECK(a.layout[s].index == b.layout[s].index);
    }
}

void check_text_form(const rt::DtdDesc& a, const rt::DtdDesc& b) {
    REQUIRE((a.text_form == nullptr) == (b.text_form == nullptr));
    if (!a.text_form) return;
    CHECK(str(a.text_form->separator) == str(b.text_form->separator));
    CHECK(str(a.text_form->begin) == str(b.text_form->begin));
    CHECK(str(a.text_form->end) == str(b.text_form->end));
    for (std::uint32_t i = 0; i < a.record_count; ++i) {
        const rt::TextRecordDesc& ra = a.text_form->records[i];
        const rt::TextRecordDesc& rb = b.text_form->records[i];
        CAPTURE(str(a.records[i].name));
        REQUIRE((ra.mnemonic == nullptr) == (rb.mnemonic == nullptr));
        if (!ra.mnemonic) continue;
        CHECK(str(ra.mnemonic) == str(rb.mnemonic));
        for (std::uint32_t f = 1; f < a.records[i].field_count; ++f) {
            CAPTURE(f);
            CHECK(ra.fields[f].format == rb.fields[f].format);
            CHECK(ra.fields[f].ignore_case == rb.fields[f].ignore_case);
            CHECK(str(ra.fields[f].chars) == str(rb.fields[f].chars));
        }
    }
}

void check_same(const rt::DtdDesc& built, const rt::DtdDesc& generated) {
    CHECK(str(built.name) == str(generated.name));
    CHECK(str(built.text) == str(generated.text));
    CHECK(built.tag_width == generated.tag_width);
    REQUIRE(built.section_count == generated.section_count);
    for (std::uint32_t i = 0; i < built.section_count; ++i) {
        CHECK(built.sections[i].number == generated.sections[i].number);
        CHECK(str(built.sections[i].name) == str(generated.sections[i].name));
    }
    REQUIRE(built.record_count == generated.record_count);
    for (std::uint32_t i = 0; i < built.record_count; ++i) check_record(built.records[i], generated.records[i]);
    check_text_form(built, generated);
    CHECK(rt::fingerprint(built) == rt::fingerprint(generated));
}

void check_dtd(const std::string& path, const rt::DtdDesc& generated) {
    const metatf::Compilation c = metatf::compile_file(path);
    REQUIRE(c.schema);
    const metatf::back::RuntimeDtd built(*c.schema);
    check_same(built.desc(), generated);
}

}  // namespace

TEST_CASE("RuntimeDtd of hatf10.dtd equals the generated tables") {
    check_dtd(METATF_SOURCE_DIR "/dtds/hatf10.dtd", hatf10::dtd);
}

TEST_CASE("RuntimeDtd of features.dtd equals the generated tables: sections, repeats, every interpretation") {
    check_dtd(METATF_SOURCE_DIR "/tests/fixtures/features.dtd", features::dtd);
}

TEST_CASE("RuntimeDtd of paper-count.dtd equals the generated tables: counts that 'n*x' introduces") {
    check_dtd(METATF_SOURCE_DIR "/tests/fixtures/paper-count.dtd", paper_count::dtd);
}

TEST_CASE("RuntimeDtd of spc.dtd equals the generated tables, text form included") {
    REQUIRE(spc::dtd.text_form != nullptr);
    check_dtd(METATF_SOURCE_DIR "/dtds/spc.dtd", spc::dtd);
}
