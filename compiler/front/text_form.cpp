#include "text_form.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace metatf::front {

namespace {

const char* format_name(ast::TextFormatKind k) {
    using K = ast::TextFormatKind;
    switch (k) {
        case K::decimal: return "decimal";
        case K::hex: return "hex";
        case K::chars: return "chars";
        case K::string: return "string";
        case K::line: return "line";
        case K::omit: return "omit";
        case K::enumeration: return "enum";
        case K::clock: return "clock";
        case K::nested: return "nested";
    }
    return "decimal";
}

std::optional<std::string> chars_problem(const ast::TextFormat& f) {
    const std::string& c = f.chars.value;
    if (c.empty()) return "'chars' needs at least one character";
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (c[i] == '\n' || c[i] == '\r') return "'chars' cannot contain a line break";
        for (std::size_t j = 0; j < i; ++j) {
            const bool same = f.ignore_case ? std::tolower(static_cast<unsigned char>(c[i])) ==
                                                  std::tolower(static_cast<unsigned char>(c[j]))
                                            : c[i] == c[j];
            if (same) return "'chars' lists " + quote(std::string(1, c[i])) + " twice" + (f.ignore_case ? " (ignoring case)" : "");
        }
    }
    return std::nullopt;
}

bool contains_any(std::string_view s, std::string_view chars) { return s.find_first_of(chars) != std::string_view::npos; }

// Checks of one record's text form against the whole DTD's.
class RecordCheck {
public:
    RecordCheck(const ir::Record& r, const RecordTextSites& sites, const ir::TextForm& form, Diagnostics& diags)
        : r_(r), sites_(sites), form_(form), diags_(diags) {}

    void run() {
        check_mnemonic();
        for (const ir::Field& f : r_.fields) {
            check_after(f);
            if (f.index == 0) continue;
            if (f.text.format == ir::TextFormat::line) check_line(f);
            if (f.text.format == ir::TextFormat::nested) check_nested(f);
            if (f.text.format == ir::TextFormat::omit) check_omit(f);
            if (f.text.column != 0 && f.type == ir::Type::bytes && known_length(f)) {
                error(f, "'column' pads a value whose length the line does not give, and " + describe(f) +
                             " takes exactly as many bytes as its length says, blanks included");
            }
            if (f.text.format == ir::TextFormat::enumeration) check_enum(f);
            if (f.text.format == ir::TextFormat::chars && contains_any(f.text.chars, form_.separator)) {
                error(f, "'chars' of " + describe(f) + " contains the separator " + quote(form_.separator));
            }
        }
    }

private:
    void error(const ir::Field& f, std::string message) { diags_.error(sites_.field_text[f.index], std::move(message)); }
    std::string describe(const ir::Field& f) const { return "field " + quote(f.path) + " of record " + quote(r_.name); }

    void check_mnemonic() {
        const std::string& m = *r_.mnemonic;
        if (contains_any(m, " \t\r\n") || (!m.empty() && m.find(form_.separator) != std::string::npos)) {
            diags_.error(*sites_.mnemonic, "the mnemonic of record " + quote(r_.name) +
                                               " cannot contain a blank, a line break or the separator " +
                                               quote(form_.separator));
        }
    }

    // A reader drops the blanks that end a line when the separator is a blank.
    void check_after(const ir::Field& f) {
        const std::string& a = f.text.after;
        if (form_.separator == " " && !a.empty() && (a.back() == ' ' || a.back() == '\t')) {
            diags_.error(f.index == 0 ? *sites_.mnemonic : sites_.field_text[f.index],
                         "the text after " + (f.index == 0 ? "the mnemonic of record " + quote(r_.name) : describe(f)) +
                             " ends in a blank, which a reader drops at the end of a line when the separator is \" \"");
        }
    }

