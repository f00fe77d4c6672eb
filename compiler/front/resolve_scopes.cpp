// Stage 1: the scopes (predefined, global, sections), their records and the properties set outside records.
#include "resolve_stages.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace metatf::front::stage {

namespace {

// Constant-initialized: a DTD may be compiled during another file's static initialization.
constexpr std::array<std::string_view, 4> predefined_names = {"vfield", "comment", "section", "metadata"};

bool is_predefined(std::string_view name) { return std::ranges::find(predefined_names, name) != predefined_names.end(); }

std::string scope_label(const Scope& s) {
    return s.parent ? "section " + quote(s.name) : std::string("the global scope");
}

class ScopeBuilder {
public:
    ScopeBuilder(Scopes& out, Reporter& report) : out_(out), report_(report) {}

    void add_records(Scope& scope, const std::vector<ast::RecordDef>& defs) {
        for (const ast::RecordDef& def : defs) {
            const std::string& n = def.name.text;
            if (!scope.predefined && (is_predefined(n) || n == "tag")) {
                report_.error(def.name.where, n == "tag" ? "'tag' is reserved for the record tag and cannot name a record"
                                                         : quote(n) + " is a predefined record and cannot be redefined");
                continue;
            }
            if (auto [it, fresh] = scope.records.emplace(n, &def); !fresh) {
                Reporter::note(&report_.error(def.name.where, "record " + quote(n) + " is defined twice in " + scope_label(scope)),
                               it->second->name.where, "the first definition is here");
            }
        }
    }

    void add_properties(Scope& scope, const std::vector<ast::Property>& props) {
        for (const ast::Property& p : props) {
            if (!known_property(p)) {
                report_unknown_property(report_, p);
                continue;
            }
            if (is_predefined(p.target.front().text) && p.target.size() > 1) {
                set_comment_length(scope, p);
                continue;
            }
            if (p.target.size() != 1) {
                report_.error(p.target[1].where, "a property outside a record names one field kind, not a path; set " +
                                                     quote(path_text(p.target) + "." + p.property.text) +
                                                     " inside the record's '{ ... }'");
                continue;
            }
            if (auto problem = misplaced(scope, p)) {
                report_.error(problem->first, problem->second);
                continue;
            }
            const std::string key = p.target.front().text + "." + p.property.text;
            if (auto [it, fresh] = scope.properties.emplace(key, ScopeProperty{&p, false}); !fresh) {
                Reporter::note(&report_.error(p.target.front().where, quote(key) + " is already set in " + scope_label(scope)),
                               it->second.property->target.front().where, "it is first set here");
            }
        }
    }

    // Of the predefined records, a DTD sets one thing: how many bytes a
    // comment's length takes (HATF 1.0's comments have 2), once, globally.
    void set_comment_length(const Scope& scope, const ast::Property& p) {
        const bool length = p.target.size() == 2 && p.target[0].text == "comment" && p.target[1].text == "length";
        if (!length || p.property.text != "width") {
            report_.error(p.target.front().where, "of the predefined records, a DTD sets only the width of a comment's length, "
                                                  "as in 'comment.length.width = 2;'");
            return;
        }
        if (scope.parent) {
            report_.error(p.target.front().where, "a comment's length width is set once, globally, not in " + scope_label(scope));
            return;
        }
        if (comment_length_) {
            Reporter::note(&report_.error(p.target.front().where, "'comment.length.width' is already set"),
                           comment_length_->target.front().where, "it is first set here");
            return;
        }
        comment_length_ = &p;
        const auto* num = std::get_if<ast::Integer>(&p.value);
        if (!num || num->negative || num->magnitude < 1 || num->magnitude > 2) {
            report_.error(where_of(p.value), "a comment's length takes 1 or 2 bytes (up to 255 or 65,535 bytes of text)");
            return;
        }
        out_.comment_length = static_cast<std::uint32_t>(num->magnitude);
    }

