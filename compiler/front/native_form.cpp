#include "native_form.hpp"

#include <map>

namespace metatf::front {

namespace {

bool contains_any(std::string_view s, std::string_view chars) { return s.find_first_of(chars) != std::string_view::npos; }

Location where_of(const ast::NativeSetting& s) {
    return std::visit([](const auto& v) { return v.where; }, s.value);
}

class NativeCheck {
public:
    NativeCheck(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites, Diagnostics& diags)
        : dtd_(dtd), schema_(schema), sites_(sites), diags_(diags) {}

    void run() {
        if (dtd_.native_blocks.empty()) {
            for (std::size_t i = 0; i < schema_.records.size(); ++i) {
                if (!sites_[i].code) continue;
                diags_.error(*sites_[i].code, "record " + quote(schema_.records[i].name) +
                                                  " has a type code, but the DTD has no 'native { ... }' block");
            }
            return;
        }
        for (std::size_t i = 1; i < dtd_.native_blocks.size(); ++i) {
            diags_.error(dtd_.native_blocks[i].where, "the DTD already has a native block")
                .notes.push_back({Severity::note, dtd_.native_blocks[0].where, "the first native block is here", {}});
        }
        const ast::NativeBlock& block = dtd_.native_blocks.front();
        std::optional<ir::NativeForm> form = settings(block);
        if (!form) return;
        if (schema_.sections.size() > 1) {
            diags_.error(block.where, "a native form is one stream of records, and this DTD has sections");
            return;
        }
        schema_.native = std::move(*form);
        check_records();
    }

private:
    // order, code and header; nullopt when the block is unusable.
    std::optional<ir::NativeForm> settings(const ast::NativeBlock& block) {
        ir::NativeForm form;
        std::map<std::string, const ast::NativeSetting*> seen;
        bool ok = true;
        for (const ast::NativeSetting& s : block.settings) {
            const std::string& n = s.name.text;
            if (auto [it, fresh] = seen.emplace(n, &s); !fresh) {
                diags_.error(s.name.where, quote(n) + " is already set in the native block")
                    .notes.push_back({Severity::note, it->second->name.where, "it is first set here", {}});
                ok = false;
                continue;
            }
            ok = setting(s, form) && ok;
        }
        for (const char* required : {"order", "code"}) {
            if (seen.count(required)) continue;
            diags_.error(block.where, std::string("the native block needs '") + required +
                                          (required == std::string("order") ? " = big;' or 'order = little;'" : " = N;', the bytes of the type code (1, 2, 4 or 8)"));
            ok = false;
        }
        return ok ? std::optional(form) : std::nullopt;
    }

    bool setting(const ast::NativeSetting& s, ir::NativeForm& form) {
        const std::string& n = s.name.text;
        const auto* word = std::get_if<ast::Name>(&s.value);
        const auto* number = std::get_if<ast::Integer>(&s.value);
        const auto* text = std::get_if<ast::String>(&s.value);
        if (n == "order") {
            if (!word || (word->text != "big" && word->text != "little")) return wrong(s, "'order' is 'big' or 'little'");
            form.order = word->text == "big" ? rt::ByteOrder::big : rt::ByteOrder::little;
            return true;
        }
        if (n == "code") {
            const bool fits = number && !number->negative &&
                              (number->magnitude == 1 || number->magnitude == 2 || number->magnitude == 4 || number->magnitude == 8);
            if (!fits) return wrong(s, "'code' is the bytes of a record's type code: 1, 2, 4 or 8");
            form.code_width = static_cast<std::uint32_t>(number->magnitude);
            return true;
        }
        if (n == "header") {
            if (!text || text->value.empty() || contains_any(text->value, "\r\n")) {
                return wrong(s, "'header' is the line that ends the file's ASCII header: a string on one line, as in 'header = \"$\";'");
            }
            form.header_end = text->value;
            return true;
        }
        diags_.error(s.name.where, "unknown native setting " + quote(n) + " (the settings are order, code and header)");
        return false;
    }

    bool wrong(const ast::NativeSetting& s, const std::string& message) {
        diags_.error(where_of(s), message);
        return false;
    }

    // Codes are unique and fit; every field has a width of its own.
    void check_records() {
        const ir::NativeForm& form = *schema_.native;
        std::map<std::uint64_t, std::size_t> taken;
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            ir::Record& r = schema_.records[i];
            if (r.predefined != rt::Predefined::none) continue;
            const Location& at = sites_[i].code ? *sites_[i].code : sites_[i].record;
            if (!r.code) r.code = r.tag;
            if (form.code_width < 8 && *r.code >> (8 * form.code_width) != 0) {
                diags_.error(at, "the type code " + std::to_string(*r.code) + " of record " + quote(r.name) + " does not fit in " +
                                     std::to_string(form.code_width) + " byte(s) ('code' in the native block)");
            }
            if (auto [it, fresh] = taken.emplace(*r.code, i); !fresh) {
                diags_.error(at, "record " + quote(r.name) + " has the type code " + std::to_string(*r.code) + ", which record " +
                                     quote(schema_.records[it->second].name) + " has already");
            }
            for (const ir::Field& f : r.fields) check_field(r, f, i);
        }
    }

    void check_field(const ir::Record& r, const ir::Field& f, std::size_t i) {
        if (f.index == 0 || f.width_from) return;
        const std::uint32_t w = f.width != 0 ? f.width : f.restore_width;
        const std::string what = "field " + quote(f.path) + " of record " + quote(r.name);
        if (w == 0) {
            diags_.error(sites_[i].field_text[f.index], what + " has no width of its own (its interpretation stores none), which the native form needs");
        } else if (f.type != ir::Type::bytes && w > 8) {
            diags_.error(sites_[i].field_text[f.index], what + " is " + std::to_string(w) + " bytes wide; the native form holds numbers of 1 to 8 bytes");
        }
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
