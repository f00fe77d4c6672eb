// Encoding variants (`variant NAME { record.field.property = value; ... }`):
// each variant's properties that name a record are resolved like the
// record's own block, over it, giving the encodings of the variant.
#include "resolve_stages.hpp"

#include <map>

namespace metatf::front::stage {

namespace {

std::string variant_error(const ast::Variant& v, const std::string& record, const std::string& what) {
    return "variant " + quote(v.name.text) + " of record " + quote(record) + ": " + what;
}

// Why `property` cannot be in a variant, or nothing.
std::optional<std::string> unfit_property(const ast::Property& p) {
    if (p.target.size() < 2) {
        return "a variant's property names a record and its field, as in 'alloc.size.width = 2;'";
    }
    if (p.target[1].text == "tag" && p.target.size() == 2) return "a variant cannot change the tag";
    if (p.property.text != "width" && p.property.text != "interpretation") {
        return "a variant sets 'width' and 'interpretation' only, not " + quote(p.property.text);
    }
    if (p.property.text == "width" && !std::holds_alternative<ast::Integer>(p.value)) {
        return "a variant's width is a number, as in 'alloc.size.width = 2;'";
    }
    return std::nullopt;
}

// Why the variant's encodings `r` of a record whose own are `own` cannot be
// read and written with a fixed layout that metadata can set, or nothing.
std::optional<std::string> unfit_encodings(const ResolvedFields& r, const std::vector<ir::Field>& own) {
    for (const ir::LayoutItem& item : r.layout) {
        if (std::holds_alternative<ir::Repeat>(item)) return "variants are for records of a fixed layout, and this one repeats a group";
    }
    for (const ir::Field& f : r.fields) {
        const ir::InterpretationKind k = f.interpretation.kind;
        if (f.value && f.index != 0) return "field " + quote(f.path) + " has a fixed value ('value = N'), read field by field";
        const ir::Field& o = own[f.index];
        if (f.type != o.type || f.width_from != o.width_from) {
            return "field " + quote(f.path) + " would change its type or where its width comes from, which metadata cannot";
        }
        if (rt::codes(k) || k == ir::InterpretationKind::section_stride || k == ir::InterpretationKind::intern || f.feed != 0) {
            return "field " + quote(f.path) + " is " + (f.feed != 0 ? "fed to a pool" : std::string(rt::name(k))) +
                   ", which a fixed layout cannot hold";
        }
        if (f.width_from && (r.fields[*f.width_from].interpretation.kind != ir::InterpretationKind::default_value ||
                             r.fields[*f.width_from].interpretation.value > max_bytes_width)) {
            return "the length of " + quote(f.path) + " must be fixed: set '" + r.fields[*f.width_from].path +
                   ".interpretation = default N;' with N at most 65535";
        }
    }
    return std::nullopt;
}

class VariantResolver {
public:
    VariantResolver(Expansion& x, const std::vector<ir::Field>& own, const ir::Schema& schema, Reporter& report)
        : x_(x), own_(own), schema_(schema), report_(report) {}

    std::optional<ir::Variant> run(const ast::Variant& v, const std::vector<const ast::Property*>& properties) {
        properties_ = &properties;
        bool ok = true;
        for (const ast::Property* p : properties) ok = assign(v, *p) && ok;
        std::optional<ir::Variant> out;
        if (ok) out = resolve(v);
        restore();
        return out;
    }

private:
    // Sets the property on its field over what the record's blocks set.
    bool assign(const ast::Variant& v, const ast::Property& p) {
        if (auto problem = unfit_property(p)) {
            report_.error(p.property.where, *problem);
            return false;
        }
        DefContext& record = *x_.contexts.front();
        const std::vector<ast::Name> path(p.target.begin() + 1, p.target.end());
        Node* leaf = lookup(report_, record, path, true);
        if (!leaf) return false;
        auto& saved = saved_[leaf];
        if (saved.count(p.property.text)) {
            report_.error(p.property.where, variant_error(v, x_.record, "sets " + quote(path_text(path) + "." + p.property.text) + " twice"));
            return false;
        }
        auto it = leaf->assigned.find(p.property.text);
        saved.emplace(p.property.text, it == leaf->assigned.end() ? std::nullopt : std::optional(it->second));
        leaf->assigned[p.property.text] = Node::Assignment{&p, &record, 0};
        return true;
    }