    // `text = enum` spells the values by the names of the field's `enum`.
    void check_enum(const ir::Field& f) {
        if (f.rules.names.empty() || f.rules.naming != rt::Naming::values) {
            const std::string has = f.rules.names.empty() ? " has no 'enum'"
                                    : f.rules.naming == rt::Naming::flags ? " has 'flags', not 'enum'"
                                                                          : " has 'bits', not 'enum'";
            error(f, "'enum' writes a value as the name the field's 'enum' gives it, and " + describe(f) + has + " (as in '" +
                         f.kind + ".enum = { Read = 0, Write = 1 };')");
            return;
        }
        for (const ir::NamedValue& n : f.rules.names) {
            if (n.name.find(form_.separator) != std::string::npos) {
                error(f, "the name " + quote(n.name) + " of " + describe(f) + " contains the separator " + quote(form_.separator));
                return;
            }
        }
    }

    // A bytes field read as exactly its length: fixed, or a length field written before it.
    bool known_length(const ir::Field& f) const {
        return !f.width_from || r_.fields[*f.width_from].text.format != ir::TextFormat::omit;
    }

    void check_line(const ir::Field& f) {
        const auto* last = r_.layout.empty() ? nullptr : std::get_if<std::uint32_t>(&r_.layout.back());
        if (!last || *last != f.index) {
            error(f, "'line' takes the rest of the line, so only the last field of a record can use it; " +
                         describe(f) + " is not last");
            return;
        }
        // A length the line does not give could disagree with the rest of the
        // line: the text would read into a trace that could not be written back.
        if (!f.width_from) {
            error(f, "'line' takes the rest of the line, whatever its length, and " + describe(f) + " has a fixed width of " +
                         std::to_string(f.width) + " bytes; 'string' takes exactly that many");
        } else if (const ir::Field& length = r_.fields[*f.width_from]; length.text.format != ir::TextFormat::omit) {
            error(f, "'line' takes the rest of the line, whatever its length, and the length of " + describe(f) + " is " +
                         quote(length.path) + ", written before it; omit the length ('" + length.path +
                         ".text = omit;'), or use 'string', which takes as many bytes as the length says");
        }
    }

    // A nested value ends at its own `after` text; its length comes from the line.
    void check_nested(const ir::Field& f) {
        if (f.text.after.empty()) {
            error(f, "'nested' reads up to the field's own 'after' text, and " + describe(f) + " has none (as in '" + f.kind +
                         ".after = \")\";')");
        } else if (!f.width_from || r_.fields[*f.width_from].text.format != ir::TextFormat::omit) {
            error(f, "'nested' takes the bytes up to its 'after' text, whatever their number, so the length of " + describe(f) +
                         " must be a field the line omits ('" + f.kind + "Length.text = omit;')");
        }
    }

    // An omitted field must be one the line determines.
    void check_omit(const ir::Field& f) {
        for (const ir::Field& g : r_.fields) {
            if (g.width_from == f.index && g.text.format != ir::TextFormat::omit) return;  // a token's length
        }
        for (std::size_t i = 0; i < r_.layout.size(); ++i) {
            const auto* repeat = std::get_if<ir::Repeat>(&r_.layout[i]);
            if (!repeat || repeat->count != f.index) continue;
            check_trailing_group(f, *repeat);
            if (i + 1 < r_.layout.size()) check_marked_group(f, *repeat, i + 1);
            return;
        }
        error(f, "'omit' applies only to a field the line determines: the length of a bytes field written in the "
                 "line, or the count of a repeated group at the top level of the record; " + describe(f) + " is neither");
    }

    // A group with an omitted count before the record's end repeats while
    // the line goes on with its first field's own `before` text (its marker),
    // which the text after the group must not start with.
    void check_marked_group(const ir::Field& count, const ir::Repeat& group, std::size_t after) {
        const auto* first = group.items.empty() ? nullptr : std::get_if<std::uint32_t>(&group.items.front());
        const std::optional<std::string>& marker = first ? r_.fields[*first].text.before : std::nullopt;
        if (!marker || marker->find_first_not_of(" \t") == std::string::npos) {
            error(count, "the count " + quote(count.path) + " of record " + quote(r_.name) +
                             " is omitted and its group does not end the record, so the group's first field needs a 'before' "
                             "text of its own that is not blanks, which tells where an element starts (as in '" +
                             (first ? r_.fields[*first].path : std::string("x")) + ".before = \" (\";')");
            return;
        }
        // The next field the line shows: its own text, or the separator and a value, must not pass for the marker.
        const ir::Field* next = nullptr;
        for (std::size_t i = after; i < r_.layout.size() && !next; ++i) {
            const auto* index = std::get_if<std::uint32_t>(&r_.layout[i]);
            if (!index || r_.fields[*index].text.format != ir::TextFormat::omit) next = index ? &r_.fields[*index] : &count;
        }
        const std::string then = next && next != &count && next->text.before ? *next->text.before : form_.separator;
        const bool value_may_follow = !(next && next->text.before) && next != nullptr &&
                                      (next == &count || next->type == ir::Type::bytes) && marker->starts_with(then);
        if (then.starts_with(*marker) || value_may_follow) {
            error(count, "the group counted by " + quote(count.path) + " starts with " + quote(*marker) +
                             ", and what follows the group, " + quote(then) + (value_may_follow ? " and a string" : "") +
                             ", could be taken for it");
        }
    }

