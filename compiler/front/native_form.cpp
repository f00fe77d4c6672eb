#include "native_form.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

namespace metatf::front {

namespace {

bool contains_any(std::string_view s, std::string_view chars) { return s.find_first_of(chars) != std::string_view::npos; }

Location where_of(const ast::NativeSetting& s) {
    return std::visit(
        [](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<ast::Integer>>) {
                return v.front().where;
            } else {
                return v.where;
            }
        },
        s.value);
}

std::string form_title(const ir::NativeForm& form) { return form.name.empty() ? "the native form" : "the native form " + quote(form.name); }

// The widest C type a native form may declare (a char array of this many bytes).
constexpr std::uint64_t max_native_width = 65535;

bool power_of_two_upto8(std::uint64_t n) { return n == 1 || n == 2 || n == 4 || n == 8; }

// Resolves one `native` block and lays out every record in it.
class FormResolver {
public:
    FormResolver(const ast::NativeBlock& block, ir::Schema& schema, const std::vector<RecordTextSites>& sites, Diagnostics& diags)
        : block_(block), schema_(schema), sites_(sites), diags_(diags) {}

    std::optional<ir::NativeForm> run() {
        if (block_.name) form_.name = block_.name->text;
        if (!settings()) return std::nullopt;
        bool ok = true;
        fields_.resize(schema_.records.size());
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            if (schema_.records[i].predefined == rt::Predefined::none) ok = code_fits(i) && lay_out(i) && ok;
        }
        if (ok && form_.code_width == 0) ok = one_record();
        if (ok) {
            for (std::size_t i = 0; i < schema_.records.size(); ++i) schema_.records[i].native.push_back(std::move(fields_[i]));
        }
        for (const auto& [ctype, at] : size_at_) {
            if (!used_.count(ctype)) diags_.warning(at, "no field has the C type " + quote(ctype) + " ('F.ctype = \"" + ctype + "\";')");
        }
        return ok ? std::optional(std::move(form_)) : std::nullopt;
    }

private:
    // ---- the block's settings

    bool settings() {
        std::map<std::string, const ast::NativeSetting*> seen;
        bool ok = true;
        for (const ast::NativeSetting& s : block_.settings) {
            const std::string key = s.of ? "sizeof(" + s.of->text + ")" : s.name.text;
            if (auto [it, fresh] = seen.emplace(key, &s); !fresh) {
                diags_.error(s.name.where, quote(key) + " is already set in the native block")
                    .notes.push_back({Severity::note, it->second->name.where, "it is first set here", {}});
                ok = false;
                continue;
            }
            ok = setting(s) && ok;
        }
        for (const char* required : {"order", "code"}) {
            if (seen.count(required)) continue;
            diags_.error(block_.where, std::string("the native block needs '") + required +
                                           (required == std::string("order") ? " = big;' or 'order = little;'" : " = N;', the bytes of the type code (1, 2, 4 or 8, or 0 for none)"));
            ok = false;
        }
        if (ok && magic_) ok = magic_bytes(*magic_);
        return ok;
    }

    bool setting(const ast::NativeSetting& s) {
        const std::string& n = s.name.text;
        const auto* word = std::get_if<ast::Name>(&s.value);
        const auto* number = std::get_if<ast::Integer>(&s.value);
        const auto* text = std::get_if<ast::String>(&s.value);
        if (s.of) return size_of(*s.of, number, s);
        if (n == "order") {
            if (!word || (word->text != "big" && word->text != "little")) return wrong(s, "'order' is 'big' or 'little'");
            form_.order = word->text == "big" ? rt::ByteOrder::big : rt::ByteOrder::little;
            // Big-endian machines' C compilers allocate bit fields from the most significant bit.
            if (!bitfields_set_) form_.high_bits_first = form_.order == rt::ByteOrder::big;
            return true;
        }
        if (n == "bitfields") {
            if (!word || (word->text != "lsb" && word->text != "msb")) {
                return wrong(s, "'bitfields' is 'lsb' (a field's first part in its least significant bits) or 'msb' (in its most significant bits)");
            }
            form_.high_bits_first = word->text == "msb";
            bitfields_set_ = true;
            return true;
        }
        if (n == "code") {
            if (!number || number->negative || (number->magnitude != 0 && !power_of_two_upto8(number->magnitude))) {
                return wrong(s, "'code' is the bytes of a record's type code: 1, 2, 4 or 8, or 0 when records carry none");
            }
            form_.code_width = static_cast<std::uint32_t>(number->magnitude);
            code_at_ = number->where;
            return true;
        }
        if (n == "header") {
            if (word) return header_record(*word);
            if (!text || text->value.empty() || contains_any(text->value, "\r\n")) {
                return wrong(s, "'header' is the line that ends the file's ASCII header: a string on one line, as in 'header = \"$\";', or the record "
                                "the file starts with, as in 'header = fileHeader;'");
            }
            form_.header_end = text->value;
            return true;
        }
        if (n == "align") {
            if (word && word->text == "packed") return true;
            if (word && word->text == "natural") {
                form_.align = 8;
                return true;
            }
            if (!number || number->negative || !power_of_two_upto8(number->magnitude)) {
                return wrong(s, "'align' is 'packed' (no padding), 'natural' (C's: each number at a multiple of its size) or the largest alignment, 1, 2, 4 or 8");
            }
            form_.align = static_cast<std::uint32_t>(number->magnitude);
            return true;
        }
        if (n == "magic") {
            magic_ = &s;
            return true;
        }
        diags_.error(s.name.where, "unknown native setting " + quote(n) + " (the settings are order, code, header, align, magic, bitfields and sizeof(ctype))");
        return false;
    }

