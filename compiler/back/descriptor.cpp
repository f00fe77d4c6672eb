#include "descriptor.hpp"

namespace metatf::back {

namespace {

// The IR's enums and the runtime's list the same things in the same order.
static_assert(int(ir::Type::bytes) == int(rt::Type::bytes) && int(ir::Type::floating) == int(rt::Type::floating) &&
              int(ir::Type::signed_int) == int(rt::Type::signed_int));
static_assert(int(ir::InterpretationKind::default_value) == int(rt::Interp::default_value) &&
              int(ir::InterpretationKind::base_offset) == int(rt::Interp::base_offset) &&
              int(ir::InterpretationKind::delta) == int(rt::Interp::delta) &&
              int(ir::InterpretationKind::stride) == int(rt::Interp::stride) &&
              int(ir::InterpretationKind::section_offset) == int(rt::Interp::section_offset) &&
              int(ir::InterpretationKind::section_stride) == int(rt::Interp::section_stride));
static_assert(int(ir::Predefined::comment) == int(rt::Predefined::comment) &&
              int(ir::Predefined::section) == int(rt::Predefined::section) &&
              int(ir::Predefined::metadata) == int(rt::Predefined::metadata));
static_assert(int(ir::TextFormat::hex) == int(rt::TextFormat::hex) && int(ir::TextFormat::chars) == int(rt::TextFormat::chars) &&
              int(ir::TextFormat::string) == int(rt::TextFormat::string) &&
              int(ir::TextFormat::line) == int(rt::TextFormat::line) && int(ir::TextFormat::omit) == int(rt::TextFormat::omit));

rt::Encoding initial_encoding(const ir::Field& f) {
    const ir::Interpretation& in = f.interpretation;
    return {static_cast<rt::Interp>(in.kind), f.width, f.restore_width, in.value, in.stride, in.section};
}

// As the generator's layout: the tag (field 0) is read before the layout starts.
void layout_steps(const std::vector<ir::LayoutItem>& items, std::vector<rt::LayoutStep>& out) {
    for (const auto& item : items) {
        if (const auto* index = std::get_if<std::uint32_t>(&item)) {
            if (*index != 0) out.push_back({rt::LayoutStep::field, *index});
            continue;
        }
        const auto& rep = std::get<ir::Repeat>(item);
        out.push_back({rt::LayoutStep::repeat, rep.count});
        layout_steps(rep.items, out);
        out.push_back({rt::LayoutStep::end, 0});
    }
}

}  // namespace

RuntimeDtd::RuntimeDtd(const ir::Schema& schema) {
    for (const ir::Section& s : schema.sections) {
        if (s.number != 0) sections_.push_back({s.number, keep(s.name)});
    }
    for (const ir::Record& r : schema.records) add_record(r);
    desc_.name = keep(schema.name);
    desc_.text = keep(schema.source);
    desc_.tag_width = schema.tag_width;
    desc_.sections = sections_.empty() ? nullptr : sections_.data();
    desc_.section_count = static_cast<std::uint32_t>(sections_.size());
    desc_.records = records_.data();
    desc_.record_count = static_cast<std::uint32_t>(records_.size());
    if (schema.text) add_text_form(schema);
}

const char* RuntimeDtd::keep(const std::string& s) { return strings_.emplace_back(s).c_str(); }

void RuntimeDtd::add_record(const ir::Record& r) {
    RecordTables& t = tables_.emplace_back();
    for (const ir::Field& f : r.fields) {
        const std::int32_t width_from = f.width_from ? static_cast<std::int32_t>(*f.width_from) : rt::no_field;
        t.fields.push_back({keep(f.path), static_cast<rt::Type>(f.type), static_cast<std::uint8_t>(f.scale), width_from,
                            initial_encoding(f)});
        t.text.push_back({static_cast<rt::TextFormat>(f.text.format), f.text.ignore_case, keep(f.text.chars)});
    }
    layout_steps(r.layout, t.layout);
    records_.push_back({keep(r.name), r.tag, r.section, static_cast<rt::Predefined>(r.predefined), t.fields.data(),
                        static_cast<std::uint32_t>(t.fields.size()), t.layout.data(),
                        static_cast<std::uint32_t>(t.layout.size())});
}

void RuntimeDtd::add_text_form(const ir::Schema& schema) {
    for (std::size_t slot = 0; slot < schema.records.size(); ++slot) {
        const auto& mnemonic = schema.records[slot].mnemonic;
        text_records_.push_back(mnemonic ? rt::TextRecordDesc{keep(*mnemonic), tables_[slot].text.data()}
                                         : rt::TextRecordDesc{nullptr, nullptr});
    }
    text_form_ = {keep(schema.text->separator), keep(schema.text->begin), keep(schema.text->end), text_records_.data()};
    desc_.text_form = &text_form_;
}

}  // namespace metatf::back
