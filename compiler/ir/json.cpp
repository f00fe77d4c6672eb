#include "json.hpp"

#include <bit>

namespace metatf::ir {

namespace {

using json = nlohmann::ordered_json;

// A 64-bit value as the field's type reads it.
json field_value(const Field& f, std::uint64_t v) {
    if (f.type == Type::signed_int) return static_cast<std::int64_t>(v);
    return v;
}

json interpretation(const Field& f) {
    const Interpretation& in = f.interpretation;
    switch (in.kind) {
        case InterpretationKind::none: return {{"kind", "none"}};
        case InterpretationKind::default_value: return {{"kind", "default"}, {"value", field_value(f, in.value)}};
        case InterpretationKind::base_offset: return {{"kind", "baseOffset"}, {"base", field_value(f, in.value)}};
        case InterpretationKind::delta: return {{"kind", "delta"}, {"initial", field_value(f, in.value)}};
        case InterpretationKind::stride:
            return {{"kind", "stride"}, {"initial", field_value(f, in.value)}, {"stride", in.stride}};
        case InterpretationKind::section_offset: return {{"kind", "sectionOffset"}, {"section", in.section}};
        case InterpretationKind::section_stride:
            return {{"kind", "sectionStride"}, {"section", in.section}, {"stride", in.stride}};
        case InterpretationKind::live: return {{"kind", "live"}, {"pool", in.pool}};
        case InterpretationKind::predict: return {{"kind", "predict"}, {"pool", in.pool}};
        case InterpretationKind::intern: return {{"kind", "intern"}};
    }
    return {{"kind", "none"}};
}

// The texts before and after a value, where the DTD sets them.
json surround(const FieldText& t, json out = json::object()) {
    if (t.before) out["before"] = *t.before;
    if (!t.after.empty()) out["after"] = t.after;
    return out;
}

json field_text(const FieldText& t) {
    json out = {{"format", name(t.format)}};
    if (t.format == TextFormat::chars) {
        out["chars"] = t.chars;
        out["ignoreCase"] = t.ignore_case;
    }
    if (t.digits != 0) out["digits"] = t.digits;
    if (t.upper) out["upper"] = true;
    if (t.column != 0) out["column"] = t.column;
    if (t.left) out["left"] = true;
    if (t.tab != 0) out["tab"] = t.tab;
    return surround(t, std::move(out));
}

// The rules a spec states about the field's values, where the DTD gives any.
json rules(const Field& f) {
    const FieldRules& r = f.rules;
    json out = json::object();
    if (r.minimum) out["minimum"] = field_value(f, *r.minimum);
    if (r.maximum) out["maximum"] = field_value(f, *r.maximum);
    if (!r.names.empty()) {
        json names = json::object();
        for (const NamedValue& n : r.names) names[n.name] = r.naming == rt::Naming::parts ? json(std::popcount(n.value)) : field_value(f, n.value);
        out[r.naming == rt::Naming::values ? "enum" : r.naming == rt::Naming::flags ? "flags" : "bits"] = std::move(names);
    }
    if (r.order != rt::Order::none) out["order"] = name(r.order);
    if (!r.global.empty()) out["orderAcross"] = r.global;
    if (r.dense) out["dense"] = *r.dense;
    return out;
}

json field(const Record& r, const Field& f) {
    json out = {{"index", f.index}, {"path", f.path}, {"kind", f.kind}, {"type", name(f.type)}};
    if (rt::is_integer(f.type)) out["scale"] = f.scale;
    if (f.width_from) {
        out["width"] = {{"valueOf", *f.width_from}};
    } else {
        out["width"] = f.width;
        out["restoreWidth"] = f.restore_width;
    }
    out["interpretation"] = interpretation(f);
    if (f.feed != 0) out["feed"] = f.feed;
    if (!f.ctype.empty()) out["ctype"] = f.ctype;
    if (f.history) out["history"] = f.history_key.empty() ? json("global") : json{{"per", f.history_key}};
    if (f.value) out["value"] = field_value(f, *f.value);
    if (!f.rules.empty()) out["rules"] = rules(f);
    if (r.mnemonic && f.index != 0) out["text"] = field_text(f.text);
    if (r.mnemonic && f.index == 0 && (f.text.before || !f.text.after.empty())) out["text"] = surround(f.text);
    return out;
}

json native_form(const Schema& schema, const NativeForm& n) {
    json out = {{"name", n.name}, {"order", n.order == rt::ByteOrder::big ? "big" : "little"}, {"code", n.code_width}};
    if (n.header_end) out["header"] = *n.header_end;
    if (n.header_record) out["header_record"] = schema.records[*n.header_record].name;
    if (n.align != 0) out["align"] = n.align;
    out["bitfields"] = n.high_bits_first ? "msb" : "lsb";
    if (!n.magic.empty()) {
        std::string hex;
        for (std::uint8_t b : n.magic) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
        out["magic"] = hex;
    }
    json sizes = json::object();
    for (const auto& [ctype, size] : n.sizes) sizes[ctype] = size;
    if (!n.sizes.empty()) out["sizeof"] = std::move(sizes);
    return out;
}

json layout(const Record& r, const std::vector<LayoutItem>& items) {
    json out = json::array();
    for (const LayoutItem& item : items) {
        if (const auto* index = std::get_if<std::uint32_t>(&item)) {
            out.push_back(field(r, r.fields[*index]));
        } else {
            const Repeat& rep = std::get<Repeat>(item);
            out.push_back({{"repeat", {{"count", rep.count}, {"fields", layout(r, rep.items)}}}});
        }
    }
    return out;
}

// A record's variants: each field whose encoding differs from the record's own.
json variants(const Record& r) {
    json out = json::array();
    for (const Variant& v : r.variants) {
        json fields = json::array();
        for (const Field& f : r.fields) {
            const VariantField& e = v.fields[f.index];
            if (e == VariantField{f.width, f.restore_width, f.interpretation}) continue;
            Field changed = f;
            changed.interpretation = e.interpretation;
            fields.push_back({{"index", f.index}, {"path", f.path}, {"width", e.width}, {"restoreWidth", e.restore_width},
                              {"interpretation", interpretation(changed)}});
        }
        out.push_back({{"name", v.name}, {"fields", std::move(fields)}});
    }
    return out;
}

}  // namespace

nlohmann::ordered_json to_json(const Schema& schema) {
    json out = {{"format", "metatf-ir"}, {"version", 2}, {"dtd", schema.name}, {"tagWidth", schema.tag_width}};
    json sections = json::array();
    for (const Section& s : schema.sections) sections.push_back({{"number", s.number}, {"name", s.name}});
    out["sections"] = std::move(sections);
    json records = json::array();
    for (const Record& r : schema.records) {
        json rec = {{"name", r.name}, {"tag", r.tag}, {"section", r.section}};
        if (r.predefined != Predefined::none) rec["predefined"] = name(r.predefined);
        if (r.mnemonic) rec["mnemonic"] = *r.mnemonic;
        if (r.code) rec["code"] = *r.code;
        rec["fields"] = layout(r, r.layout);
        if (!r.variants.empty()) rec["variants"] = variants(r);
        records.push_back(std::move(rec));
    }
    out["records"] = std::move(records);
    if (schema.text) {
        out["text"] = {{"separator", schema.text->separator}, {"begin", schema.text->begin}, {"end", schema.text->end}};
        if (schema.text->head != 0) out["text"]["mnemonicAfter"] = schema.text->mnemonic_after;
    }
    if (!schema.native.empty()) {
        json forms = json::array();
        for (const NativeForm& n : schema.native) forms.push_back(native_form(schema, n));
        out["native"] = std::move(forms);
    }
    out["source"] = schema.source;
    return out;
}

std::string to_json_text(const Schema& schema) {
    return to_json(schema).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
}

}  // namespace metatf::ir