    // `header = fileHeader;`: the file starts with that record, without a type code.
    bool header_record(const ast::Name& name) {
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            if (schema_.records[i].name != name.text) continue;
            if (schema_.records[i].predefined != rt::Predefined::none) break;
            form_.header_record = static_cast<std::uint32_t>(i);
            return true;
        }
        return error(name.where, "'header = " + name.text + ";' names no record of the DTD (a predefined one cannot be a file's header)");
    }

    bool size_of(const ast::Name& ctype, const ast::Integer* number, const ast::NativeSetting& s) {
        if (!number || number->negative || number->magnitude == 0 || number->magnitude > max_native_width) {
            return wrong(s, "'sizeof(" + ctype.text + ")' is the bytes of the C type: 1 to " + std::to_string(max_native_width));
        }
        form_.sizes.emplace_back(ctype.text, static_cast<std::uint32_t>(number->magnitude));
        size_at_.emplace(ctype.text, ctype.where);
        return true;
    }

    // `magic = 0x01234567, 0x00000001;`: each number takes the bytes its hex digits spell, in the form's order.
    bool magic_bytes(const ast::NativeSetting& s) {
        std::vector<ast::Integer> numbers;
        if (const auto* one = std::get_if<ast::Integer>(&s.value)) numbers.push_back(*one);
        if (const auto* many = std::get_if<std::vector<ast::Integer>>(&s.value)) numbers = *many;
        if (numbers.empty()) return wrong(s, "'magic' is the numbers a file starts with, in hex, as in 'magic = 0x01234567, 0x00000001;'");
        for (const ast::Integer& n : numbers) {
            const std::size_t digits = n.text.size() - 2;
            const bool hex = n.text.size() > 2 && (n.text[1] == 'x' || n.text[1] == 'X');
            if (!hex || !power_of_two_upto8(digits / 2) || digits % 2 != 0) {
                diags_.error(n.where, "a magic number is written in hex with 2, 4, 8 or 16 digits, which give its bytes (" + n.text + ")");
                return false;
            }
            std::byte buf[8];
            rt::store_uint(buf, n.magnitude, static_cast<unsigned>(digits / 2), form_.order);
            for (std::size_t k = 0; k < digits / 2; ++k) form_.magic.push_back(std::to_integer<std::uint8_t>(buf[k]));
        }
        return true;
    }

    bool wrong(const ast::NativeSetting& s, const std::string& message) {
        diags_.error(where_of(s), message);
        return false;
    }

    // ---- the records

    bool code_fits(std::size_t i) {
        const ir::Record& r = schema_.records[i];
        if (!r.code || i == form_.header_record || form_.code_width == 0 || form_.code_width >= 8 || *r.code >> (8 * form_.code_width) == 0) return true;
        return error(sites_[i].code ? *sites_[i].code : sites_[i].record,
                     "the type code " + std::to_string(*r.code) + " of record " + quote(r.name) + " does not fit in " +
                         std::to_string(form_.code_width) + " byte(s) ('code' in the native block" +
                         (form_.name.empty() ? "" : " " + quote(form_.name)) + ")");
    }

    // Without type codes, every record of the file is of one type, and a
    // record that took no bytes would repeat forever.
    bool one_record() {
        std::vector<std::string> held;
        std::size_t last = 0;
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            if (schema_.records[i].predefined != rt::Predefined::none || sites_[i].uncoded || i == form_.header_record) continue;
            held.push_back(quote(schema_.records[i].name));
            last = i;
        }
        if (held.size() != 1) {
            std::string names;
            for (std::size_t k = 0; k < held.size(); ++k) names += (k == 0 ? "" : k + 1 == held.size() ? " and " : ", ") + held[k];
            return error(code_at_, "with 'code = 0' records carry no type code, so " + form_title(form_) + " holds one record type, not " +
                                       std::to_string(held.size()) + (held.empty() ? "" : " (" + names + "); leave the others out with 'tag.code = none'"));
        }
        if (schema_.records[last].fields.size() > 1) return true;
        return error(sites_[last].record, "record " + quote(schema_.records[last].name) + " has no fields, and without a type code (" +
                                              form_title(form_) + " has 'code = 0') it would take no bytes");
    }

    // Each field's width and kind in this form; false when one cannot be laid out.
    bool lay_out(std::size_t i) {
        const ir::Record& r = schema_.records[i];
        std::vector<ir::NativeField>& out = fields_[i];
        out.assign(r.fields.size(), {});
        out[0].width = form_.code_width;
        if (sites_[i].uncoded && i != form_.header_record) return true;  // no form holds it
        bool ok = true;
        for (const ir::Field& f : r.fields) {
            if (f.index != 0) ok = field(r, f, i, out) && parts_fit(r, f, i, out) && ok;
        }
        return ok;
    }

    // A field's parts ('bits') fit in its bytes in this form.
    bool parts_fit(const ir::Record& r, const ir::Field& f, std::size_t i, const std::vector<ir::NativeField>& out) {
        if (f.rules.naming != rt::Naming::parts || f.rules.names.empty()) return true;
        const auto bits = static_cast<std::uint32_t>(std::bit_width(f.rules.names.back().value));
        if (bits <= 8 * out[f.index].width) return true;
        return error(f.ctype.empty() ? sites_[i].field_text[f.index] : sites_[i].ctype[f.index],
                     "the parts of field " + quote(f.path) + " of record " + quote(r.name) + " take " + std::to_string(bits) + " bits, more than its " +
                         std::to_string(8 * out[f.index].width) + " in " + form_title(form_));
    }

    bool field(const ir::Record& r, const ir::Field& f, std::size_t i, std::vector<ir::NativeField>& out) {
        const std::string what = "field " + quote(f.path) + " of record " + quote(r.name);
        if (!f.ctype.empty()) return typed_field(r, f, sites_[i].ctype[f.index], what, out);
        if (f.width_from) return true;  // bytes as long as their length field says
        const std::uint32_t w = f.width != 0 ? f.width : f.restore_width;
        const Location& at = sites_[i].field_text[f.index];
        if (w == 0) return error(at, what + " has no width of its own (its interpretation stores none), which " + form_title(form_) + " needs");
        if (f.type != ir::Type::bytes && w > 8) return error(at, what + " is " + std::to_string(w) + " bytes wide; " + form_title(form_) + " holds numbers of 1 to 8 bytes");
        if (f.type != ir::Type::bytes && form_.align != 0 && !power_of_two_upto8(w)) {
            return error(at, what + " is " + std::to_string(w) + " bytes wide, a size no C number has; an aligned native form needs 1, 2, 4 or 8");
        }
        out[f.index].width = w;
        return true;
    }

    // A field with a C type: a number of the type's size, or a char array.
    bool typed_field(const ir::Record& r, const ir::Field& f, const Location& at, const std::string& what, std::vector<ir::NativeField>& out) {
        const auto size = std::find_if(form_.sizes.begin(), form_.sizes.end(), [&](const auto& s) { return s.first == f.ctype; });
        if (size == form_.sizes.end()) {
            return error(at, what + " has the C type " + quote(f.ctype) + ", whose size " + form_title(form_) + " does not give ('sizeof(" + f.ctype + ") = N;')");
        }
        used_.insert(f.ctype);
        out[f.index].width = size->second;
        if (f.type != ir::Type::bytes) {
            const bool fits = f.type == ir::Type::floating ? (size->second == 4 || size->second == 8) : power_of_two_upto8(size->second);
            if (!fits) return error(at, what + " is a number, and " + form_title(form_) + " makes its C type " + quote(f.ctype) + " " + std::to_string(size->second) + " bytes");
            return true;
        }
        // A char array: its length field is not stored, but found from the NUL.
        const std::uint32_t length = *f.width_from;
        for (const ir::Field& other : r.fields) {
            if (&other != &f && other.width_from == length) {
                return error(at, what + " is a C char array whose length field " + quote(r.fields[length].path) + " also measures " + quote(other.path));
            }
        }
        if (counts_a_group(r.layout, length)) return error(at, what + " is a C char array whose length field " + quote(r.fields[length].path) + " also counts a group");
        if (group_of(r.layout, length) != group_of(r.layout, f.index)) {
            return error(at, what + " is a C char array whose length field " + quote(r.fields[length].path) + " is not in the same repeated group");
        }
        out[f.index].kind = rt::NativeKind::chars;
        out[length] = {0, rt::NativeKind::implied};
        return true;
    }

    // Where `field` sits: nullopt when `items` do not hold it, else the innermost
    // repeated group around it (nullptr at record level).
    static std::optional<const ir::Repeat*> group_of(const std::vector<ir::LayoutItem>& items, std::uint32_t field,
                                                     const ir::Repeat* around = nullptr) {
        for (const ir::LayoutItem& item : items) {
            if (const auto* index = std::get_if<std::uint32_t>(&item)) {
                if (*index == field) return around;
            } else if (auto found = group_of(std::get<ir::Repeat>(item).items, field, &std::get<ir::Repeat>(item))) {
                return found;
            }
        }
        return std::nullopt;
    }

    static bool counts_a_group(const std::vector<ir::LayoutItem>& items, std::uint32_t field) {
        for (const ir::LayoutItem& item : items) {
            const auto* g = std::get_if<ir::Repeat>(&item);
            if (g && (g->count == field || counts_a_group(g->items, field))) return true;
        }
        return false;
    }

    bool error(const Location& at, const std::string& message) {
        diags_.error(at, message);
        return false;
    }

    const ast::NativeBlock& block_;
    ir::Schema& schema_;
    const std::vector<RecordTextSites>& sites_;
    Diagnostics& diags_;
    ir::NativeForm form_;
    std::vector<std::vector<ir::NativeField>> fields_;  // per record, per field
    const ast::NativeSetting* magic_ = nullptr;
    Location code_at_;
    bool bitfields_set_ = false;
    std::map<std::string, Location> size_at_;
    std::set<std::string> used_;
};