    // A group counted by the tokens left on the line: each element is whole tokens.
    void check_trailing_group(const ir::Field& count, const ir::Repeat& group) {
        std::size_t tokens = 0;
        for (const ir::LayoutItem& item : group.items) {
            const auto* index = std::get_if<std::uint32_t>(&item);
            const ir::Field* g = index ? &r_.fields[*index] : nullptr;
            if (!g || g->text.format == ir::TextFormat::line || g->text.format == ir::TextFormat::nested ||
                (g->type == ir::Type::bytes && g->text.format == ir::TextFormat::string &&
                 !(g->width_from && r_.fields[*g->width_from].text.format == ir::TextFormat::omit))) {
                error(count, "the count " + quote(count.path) + " of record " + quote(r_.name) +
                                 " is omitted, so each repeated element must be whole tokens: no nested group, no "
                                 "'line' and no bytes field of a fixed or written length");
                return;
            }
            if (g->text.format != ir::TextFormat::omit) ++tokens;
        }
        if (tokens == 0) error(count, "the repeated group counted by " + quote(count.path) + " writes no token");
    }

    const ir::Record& r_;
    const RecordTextSites& sites_;
    const ir::TextForm& form_;
    Diagnostics& diags_;
};

class FormCheck {
public:
    FormCheck(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites, Diagnostics& diags)
        : dtd_(dtd), schema_(schema), sites_(sites), diags_(diags) {}

    void run() {
        const ast::TextBlock* block = text_block();
        std::vector<std::size_t> with_text;
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            if (schema_.records[i].mnemonic) with_text.push_back(i);
        }
        if (!block) {
            for (std::size_t i : with_text) {
                diags_.error(*sites_[i].mnemonic, "record " + quote(schema_.records[i].name) +
                                                      " has a mnemonic, but the DTD has no 'text { ... }' block");
            }
            return;
        }
        if (!settings(*block)) return;
        if (with_text.empty() && !diags_.has_errors()) {
            diags_.warning(block->where, "the text block has no effect: no record sets 'tag.mnemonic'");
        }
        if (!schema_.text->mnemonic_after.empty()) check_head(*block, with_text);
        for (std::size_t i : with_text) RecordCheck(schema_.records[i], sites_[i], *schema_.text, diags_).run();
    }

