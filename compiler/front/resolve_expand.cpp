// Stage 2: a record's definitions expanded into its field tree, each record used
// as a field in place; the tree is numbered and the tag placed.
#include "resolve_stages.hpp"

#include <algorithm>
#include <iterator>

namespace metatf::front::stage {

namespace {

class Expander {
public:
    Expander(Expansion& x, const Scopes& scopes, UsedRecords& used, Reporter& report)
        : x_(x), scopes_(scopes), used_(used), report_(report) {}

    // Expands a definition (the trace record itself, or one used as a field).
    std::unique_ptr<Node> expand_def(const ast::RecordDef& def, const Scope* scope, std::size_t depth,
                                     const Location& where, DefContext* lexical_parent = nullptr) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::group;
        node->label = def.name.text;
        node->where = where;
        auto& ctx = *x_.contexts.emplace_back(
            std::make_unique<DefContext>(DefContext{&def, scope, depth, nullptr, lexical_parent, {}}));
        node->def = &ctx;
        active_.push_back(&def);
        node->children.push_back(expand_field(*def.field, ctx));
        active_.pop_back();
        ctx.content = node->children.front().get();
        ctx.content->is_content = true;
        return node;
    }

private:
    std::unique_ptr<Node> expand_field(const ast::Field& field, DefContext& ctx) {
        auto node = std::make_unique<Node>();
        node->written_in = &ctx;
        if (!grow()) return node;
        if (const auto* named = std::get_if<ast::Field::Named>(&field.node)) {
            return expand_named(std::move(node), named->name, ctx);
        }
        if (const auto* composite = std::get_if<ast::Field::Composite>(&field.node)) {
            node->kind = Node::Kind::group;
            node->where = composite->where;
            for (const auto& m : composite->members) node->children.push_back(expand_field(*m, ctx));
            return node;
        }
        if (const auto* repeat = std::get_if<ast::Field::Repeat>(&field.node)) {
            return expand_repeat(std::move(node), *repeat, ctx);
        }
        const ast::RecordDef& nested = *std::get<ast::Field::Nested>(field.node).def;
        if (!enter(nested, nested.name)) {
            node->label = nested.name.text;
            return node;
        }
        auto group = expand_def(nested, ctx.scope, ctx.depth + 1, nested.name.where, &ctx);
        group->written_in = &ctx;
        ctx.written.insert(nested.name.text);
        return group;
    }

    // Counts one more node of the record; false once it has grown past the limit.
    bool grow() {
        if (++nodes_ <= max_record_nodes) return true;
        if (!x_.failed) {
            report_.error(x_.contexts.front()->def->name.where, "record " + quote(x_.record) + " expands to more than " +
                                                                    std::to_string(max_record_nodes) + " fields and groups");
        }
        x_.failed = true;
        return false;
    }

    // A name used as a field: a record (expanded in place) or else a plain field of that kind.
    std::unique_ptr<Node> expand_named(std::unique_ptr<Node> node, const ast::Name& name, DefContext& ctx) {
        node->where = name.where;
        node->label = name.text;
        ctx.written.insert(name.text);
        const ast::RecordDef* def = name.text == "tag" ? nullptr : scopes_.find_record(ctx.scope, name.text);
        if (!def || !enter(*def, name)) return node;
        auto group = expand_def(*def, scopes_.scope_of.at(def), ctx.depth + 1, name.where);
        group->written_in = &ctx;
        return group;
    }

    // `n*element`. When `n` is an earlier member of this definition or of one around
    // it, the count refers to it. Otherwise `n` is the paper's count field: it is
    // expanded as if written just before the repetition, and the count then refers to
    // it like to any earlier member. `tag` is never introduced: it is the record's tag.
    std::unique_ptr<Node> expand_repeat(std::unique_ptr<Node> node, const ast::Field::Repeat& repeat, DefContext& ctx) {
        node->kind = Node::Kind::repeat;
        node->where = repeat.count.where;
        node->count = &repeat.count;
        const std::string& n = repeat.count.text;
        if (n == "tag" || written_before(ctx, n)) {
            node->children.push_back(expand_field(*repeat.element, ctx));
            return node;
        }
        auto count = std::make_unique<Node>();
        count->written_in = &ctx;
        if (grow()) {
            std::string hint = did_you_mean(n, earlier_members(ctx));
            count = expand_named(std::move(count), repeat.count, ctx);
            if (count->kind == Node::Kind::leaf) x_.introduced.push_back({count.get(), &repeat.count, std::move(hint)});
        }
        node->children.push_back(expand_field(*repeat.element, ctx));
        // An unnamed group, looked through by members, paths and layouts alike.
        auto pair = std::make_unique<Node>();
        pair->kind = Node::Kind::group;
        pair->where = node->where;
        pair->written_in = &ctx;
        pair->children.push_back(std::move(count));
        pair->children.push_back(std::move(node));
        return pair;
    }

    static bool written_before(const DefContext& ctx, std::string_view name) {
        for (const DefContext* c = &ctx; c; c = c->lexical_parent) {
            if (c->written.count(name)) return true;
        }
        return false;
    }

