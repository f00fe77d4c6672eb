// The resolver: runs the stages of resolve_stages.hpp over every record of the DTD.
#include "resolver.hpp"

#include "resolve_stages.hpp"

#include <algorithm>
#include <map>

namespace metatf::front {

namespace {

using namespace stage;

class Resolver {
public:
    Resolver(const ast::Dtd& dtd, const ast::Dtd& prelude, Diagnostics& diags)
        : dtd_(dtd), prelude_(prelude), diags_(diags), report_(diags) {}

    std::optional<ir::Schema> run(std::string name) {
        schema_.name = std::move(name);
        resolve_scopes(dtd_, prelude_, scopes_, schema_, report_);
        for (const Scope* scope : scopes_.all) {
            for (const auto& [record_name, def] : scope->records) {
                if (trace_tag(*def)) build_record(*def, *scope, true);
            }
        }
        check_variant_targets(dtd_.variants, variant_properties_, schema_, report_);
        check_unused_records();
        check_tags(tag_sites_, scopes_, report_);
        check_unused_properties(scopes_, report_);
        check_pools();
        check_global_orders();
        resolve_text_form(dtd_, schema_, text_sites_, diags_);
        resolve_native_form(dtd_, schema_, text_sites_, diags_);
        diags_.sort_by_position();
        if (diags_.has_errors()) return std::nullopt;
        std::stable_sort(schema_.records.begin(), schema_.records.end(), [](const auto& a, const auto& b) {
            return a.section != b.section ? a.section < b.section : a.tag < b.tag;
        });
        return std::move(schema_);
    }

private:
    // Resolves one record: a record of the trace (`trace`), or a definition that no
    // record uses, checked on its own so that its errors are still found.
    void build_record(const ast::RecordDef& def, const Scope& scope, bool trace) {
        Expansion x = expand_record(def, scope, scopes_, used_records_, report_);
        if (x.failed) {  // a cycle or an oversized expansion: the tree is incomplete
            mark_variant_targets(dtd_.variants, x.record, variant_properties_);
            return give_up(x);
        }
        const bool unique = check_members(x, checked_, report_);
        if (trace) {
            place_tag(x, report_);
            index_leaves(x);
        } else {
            refuse_tag(x, report_);
        }
        const Blocks blocks = apply_blocks(x, checked_, report_);
        // With two members of one name, a block may have described the other one.
        if (unique) check_introduced_counts(x, report_);
        std::optional<std::uint64_t> tag;
        if (blocks.tag_value && (tag = resolve_tag_value(*blocks.tag_value, schema_.tag_width, report_))) {
            const Scope* tag_scope = scope.predefined ? &scopes_.global : &scope;
            tag_sites_.push_back({tag_scope, blocks.tag_value, x.record, *tag, scope.predefined});
        }
        if (x.failed) {
            mark_variant_targets(dtd_.variants, x.record, variant_properties_);
            return give_up(x);
        }
        ResolvedFields fields = resolve_fields(x, schema_, report_);
        if (!pool_at_) pool_at_ = fields.pool_at;
        if (!table_at_) table_at_ = fields.table_at;
        if (!history_at_) history_at_ = fields.history_at;
        if (!intern_at_) intern_at_ = fields.intern_at;
        if (!fields.ok || !tag) return mark_variant_targets(dtd_.variants, x.record, variant_properties_);
        std::vector<ir::Variant> variants;
        if (!scope.predefined) variants = resolve_variants(x, fields.fields, dtd_.variants, schema_, variant_properties_, report_);
        add_record(def, scope, *tag, blocks, std::move(fields), std::move(variants));
    }

    // A record that cannot be resolved still reads the scope properties its fields are named by.
    static void give_up(const Expansion& x) {
        for (const Node* leaf : x.leaves) mark_names_used(x, leaf);
    }

    void add_record(const ast::RecordDef& def, const Scope& scope, std::uint64_t tag, const Blocks& blocks,
                    ResolvedFields fields, std::vector<ir::Variant> variants) {
        ir::Record record;
        record.variants = std::move(variants);
        record.name = def.name.text;
        record.tag = tag;
        record.section = scope.number;
        record.fields = std::move(fields.fields);
        record.layout = std::move(fields.layout);
        RecordTextSites sites{def.name.where, std::move(fields.text_at), std::nullopt, std::nullopt, std::move(fields.ctype_at)};
        if (const ast::Property* code = blocks.tag_code) {
            const auto* c = std::get_if<ast::Integer>(&code->value);
            const auto* none = std::get_if<std::unique_ptr<ast::Interpretation>>(&code->value);
            if (none && (*none)->kind == ast::InterpretationKind::none) {
                sites.uncoded = true;
                sites.code = (*none)->where;
            } else if (!c || c->negative) {
                if (report_.first_at({code, Finding::value})) {
                    report_.error(where_of(code->value), "'tag.code' takes a number of 0 or more, as in 'tag.code = 9;', or 'none'");
                }
                return;
            } else {
                record.code = c->magnitude;
                sites.code = c->where;
            }
        }
        if (const ast::Property* mnemonic = blocks.mnemonic) {
            const auto* m = std::get_if<ast::String>(&mnemonic->value);
            if (!m) {
                if (report_.first_at({mnemonic, Finding::value})) {
                    report_.error(where_of(mnemonic->value), "'tag.mnemonic' takes a string, as in 'tag.mnemonic = \"co\";'");
                }
                return;
            }
            record.mnemonic = m->value;
            sites.mnemonic = m->where;
            if (!tag_text(blocks.tag_before, record.fields[0], record.name) || !tag_text(blocks.tag_after, record.fields[0], record.name)) return;
        }
        for (const ast::Property* p : {blocks.tag_before, blocks.tag_after}) {
            if (p && !record.mnemonic && report_.first_at({p, Finding::value})) {
                report_.error(p->target.front().where, quote("tag." + p->property.text) + " places text around the mnemonic, and record " +
                                                           quote(record.name) + " has none ('tag.mnemonic = \"...\";')");
            }
        }
        if (scope.predefined) record.predefined = rt::from_name<rt::Predefined>(def.name.text).value();
        if (record.predefined == rt::Predefined::comment) {
            ir::Field& length = record.fields[1];  // the prelude's vfield.length
            length.width = length.restore_width = scopes_.comment_length;
        }
        text_sites_.push_back(std::move(sites));
        schema_.records.push_back(std::move(record));
    }

