#include "lower.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace metatf::lower {

namespace {

rt::Encoding encoding(std::uint32_t width, std::uint32_t restore, const ir::Interpretation& in, std::uint8_t feed) {
    return {in.kind, width, restore, in.value, in.stride, in.section, in.pool, feed};
}
rt::Encoding initial_encoding(const ir::Field& f) { return encoding(f.width, f.restore_width, f.interpretation, f.feed); }

// The nested layout as a flat program. The tag (field 0) is read before the
// program starts, so it has no step.
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

std::uint32_t count(std::size_t n) { return static_cast<std::uint32_t>(n); }

}  // namespace

// The arrays rt::DtdDesc points into. Built once and never changed, so the
// pointers stay valid; it lives on the heap, so moving a LoweredDtd keeps them.
struct LoweredDtd::Storage {
    explicit Storage(const ir::Schema& schema);
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    struct RecordTables {
        std::vector<rt::FieldDesc> fields;
        std::vector<rt::LayoutStep> layout;
        std::vector<rt::TextFieldDesc> text;
        std::deque<std::vector<rt::Encoding>> variant_fields;  // per variant
        std::vector<rt::VariantDesc> variants;
    };
    struct RuleTables {
        std::vector<rt::NamedValue> names;
        rt::FieldRules rules{};
    };

    const char* keep(const std::string& s) { return strings.emplace_back(s).c_str(); }
    void add_record(const ir::Record& r);
    const rt::FieldRules* add_rules(const ir::FieldRules& r);
    void add_history(const ir::Record& r, const ir::Field& f, std::vector<rt::FieldDesc>& fields);
    void add_text_form(const ir::Schema& schema);
    void add_native_forms(const ir::Schema& schema);

    std::deque<std::string> strings;   // a deque: c_str() pointers stay valid as it grows
    std::deque<RecordTables> tables;   // per slot; a deque for the same reason
    std::deque<RuleTables> rules;      // per field with rules
    std::map<std::pair<std::string, std::string>, std::int32_t> histories;  // by field path and key path
    std::vector<rt::RecordDesc> records;
    std::vector<rt::SectionDesc> sections;
    std::vector<rt::TextRecordDesc> text_records;
    rt::TextFormDesc text_form{};
    struct NativeTables {
        std::deque<std::vector<rt::NativeFieldDesc>> fields;  // per slot
        std::vector<rt::NativeRecordDesc> records;
        std::vector<std::uint8_t> magic;
    };
    std::deque<NativeTables> native_tables;  // per form
    std::vector<rt::NativeFormDesc> native_forms;
    rt::DtdDesc desc{};
};

LoweredDtd::Storage::Storage(const ir::Schema& schema) {
    // The IR lists section 0 (the global part); the runtime's table holds the declared sections only.
    for (const ir::Section& s : schema.sections) {
        if (s.number != 0) sections.push_back({s.number, keep(s.name)});
    }
    for (const ir::Record& r : schema.records) add_record(r);
    desc.name = keep(schema.name);
    desc.text = keep(schema.source);
    desc.tag_width = schema.tag_width;
    desc.sections = sections.empty() ? nullptr : sections.data();
    desc.section_count = count(sections.size());
    desc.records = records.data();
    desc.record_count = count(records.size());
    if (schema.text) add_text_form(schema);
    if (!schema.native.empty()) add_native_forms(schema);
}

void LoweredDtd::Storage::add_native_forms(const ir::Schema& schema) {
    for (std::size_t k = 0; k < schema.native.size(); ++k) {
        const ir::NativeForm& n = schema.native[k];
        NativeTables& t = native_tables.emplace_back();
        t.magic = n.magic;
        for (std::size_t slot = 0; slot < schema.records.size(); ++slot) {
            auto& fields = t.fields.emplace_back();
            for (const ir::NativeField& f : schema.records[slot].native[k]) fields.push_back({f.width, f.kind});
            const auto& code = schema.records[slot].code;
            t.records.push_back({code.has_value(), code.value_or(0), fields.data()});
        }
        native_forms.push_back({keep(n.name), n.order, static_cast<std::uint8_t>(n.code_width), static_cast<std::uint8_t>(n.align),
                                n.high_bits_first, n.header_end ? keep(*n.header_end) : nullptr, t.magic.data(), count(t.magic.size()), t.records.data(),
                                n.header_record.value_or(rt::no_slot)});
    }
    desc.native_forms = native_forms.data();
    desc.native_form_count = count(native_forms.size());
}