class NativeCheck {
public:
    NativeCheck(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites, Diagnostics& diags)
        : dtd_(dtd), schema_(schema), sites_(sites), diags_(diags) {}

    void run() {
        if (dtd_.native_blocks.empty()) {
            for (std::size_t i = 0; i < schema_.records.size(); ++i) {
                if (!sites_[i].code) continue;
                diags_.error(*sites_[i].code, "record " + quote(schema_.records[i].name) + (sites_[i].uncoded ? " sets 'tag.code = none'" : " has a type code") +
                                                  ", but the DTD has no 'native { ... }' block");
            }
            return;
        }
        if (!names_ok()) return;
        if (schema_.sections.size() > 1) {
            diags_.error(dtd_.native_blocks.front().where, "a native form is one stream of records, and this DTD has sections");
            return;
        }
        if (!codes_ok()) return;
        for (const ast::NativeBlock& block : dtd_.native_blocks) {
            if (auto form = FormResolver(block, schema_, sites_, diags_).run()) schema_.native.push_back(std::move(*form));
        }
        if (schema_.native.size() == dtd_.native_blocks.size()) return;
        schema_.native.clear();
        for (ir::Record& r : schema_.records) r.native.clear();
    }

private:
    // One block may be unnamed; several are each named, each name once.
    bool names_ok() {
        const auto& blocks = dtd_.native_blocks;
        std::map<std::string, const ast::NativeBlock*> seen;
        bool ok = true;
        for (const ast::NativeBlock& b : blocks) {
            if (!b.name) {
                if (blocks.size() > 1) ok = error(b.where, "a DTD with several native blocks names each one, as in 'native lp64 { ... }'");
                continue;
            }
            if (auto [it, fresh] = seen.emplace(b.name->text, &b); !fresh) {
                diags_.error(b.name->where, "the DTD already has a native block named " + quote(b.name->text))
                    .notes.push_back({Severity::note, it->second->name->where, "it is first named here", {}});
                ok = false;
            }
        }
        return ok;
    }

    // Every record held by the native forms has a unique code (FormResolver checks that it fits).
    bool codes_ok() {
        std::map<std::uint64_t, std::size_t> taken;
        bool ok = true;
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            ir::Record& r = schema_.records[i];
            if (r.predefined != rt::Predefined::none || sites_[i].uncoded) continue;
            const Location& at = sites_[i].code ? *sites_[i].code : sites_[i].record;
            if (!r.code) r.code = r.tag;
            if (auto [it, fresh] = taken.emplace(*r.code, i); !fresh) {
                ok = error(at, "record " + quote(r.name) + " has the type code " + std::to_string(*r.code) + ", which record " +
                                   quote(schema_.records[it->second].name) + " has already");
            }
        }
        return ok;
    }

    bool error(const Location& at, const std::string& message) {
        diags_.error(at, message);
        return false;
    }

    const ast::Dtd& dtd_;
    ir::Schema& schema_;
    const std::vector<RecordTextSites>& sites_;
    Diagnostics& diags_;
};

}  // namespace

void resolve_native_form(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites,
                         Diagnostics& diags) {
    NativeCheck(dtd, schema, sites, diags).run();
}

}  // namespace metatf::front