private:
    const ast::TextBlock* text_block() {
        if (dtd_.text_blocks.empty()) return nullptr;
        for (std::size_t i = 1; i < dtd_.text_blocks.size(); ++i) {
            diags_.error(dtd_.text_blocks[i].where, "the DTD already has a text block")
                .notes.push_back({Severity::note, dtd_.text_blocks[0].where, "the first text block is here", {}});
        }
        return &dtd_.text_blocks.front();
    }

    // Reads separator, begin and end into schema.text; false when the block is unusable.
    bool settings(const ast::TextBlock& block) {
        ir::TextForm form;
        std::map<std::string, const ast::TextSetting*> seen;
        bool ok = true;
        for (const ast::TextSetting& s : block.settings) {
            const std::string& n = s.name.text;
            std::string* target = n == "separator" ? &form.separator : n == "begin" ? &form.begin : n == "end" ? &form.end
                                  : n == "mnemonicAfter" ? &form.mnemonic_after : nullptr;
            if (!target) {
                diags_.error(s.name.where, "unknown text setting " + quote(n) + " (the settings are separator, begin, end and mnemonicAfter)");
                ok = false;
                continue;
            }
            if (auto [it, fresh] = seen.emplace(n, &s); !fresh) {
                diags_.error(s.name.where, quote(n) + " is already set in the text block")
                    .notes.push_back({Severity::note, it->second->name.where, "it is first set here", {}});
                ok = false;
                continue;
            }
            if (contains_any(s.value.value, "\r\n")) {
                diags_.error(s.value.where, "the text setting " + quote(n) + " cannot contain a line break");
                ok = false;
            }
            *target = s.value.value;
        }
        if (seen.count("separator") && form.separator.empty()) {
            diags_.error(seen["separator"]->value.where, "the separator cannot be empty");
            ok = false;
        } else if (!seen.count("separator")) {
            diags_.error(block.where, "the text block needs a separator, as in 'separator = \",\";'");
            ok = false;
        }
        if (ok) schema_.text = std::move(form);
        return ok;
    }

    // mnemonicAfter = "F": every text record starts with the same fields up
    // to F (the head), each a plain token, and has a mnemonic to tell it by.
    void check_head(const ast::TextBlock& block, const std::vector<std::size_t>& with_text) {
        const std::string& last = schema_.text->mnemonic_after;
        Location where = block.where;
        for (const ast::TextSetting& s : block.settings) {
            if (s.name.text == "mnemonicAfter") where = s.value.where;
        }
        std::vector<const ir::Field*> first;
        const ir::Record* first_record = nullptr;
        for (std::size_t i : with_text) {
            const ir::Record& r = schema_.records[i];
            std::vector<const ir::Field*> head;
            std::optional<std::string> problem = head_of(r, last, head);
            if (!problem && first_record && !same_head(head, first)) {
                problem = "does not start with the fields record " + quote(first_record->name) +
                          " starts with (the same names, types, scales and text formats, up to " + quote(last) + ")";
            }
            if (problem) {
                diags_.error(where, "'mnemonicAfter' puts the mnemonic after field " + quote(last) + ", but record " + quote(r.name) + " " +
                                        *problem);
                return;
            }
            if (!first_record) {
                first_record = &r;
                first = std::move(head);
            }
        }
        schema_.text->head = static_cast<std::uint32_t>(first.size());
    }

    // Record `r`'s fields up to `last`, or why they cannot be a head.
    static std::optional<std::string> head_of(const ir::Record& r, const std::string& last, std::vector<const ir::Field*>& head) {
        for (const ir::LayoutItem& item : r.layout) {
            const std::uint32_t* index = std::get_if<std::uint32_t>(&item);
            if (!index) return std::string("repeats a group before it");
            if (*index == 0) continue;  // the tag: its text is the mnemonic's
            const ir::Field& f = r.fields[*index];
            if (f.text.format == ir::TextFormat::line || f.text.format == ir::TextFormat::nested || f.text.format == ir::TextFormat::omit ||
                f.width_from) {
                return "has field " + quote(f.path) + " before it, which is not a plain token ('line', 'nested', 'omit', or a length another field gives)";
            }
            head.push_back(&f);
            if (f.path == last) return std::nullopt;
        }
        return "has no field " + quote(last) + " at its top level";
    }

    static bool same_head(const std::vector<const ir::Field*>& a, const std::vector<const ir::Field*>& b) {
        return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const ir::Field* f, const ir::Field* g) {
                   return f->index == g->index && f->path == g->path && f->type == g->type && f->scale == g->scale && f->text == g->text;
               });
    }

    const ast::Dtd& dtd_;
    ir::Schema& schema_;
    const std::vector<RecordTextSites>& sites_;
    Diagnostics& diags_;
};

}  // namespace