void LoweredDtd::Storage::add_record(const ir::Record& r) {
    RecordTables& t = tables.emplace_back();
    for (const ir::Field& f : r.fields) {
        const std::int32_t width_from = f.width_from ? static_cast<std::int32_t>(*f.width_from) : rt::no_field;
        t.fields.push_back({keep(f.path), f.type, static_cast<std::uint8_t>(f.scale), width_from, initial_encoding(f),
                            add_rules(f.rules), f.value.has_value(), f.value.value_or(0)});
        if (f.history) add_history(r, f, t.fields);
        t.text.push_back({f.text.format, f.text.ignore_case, keep(f.text.chars), f.text.digits, f.text.upper,
                          f.text.before ? keep(*f.text.before) : nullptr, keep(f.text.after), f.text.column, f.text.left, f.text.tab});
    }
    layout_steps(r.layout, t.layout);
    for (const ir::Variant& v : r.variants) {
        auto& encodings = t.variant_fields.emplace_back();
        for (const ir::VariantField& f : v.fields) encodings.push_back(encoding(f.width, f.restore_width, f.interpretation, 0));
        t.variants.push_back({keep(v.name), encodings.data()});
    }
    records.push_back({keep(r.name), r.tag, r.section, r.predefined, t.fields.data(), count(t.fields.size()),
                       t.layout.data(), count(t.layout.size()), t.variants.empty() ? nullptr : t.variants.data(),
                       count(t.variants.size())});
}

// Fields of one path and one key share a table, numbered in the order first seen.
void LoweredDtd::Storage::add_history(const ir::Record& r, const ir::Field& f, std::vector<rt::FieldDesc>& fields) {
    const auto next = static_cast<std::int32_t>(histories.size());
    rt::FieldDesc& d = fields.back();
    d.history = histories.emplace(std::pair(f.path, f.history_key), next).first->second;
    if (f.history_key.empty()) return;
    for (const ir::Field& k : r.fields) {
        if (k.path != f.history_key) continue;
        d.history_key = static_cast<std::int32_t>(k.index);
        fields[k.index].keys_history = true;
    }
}

const rt::FieldRules* LoweredDtd::Storage::add_rules(const ir::FieldRules& r) {
    if (r.empty()) return nullptr;
    RuleTables& t = rules.emplace_back();
    for (const ir::NamedValue& n : r.names) t.names.push_back({keep(n.name), n.value});
    // An enumeration is looked up by value; flags and parts are shown in the DTD's order.
    if (r.naming == rt::Naming::values) std::ranges::sort(t.names, {}, &rt::NamedValue::value);
    t.rules = {r.minimum.has_value(), r.maximum.has_value(), r.minimum.value_or(0), r.maximum.value_or(0),
               t.names.empty() ? nullptr : t.names.data(), count(t.names.size()), r.naming, r.order,
               r.global.empty() ? nullptr : keep(r.global), r.dense.has_value(), r.dense.value_or(0)};
    return &t.rules;
}

void LoweredDtd::Storage::add_text_form(const ir::Schema& schema) {
    for (std::size_t slot = 0; slot < schema.records.size(); ++slot) {
        const auto& mnemonic = schema.records[slot].mnemonic;
        text_records.push_back(mnemonic ? rt::TextRecordDesc{keep(*mnemonic), tables[slot].text.data()}
                                        : rt::TextRecordDesc{nullptr, nullptr});
    }
    text_form = {keep(schema.text->separator), keep(schema.text->begin), keep(schema.text->end), text_records.data(), schema.text->head};
    desc.text_form = &text_form;
}

LoweredDtd::LoweredDtd(std::unique_ptr<const Storage> storage) : storage_(std::move(storage)) {}
LoweredDtd::LoweredDtd(LoweredDtd&&) noexcept = default;
LoweredDtd& LoweredDtd::operator=(LoweredDtd&&) noexcept = default;
LoweredDtd::~LoweredDtd() = default;

const rt::DtdDesc& LoweredDtd::desc() const { return storage_->desc; }

LoweredDtd lower(const ir::Schema& schema) { return LoweredDtd(std::make_unique<const LoweredDtd::Storage>(schema)); }

}  // namespace metatf::lower