    // The record's fields again, under the variant's properties. What is
    // wrong with them was said when the record was resolved: what is new here
    // is the variant's.
    std::optional<ir::Variant> resolve(const ast::Variant& v) {
        Diagnostics scratch;
        Reporter quiet(scratch);
        ResolvedFields fields = resolve_fields(x_, schema_, quiet);
        bool ok = fields.ok;
        for (const Diagnostic& d : scratch.all()) {
            Diagnostic* said = nullptr;
            if (d.severity == Severity::error) {
                said = &report_.error(d.where, d.message);
                ok = false;
            } else if (at_variant(d.where)) {  // the record's own warnings were said when it was resolved
                report_.warning(d.where, d.message);
            }
            if (said) Reporter::note(said, v.name.where, "in variant " + quote(v.name.text));
        }
        if (!ok) return std::nullopt;
        if (auto problem = unfit_encodings(fields, own_)) {
            report_.error(v.name.where, variant_error(v, x_.record, *problem));
            return std::nullopt;
        }
        ir::Variant out{v.name.text, {}};
        for (const ir::Field& f : fields.fields) out.fields.push_back({f.width, f.restore_width, f.interpretation});
        return out;
    }

    // Whether `where` is in one of the variant's properties.
    bool at_variant(const Location& where) const {
        for (const ast::Property* p : *properties_) {
            for (const Location& at : {p->target.front().where, p->property.where, where_of(p->value)}) {
                if (at.line == where.line && at.column == where.column) return true;
            }
        }
        return false;
    }

    void restore() {
        for (auto& [leaf, saved] : saved_) {
            for (auto& [property, assignment] : saved) {
                if (assignment) {
                    leaf->assigned[property] = *assignment;
                } else {
                    leaf->assigned.erase(property);
                }
            }
        }
    }

    Expansion& x_;
    const std::vector<ir::Field>& own_;
    const ir::Schema& schema_;
    Reporter& report_;
    std::map<Node*, std::map<std::string, std::optional<Node::Assignment>>> saved_;
    const std::vector<const ast::Property*>* properties_ = nullptr;
};

}  // namespace

std::vector<ir::Variant> resolve_variants(Expansion& x, const std::vector<ir::Field>& own, const std::vector<ast::Variant>& variants,
                                          const ir::Schema& schema, std::unordered_set<const ast::Property*>& used, Reporter& report) {
    std::vector<ir::Variant> out;
    for (const ast::Variant& v : variants) {
        std::vector<const ast::Property*> mine;
        for (const ast::Property& p : v.properties) {
            if (p.target.front().text != x.record) continue;
            mine.push_back(&p);
            used.insert(&p);
        }
        if (mine.empty()) continue;
        for (const ir::Variant& earlier : out) {
            if (earlier.name == v.name.text) {
                report.error(v.name.where, "variant " + quote(v.name.text) + " is defined twice for record " + quote(x.record));
                mine.clear();
            }
        }
        if (mine.empty()) continue;
        if (auto variant = VariantResolver(x, own, schema, report).run(v, mine)) out.push_back(std::move(*variant));
    }
    return out;
}

void mark_variant_targets(const std::vector<ast::Variant>& variants, const std::string& record,
                          std::unordered_set<const ast::Property*>& used) {
    for (const ast::Variant& v : variants) {
        for (const ast::Property& p : v.properties) {
            if (p.target.front().text == record) used.insert(&p);
        }
    }
}

void check_variant_targets(const std::vector<ast::Variant>& variants, const std::unordered_set<const ast::Property*>& used,
                           const ir::Schema& schema, Reporter& report) {
    std::vector<std::string> records;
    for (const ir::Record& r : schema.records) {
        if (r.predefined == ir::Predefined::none) records.push_back(r.name);
    }
    for (const ast::Variant& v : variants) {
        if (v.properties.empty()) report.warning(v.name.where, "variant " + quote(v.name.text) + " sets nothing");
        for (const ast::Property& p : v.properties) {
            if (used.count(&p)) continue;
            const ast::Name& record = p.target.front();
            if (rt::from_name<rt::Predefined>(record.text)) {
                report.error(record.where, "variant " + quote(v.name.text) + ": the predefined record " + quote(record.text) +
                                               " has no variants");
                continue;
            }
            report.error(record.where, "variant " + quote(v.name.text) + ": no record of the trace is named " + quote(record.text) +
                                           did_you_mean(record.text, records));
        }
    }
}

}  // namespace metatf::front::stage