    // `tag.before` or `tag.after`: text around the mnemonic. False when it is wrong.
    bool tag_text(const ast::Property* p, ir::Field& tag, const std::string& record) {
        if (!p) return true;
        const auto* s = std::get_if<ast::String>(&p->value);
        const std::string prop = p->property.text;
        std::optional<std::string> problem = s ? surround_problem(prop, s->value, tag, "the tag")
                                               : quote("tag." + prop) + " takes a string, as in 'tag." + prop + " = \" \";'";
        if (problem) {
            if (report_.first_at({p, Finding::value})) report_.error(where_of(p->value), *problem + " (record " + quote(record) + ")");
            return false;
        }
        if (prop == "before") {
            tag.text.before = s->value;
        } else {
            tag.text.after = s->value;
        }
        return true;
    }

    // A table is read in the middle of the record that refers to it, which
    // would see the pools change (docs/trace-format.md, section 5.1).
    // A global order compares the values of one field kind across record
    // types, so they must be the same kind of number: one type, one scale.
    void check_global_orders() {
        std::map<std::string_view, std::pair<const ir::Record*, const ir::Field*>> first;
        for (std::size_t i = 0; i < schema_.records.size(); ++i) {
            for (const ir::Field& f : schema_.records[i].fields) {
                if (f.rules.global.empty()) continue;
                const auto [at, added] = first.emplace(f.rules.global, std::pair(&schema_.records[i], &f));
                const ir::Field& g = *at->second.second;
                if (added || (g.type == f.type && g.scale == f.scale)) continue;
                report_.error(text_sites_[i].record, "field " + quote(f.path) + " of record " + quote(schema_.records[i].name) +
                                                         " and field " + quote(g.path) + " of record " + quote(at->second.first->name) +
                                                         " share the global order of " + quote(f.rules.global) +
                                                         ", but differ in type or scale");
            }
        }
    }

    void check_pools() {
        if (!table_at_) return;
        if (pool_at_) {
            Reporter::note(&report_.error(*pool_at_, "a DTD with tables (sectionOffset fields) has no pools of live values and no predict fields"),
                           *table_at_, "a table is used here");
        }
        if (history_at_) {
            Reporter::note(&report_.error(*history_at_, "a DTD with tables (sectionOffset fields) has no shared histories"), *table_at_,
                           "a table is used here");
        }
        if (intern_at_) {
            Reporter::note(&report_.error(*intern_at_, "a DTD with tables (sectionOffset fields) has no interned strings"), *table_at_,
                           "a table is used here");
        }
    }

    // Definitions that are neither in the trace nor used as fields are still checked, then reported.
    void check_unused_records() {
        std::vector<const ast::RecordDef*> unused;
        for (const Scope* scope : scopes_.all) {
            if (scope->predefined) continue;
            for (const auto& [n, def] : scope->records) {
                if (trace_tag(*def) || used_records_.count(def)) continue;
                build_record(*def, *scope, false);
                unused.push_back(def);
            }
        }
        // One may have been used by another checked after it.
        for (const ast::RecordDef* def : unused) {
            if (used_records_.count(def)) continue;
            report_.warning(def->name.where, "record " + quote(def->name.text) +
                                                 " is never used: it sets no 'tag.value', so it cannot appear in a "
                                                 "trace, and no record uses it as a field");
        }
    }

    const ast::Dtd& dtd_;
    const ast::Dtd& prelude_;
    Diagnostics& diags_;
    Reporter report_;
    ir::Schema schema_;
    Scopes scopes_;
    UsedRecords used_records_;
    std::unordered_set<const ast::Property*> variant_properties_;  // the variants' properties some record read
    CheckedDefinitions checked_;
    std::vector<TagSite> tag_sites_;
    std::vector<RecordTextSites> text_sites_;  // parallel to schema_.records
    std::optional<Location> pool_at_, table_at_, history_at_, intern_at_;
};

}  // namespace

std::optional<ir::Schema> resolve(const ast::Dtd& dtd, const ast::Dtd& prelude, std::string name, Diagnostics& diags) {
    return Resolver(dtd, prelude, diags).run(std::move(name));
}

}  // namespace metatf::front
