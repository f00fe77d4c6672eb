// Stage 3: each definition's members and '{ ... }' block, diagnosed the first
// time the definition is expanded and applied to the leaves of every record.
#include "resolve_stages.hpp"

#include <algorithm>
#include <cctype>

namespace metatf::front::stage {

namespace {

std::string renamed_example(const std::string& label) {
    return "new" + std::string(1, char(std::toupper(static_cast<unsigned char>(label[0])))) + label.substr(1) +
           " : " + label;
}

// A record lists each member once: `address, address` leaves the second unnamed.
bool members_unique(const DefContext& ctx, Reporter* report) {
    bool unique = true;
    std::map<std::string, Node*, std::less<>> seen;
    for (Node* m : members_of(ctx.content)) {
        auto [it, fresh] = seen.emplace(m->label, m);
        if (fresh) continue;
        unique = false;
        if (!report) continue;
        const std::string& record = ctx.def->name.text;
        if (m->label == "tag") {
            report->error(m->where, "record " + quote(record) + " lists 'tag' twice");
        } else {
            Reporter::note(&report->error(m->where, "record " + quote(record) + " has two fields named " +
                                                        quote(m->label) + "; give one a name of its own, as in '" +
                                                        renamed_example(m->label) + "'"),
                           it->second->where, "the first " + quote(m->label) + " is here");
        }
    }
    return unique;
}

// Applies the blocks of one record's definitions, outermost first.
class BlockApplier {
public:
    BlockApplier(Expansion& x, Reporter& report) : x_(x), report_(report) {}

    // `report_errors`: whether what is wrong in this definition's own block is
    // reported (the first time the definition is expanded).
    void apply(DefContext& ctx, bool report_errors) {
        for (const ast::Property& p : ctx.def->properties) {
            if (!apply(ctx, p, report_errors)) x_.failed = true;
        }
    }

    Blocks result() const { return out_; }

private:
    Diagnostic* error(bool report_errors, const Location& where, std::string message) {
        return report_errors ? &report_.error(where, std::move(message)) : nullptr;
    }

    // False when the property is wrong here.
    bool apply(DefContext& ctx, const ast::Property& p, bool report_errors) {
        if (!known_property(p)) {
            if (report_errors) report_unknown_property(report_, p);
            return false;
        }
        const std::string& prop = p.property.text;
        const bool names_tag = p.target.size() == 1 && p.target[0].text == "tag";
        if (names_tag && prop == "mnemonic") return set_tag_text(ctx, p, out_.mnemonic);
        if (names_tag && prop == "before") return set_tag_text(ctx, p, out_.tag_before);
        if (names_tag && prop == "after") return set_tag_text(ctx, p, out_.tag_after);
        if (names_tag && prop == "code") return set_tag_text(ctx, p, out_.tag_code);
        if (prop == "mnemonic") {
            error(report_errors, p.property.where, mnemonic_error());
            return false;
        }
        if (names_tag) return set_tag_value(ctx, p, report_errors);
        Node* leaf = lookup(report_, ctx, p.target, report_errors);
        if (!leaf) return false;
        auto [it, fresh] = leaf->assigned.emplace(prop, Node::Assignment{&p, &ctx, ctx.depth});
        // Two definitions at one depth cannot both reach a leaf: this is one block setting it twice.
        if (!fresh && it->second.depth == ctx.depth) {
            Reporter::note(error(report_errors, p.target.front().where,
                                 quote(path_text(p.target) + "." + prop) + " is already set in record " + quote(ctx.def->name.text)),
                           it->second.property->target.front().where, "it is first set here");
            return false;
        }
        return true;
    }

    // A definition used as a field may give the record its mnemonic (or the
    // text around it), unless the record gives one too: that depends on the
    // record, so it is found at each use and reported at the first.
    bool set_tag_text(const DefContext& ctx, const ast::Property& p, const ast::Property*& slot) {
        if (!slot) {
            slot = &p;
            return true;
        }
        if (report_.first_at({&p, Finding::mnemonic})) {
            Reporter::note(&report_.error(p.target.front().where, quote("tag." + p.property.text) + " is already set in record " +
                                                                      quote(ctx.def->name.text)),
                           slot->target.front().where, "it is first set here");
        }
        slot = &p;
        return false;
    }

    // Only the trace record's own block can set `tag.value`: a definition that
    // does is never expanded as a field (see resolve_expand).
    bool set_tag_value(const DefContext& ctx, const ast::Property& p, bool report_errors) {
        if (p.property.text != "value") {
            error(report_errors, p.property.where, tag_property_error(p.property.text));
            return false;
        }
        if (out_.tag_value) {
            Reporter::note(error(report_errors, p.target.front().where,
                                 "'tag.value' is already set in record " + quote(ctx.def->name.text)),
                           out_.tag_value->target.front().where, "it is first set here");
            return false;
        }
        out_.tag_value = &p;
        return true;
    }

    Expansion& x_;
    Reporter& report_;
    Blocks out_;
};

}  // namespace

bool check_members(Expansion& x, CheckedDefinitions& checked, Reporter& report) {
    bool unique = true;
    for (const auto& ctx : x.contexts) {
        const bool first = checked.members.insert(ctx->def).second;
        if (!members_unique(*ctx, first ? &report : nullptr)) unique = false;
    }
    if (!unique) x.failed = true;
    return unique;
}

Blocks apply_blocks(Expansion& x, CheckedDefinitions& checked, Reporter& report) {
    std::vector<DefContext*> order;
    for (auto& c : x.contexts) order.push_back(c.get());
    std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->depth < b->depth; });
    BlockApplier applier(x, report);
    for (DefContext* ctx : order) applier.apply(*ctx, checked.blocks.insert(ctx->def).second);
    return applier.result();
}

// With no property at all, `n` was neither reading: most likely a reference to
// a field not written (or misspelt). Whether a property describes `n` depends on
// the record's section, so this is found in each record and reported at the first.
void check_introduced_counts(Expansion& x, Reporter& report) {
    for (const auto& [leaf, site, hint] : x.introduced) {
        bool described = !leaf->assigned.empty();
        for_scope_properties(x, leaf, [&](const ScopeProperty&) { described = true; });
        if (described) continue;
        x.failed = true;
        if (!report.first_at({site, Finding::introduced_count})) continue;
        const std::string& n = leaf->label;
        report.error(leaf->where, "the repeat count " + quote(n) + " is neither an earlier field of record " +
                                      quote(leaf->written_in->def->name.text) +
                                      " nor a field kind that any property describes" +
                                      (hint.empty() ? "; list it before the repetition, or set " + quote(n + ".width") +
                                                          " to make it a new field there"
                                                    : hint));
    }
}

}  // namespace metatf::front::stage