    // The names a count could refer to here, for "did you mean" (the tag cannot count).
    static std::vector<std::string> earlier_members(const DefContext& ctx) {
        std::vector<std::string> out;
        for (const DefContext* c = &ctx; c; c = c->lexical_parent) {
            std::copy_if(c->written.begin(), c->written.end(), std::back_inserter(out),
                         [](const std::string& name) { return name != "tag"; });
        }
        return out;
    }

    // Whether `def` may be expanded here: no cycles, no trace records as fields,
    // bounded depth. A use is in a definition's text, so what is wrong with it is
    // reported once however many records expand that definition.
    bool enter(const ast::RecordDef& def, const ast::Name& use) {
        if (auto from = std::find(active_.begin(), active_.end(), &def); from != active_.end()) {
            std::string chain;
            for (auto it = from; it != active_.end(); ++it) chain += (*it)->name.text + " -> ";
            if (report_.first_at({&use, Finding::cycle})) {
                report_.error(use.where, "record " + quote(def.name.text) + " contains itself: " + chain + def.name.text);
            }
            return refuse();
        }
        if (trace_tag(def)) {
            // Names the record being expanded, so each record that meets it says so,
            // once even if it expands the definition holding the use twice.
            if (refused_uses_.insert(&use).second) {
                report_.error(use.where, "record " + quote(def.name.text) +
                                             " sets 'tag.value', so it is a record of the trace and cannot be a field of " +
                                             quote(x_.record));
            }
            return refuse();
        }
        if (active_.size() >= max_record_depth) {
            if (report_.first_at({&use, Finding::depth})) {
                report_.error(use.where, "records nest too deeply (the limit is " + std::to_string(max_record_depth) + " levels)");
            }
            return refuse();
        }
        used_.insert(&def);
        return true;
    }

    bool refuse() {
        x_.failed = true;
        return false;
    }

    Expansion& x_;
    const Scopes& scopes_;
    UsedRecords& used_;
    Reporter& report_;
    std::vector<const ast::RecordDef*> active_;  // definitions being expanded, to catch cycles
    std::size_t nodes_ = 0;
    std::unordered_set<const ast::Name*> refused_uses_;
};

// Wires parents and counts the leaves below each node.
std::size_t count_leaves(Node* n) {
    n->leaf_count = n->kind == Node::Kind::leaf ? 1 : 0;
    for (auto& c : n->children) {
        c->parent = n;
        n->leaf_count += count_leaves(c.get());
    }
    return n->leaf_count;
}

}  // namespace

// The tag is the first field of a trace record; it is added when not written.
void place_tag(Expansion& x, Reporter& report) {
    DefContext& record = *x.contexts.front();
    for (Node* leaf : x.leaves) {
        if (leaf->label != "tag") continue;
        if (leaf->written_in != &record || innermost_repeat(leaf)) {
            report.error(leaf->where, "'tag' can only be the first field of a record that sets 'tag.value'");
            x.failed = true;
        } else if (leaf != x.leaves.front()) {
            report.error(leaf->where, "'tag' must be the first field of record " + quote(x.record));
            x.failed = true;
        }
    }
    if (!x.leaves.empty() && x.leaves.front()->label == "tag") return;
    auto tag = std::make_unique<Node>();
    tag->label = "tag";
    tag->where = record.def->name.where;
    tag->written_in = &record;
    // Wrap the content so that the tag comes first without disturbing member lookup.
    Node* holder = record.content->parent;
    auto wrapper = std::make_unique<Node>();
    wrapper->kind = Node::Kind::group;
    wrapper->written_in = &record;
    wrapper->children.push_back(std::move(tag));
    wrapper->children.push_back(std::move(holder->children.front()));
    holder->children.front() = std::move(wrapper);
    record.content = holder->children.front().get();
}

// Only a record of the trace has a tag.
void refuse_tag(Expansion& x, Reporter& report) {
    for (Node* leaf : x.leaves) {
        if (leaf->label != "tag") continue;
        report.error(leaf->where, "record " + quote(x.record) + " has a 'tag' field but sets no 'tag.value'");
        x.failed = true;
    }
}

void index_leaves(Expansion& x) {
    count_leaves(x.root.get());
    x.leaves = leaves_of(x.root.get());
    for (std::uint32_t i = 0; i < x.leaves.size(); ++i) {
        Node* leaf = x.leaves[i];
        leaf->index = i;
        // `oldAddress : address` answers to "oldAddress" first, then to "address".
        std::vector<std::string> names{leaf->label};
        for (Node* p = leaf->parent; p && p != x.root.get(); p = p->parent) {
            if (p->kind != Node::Kind::group || p->label.empty()) continue;
            if (p->leaf_count != 1) break;
            names.insert(names.begin(), p->label);
        }
        leaf->names = std::move(names);
    }
}

Expansion expand_record(const ast::RecordDef& def, const Scope& scope, const Scopes& scopes,
                        UsedRecords& used, Reporter& report) {
    Expansion x;
    x.record = def.name.text;
    x.scope = &scope;
    x.root = Expander(x, scopes, used, report).expand_def(def, &scope, 0, def.name.where);
    index_leaves(x);
    return x;
}

}  // namespace metatf::front::stage