    void add_sections(const std::vector<ast::Section>& sections) {
        out_.sections.reserve(sections.size());  // scopes point at each other: no reallocation
        for (const ast::Section& s : sections) {
            check_section(s);
            Scope& scope = out_.sections.emplace_back();
            scope.parent = &out_.global;
            const ast::Integer& num = s.number;
            const bool valid = !num.negative && num.magnitude >= 1 && num.magnitude <= 255;
            scope.number = static_cast<std::uint8_t>(valid ? num.magnitude : 0);
            scope.name = s.name.text;
            add_records(scope, s.records);
            add_properties(scope, s.properties);
            out_.all.push_back(&scope);
        }
    }

private:
    // A property that cannot be set for a whole scope: where and why.
    static std::optional<std::pair<Location, std::string>> misplaced(const Scope& scope, const ast::Property& p) {
        const std::string& kind = p.target.front().text;
        const std::string& prop = p.property.text;
        if (prop == "mnemonic") {
            return std::pair{p.property.where, kind == "tag" ? "a record's mnemonic is set inside its '{ ... }', not for a whole scope"
                                                             : mnemonic_error()};
        }
        if (prop == "value" && kind == "tag") {
            return std::pair{p.property.where, std::string("'tag.value' is set inside a record's '{ ... }', not for a whole scope")};
        }
        if (kind == "tag" && prop != "width") return std::pair{p.property.where, tag_property_error(prop)};
        if (kind == "tag" && scope.parent) {
            return std::pair{p.target.front().where, "the tag's width is set once, globally, not in section " + quote(scope.name)};
        }
        return std::nullopt;
    }

    // Section numbers and names are unique; names do not clash with reserved words.
    void check_section(const ast::Section& s) {
        const ast::Integer& num = s.number;
        if (num.negative || num.magnitude < 1 || num.magnitude > 255) {
            report_.error(num.where, "section number " + num.text + " is out of range: sections are numbered 1 to 255");
        } else if (auto [it, fresh] = by_number_.emplace(num.magnitude, &s); !fresh) {
            Reporter::note(&report_.error(num.where, "section number " + num.text + " is already used by section " +
                                                         quote(it->second->name.text)),
                           it->second->number.where, "section " + quote(it->second->name.text) + " is here");
        }
        if (is_predefined(s.name.text) || s.name.text == "global" || s.name.text == "tag") {
            report_.error(s.name.where, quote(s.name.text) + " is reserved and cannot name a section");
        } else if (auto [it, fresh] = by_name_.emplace(s.name.text, &s); !fresh) {
            Reporter::note(&report_.error(s.name.where, "section " + quote(s.name.text) + " is defined twice"),
                           it->second->name.where, "the first definition is here");
        }
    }

    Scopes& out_;
    Reporter& report_;
    const ast::Property* comment_length_ = nullptr;
    std::map<std::string, const ast::Section*, std::less<>> by_name_;
    std::map<std::uint64_t, const ast::Section*> by_number_;
};

void resolve_tag_width(Scopes& scopes, ir::Schema& schema, Reporter& report) {
    auto it = scopes.global.properties.find("tag.width");
    if (it == scopes.global.properties.end()) return;
    it->second.used = true;
    const ast::Value& v = it->second.property->value;
    const auto* num = std::get_if<ast::Integer>(&v);
    if (!num || num->negative || num->magnitude < 1 || num->magnitude > 8) {
        report.error(where_of(v), "the tag's width must be a number of bytes from 1 to 8");
        return;
    }
    schema.tag_width = static_cast<std::uint32_t>(num->magnitude);
}

}  // namespace

const ast::RecordDef* Scopes::find_record(const Scope* scope, std::string_view name) const {
    for (; scope; scope = scope->parent) {
        if (auto it = scope->records.find(name); it != scope->records.end()) return it->second;
    }
    if (auto it = predefined.records.find(name); it != predefined.records.end()) return it->second;
    return nullptr;
}

void resolve_scopes(const ast::Dtd& dtd, const ast::Dtd& prelude, Scopes& out, ir::Schema& schema, Reporter& report) {
    ScopeBuilder builder(out, report);
    out.predefined.predefined = true;
    out.predefined.name = "global";
    builder.add_records(out.predefined, prelude.records);
    out.global.name = "global";
    builder.add_records(out.global, dtd.records);
    builder.add_properties(out.global, dtd.properties);
    out.all = {&out.predefined, &out.global};
    builder.add_sections(dtd.sections);
    for (const Scope* s : out.all) {
        for (const auto& [n, def] : s->records) out.scope_of.emplace(def, s);
    }
    schema.sections.push_back({0, "global"});
    for (const Scope& s : out.sections) {
        if (s.number != 0) schema.sections.push_back({s.number, s.name});
    }
    std::sort(schema.sections.begin(), schema.sections.end(),
              [](const auto& a, const auto& b) { return a.number < b.number; });
    resolve_tag_width(out, schema, report);
}

}  // namespace metatf::front::stage