std::optional<std::string> text_format_problem(const ast::TextFormat& format, const ir::Field& field,
                                               const std::string& what) {
    using K = ast::TextFormatKind;
    const std::string name = quote(format_name(format.kind));
    const std::string is = "; " + what + " is " + quote(rt::name(field.type));
    if (format.digits) {
        const ast::Integer& d = *format.digits;
        if (d.negative || d.magnitude < 1 || d.magnitude > 64) return "'digits' takes a number from 1 to 64, not " + d.text;
        if (field.type == ir::Type::floating) return "'digits' applies to integers" + is;
        // A scaled number keeps its zeros in front; what may vary is how many fraction digits it shows.
        if (field.scale != 0 && ((format.kind != K::decimal && format.kind != K::clock) || d.magnitude > field.scale)) {
            return "'digits' of a scaled number is the fewest fraction digits written, 1 to its scale; " + what + " has scale " +
                   std::to_string(field.scale);
        }
    }
    if (format.column) {
        const ast::Integer& c = *format.column;
        if (c.negative || c.magnitude < 1 || c.magnitude > 255) return "'column' takes a width from 1 to 255, not " + c.text;
    }
    if (format.tab) {
        const ast::Integer& t = *format.tab;
        if (t.negative || t.magnitude < 1 || t.magnitude > 4096) return "'tab' takes a column from 1 to 4096, not " + t.text;
    }
    switch (format.kind) {
        case K::decimal:
            if (field.type == ir::Type::bytes) return name + " applies to numbers" + is;
            return std::nullopt;
        case K::hex:
        case K::chars:
        case K::omit:
            if (field.type != ir::Type::unsigned_int) return name + " applies to unsigned integers" + is;
            if (field.scale != 0) return name + " applies to integers without a scale; " + what + " has scale " + std::to_string(field.scale);
            if (format.kind != K::chars) return std::nullopt;
            if (auto problem = chars_problem(format)) return *problem + " (" + what + ")";
            return std::nullopt;
        case K::string:
        case K::line:
        case K::nested:
            if (field.type != ir::Type::bytes) return name + " applies to bytes fields" + is;
            return std::nullopt;
        case K::enumeration:
            if (!rt::is_integer(field.type)) return name + " applies to integers" + is;
            return std::nullopt;
        case K::clock:
            if (field.type != ir::Type::unsigned_int) return name + " applies to unsigned integers" + is;
            if (format.digits && field.scale == 0) return "'digits' of a 'clock' is the fewest fraction digits written: it needs a scale";
            return std::nullopt;
    }
    return std::nullopt;
}

ir::FieldText field_text(const ast::TextFormat& format) {
    using K = ast::TextFormatKind;
    ir::FieldText out;
    switch (format.kind) {
        case K::decimal: out.format = ir::TextFormat::decimal; break;
        case K::hex: out.format = ir::TextFormat::hex; break;
        case K::chars: out.format = ir::TextFormat::chars; break;
        case K::string: out.format = ir::TextFormat::string; break;
        case K::line: out.format = ir::TextFormat::line; break;
        case K::omit: out.format = ir::TextFormat::omit; break;
        case K::enumeration: out.format = ir::TextFormat::enumeration; break;
        case K::clock: out.format = ir::TextFormat::clock; break;
        case K::nested: out.format = ir::TextFormat::nested; break;
    }
    if (format.kind == K::chars) {
        out.chars = format.chars.value;
        out.ignore_case = format.ignore_case;
    }
    if (format.digits) out.digits = static_cast<std::uint8_t>(format.digits->magnitude);
    if (format.column) out.column = static_cast<std::uint8_t>(format.column->magnitude);
    if (format.tab) out.tab = static_cast<std::uint16_t>(format.tab->magnitude);
    out.upper = format.upper;
    out.left = format.left;
    return out;
}

std::optional<std::string> surround_problem(std::string_view prop, const std::string& text, const ir::Field& field,
                                            const std::string& what) {
    const std::string name = quote(prop);
    if (contains_any(text, "\r\n")) return name + " cannot contain a line break";
    if (prop == "before" && text.empty()) {
        return "'before' cannot be empty: a value needs text between it and the one before it (without 'before', the "
               "separator goes there)";
    }
    if (field.index != 0 && field.text.format == ir::TextFormat::omit) return name + " has no effect on " + what + ", which is omitted";
    if (prop == "after" && field.text.format == ir::TextFormat::line) {
        return "'after' cannot follow " + what + ": 'line' takes the rest of the line";
    }
    return std::nullopt;
}

void resolve_text_form(const ast::Dtd& dtd, ir::Schema& schema, const std::vector<RecordTextSites>& sites,
                       Diagnostics& diags) {
    FormCheck(dtd, schema, sites, diags).run();
}

}  // namespace metatf::front
