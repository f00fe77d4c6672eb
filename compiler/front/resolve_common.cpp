// What every stage of the resolver uses: messages, names, and the walks of a record's tree.
#include "resolve_stages.hpp"

#include <algorithm>

namespace metatf::front::stage {

void Reporter::note(Diagnostic* d, const Location& where, std::string message) {
    if (d) d->notes.push_back(Diagnostic{Severity::note, where, std::move(message), {}});
}

// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string path_text(const std::vector<ast::Name>& path) {
    std::string out;
    for (const auto& n : path) out += (out.empty() ? "" : ".") + n.text;
    return out;
}

Location where_of(const ast::Value& v) {
    return std::visit(
        [](const auto& x) -> Location {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, ast::Integer>) return x.where;
            if constexpr (std::is_same_v<T, ast::Reference>) return x.path.front().where;
            if constexpr (std::is_same_v<T, ast::InterpretationPtr>) return x->where;
            if constexpr (std::is_same_v<T, ast::TypeName>) return x.name.where;
            if constexpr (std::is_same_v<T, ast::String> || std::is_same_v<T, ast::TextFormat> ||
                          std::is_same_v<T, ast::NameList> || std::is_same_v<T, ast::OrderValue> || std::is_same_v<T, ast::HistoryValue>) {
                return x.where;
            }
        },
        v);
}

bool known_property(const ast::Property& p) {
    return std::find(property_names.begin(), property_names.end(), p.property.text) != property_names.end();
}

void report_unknown_property(Reporter& report, const ast::Property& p) {
    const std::string& prop = p.property.text;
    report.error(p.property.where, "unknown property " + quote(prop) + did_you_mean(prop, property_names) +
                                       " (the properties are width, interpretation, value, type, scale, feed, text, mnemonic, before, after, code, ctype, minimum, maximum, enum, flags, bits, order, dense and history)");
}

std::string mnemonic_error() {
    return "only the tag takes a mnemonic ('tag.mnemonic = \"...\";' in a record's '{ ... }')";
}

std::string tag_property_error(std::string_view prop) {
    if (prop == "interpretation") return "the tag's interpretation is always 'none' and cannot be set";
    if (prop == "text") return "the tag is written as the record's mnemonic ('tag.mnemonic = \"...\";'); it takes no text format";
    if (prop == "width") return "the tag's width is set once, globally ('tag.width = N;' outside any record)";
    if (prop == "code") return "a record's type code is set inside its '{ ... }' ('tag.code = 9;')";
    if (prop == "before" || prop == "after") return "the text around a record's mnemonic is set inside its '{ ... }' ('tag.before = \" \";')";
    return "the tag is always an unsigned integer; its " + quote(prop) + " cannot be set";
}

const ast::Property* trace_tag(const ast::RecordDef& def) {
    for (const ast::Property& p : def.properties) {
        if (p.target.size() == 1 && p.target[0].text == "tag" && p.property.text == "value") return &p;
    }
    return nullptr;
}

// ---- the tree ---------------------------------------------------------------------

namespace {

// The members that a path can start with, looking through '(...)', repetition,
// and a record that is a definition's whole field (`comment : vfield`).
void collect_members(Node* n, std::vector<Node*>& out) {
    if (n->kind == Node::Kind::leaf || (n->kind == Node::Kind::group && !n->label.empty() && !n->is_content)) {
        out.push_back(n);
        return;
    }
    for (auto& c : n->children) collect_members(c.get(), out);
}

void collect_leaves(Node* n, std::vector<Node*>& out) {
    if (n->kind == Node::Kind::leaf) {
        out.push_back(n);
        return;
    }
    for (auto& c : n->children) collect_leaves(c.get(), out);
}

}  // namespace

std::vector<Node*> members_of(Node* content) {
    std::vector<Node*> out;
    collect_members(content, out);
    return out;
}

std::vector<Node*> leaves_of(Node* n) {
    std::vector<Node*> out;
    collect_leaves(n, out);
    return out;
}

const Node* innermost_repeat(const Node* n) {
    for (const Node* p = n->parent; p; p = p->parent) {
        if (p->kind == Node::Kind::repeat) return p;
    }
    return nullptr;
}

// A value of `referenced` is known wherever `user` is read when every repetition
// around the one also surrounds the other.
bool visible_from(const Node* referenced, const Node* user) {
    const Node* r = innermost_repeat(referenced);
    if (!r) return true;
    for (const Node* p = user->parent; p; p = p->parent) {
        if (p == r) return true;
    }
    return false;
}

// Each single-field record stands for its field: `oldAddress : address` is "oldAddress".
std::string leaf_path(const Expansion& x, const Node* leaf) {
    std::vector<std::string> parts;
    std::string name = leaf->label;
    for (const Node* p = leaf->parent; p && p != x.root.get(); p = p->parent) {
        // A definition's whole field is looked through: `comment : vfield` has fields "length" and "data".
        if (p->kind != Node::Kind::group || p->label.empty() || p->is_content) continue;
        if (p->leaf_count == 1) {
            name = p->label;
        } else {
            parts.insert(parts.begin(), p->label);
        }
    }
    parts.push_back(name);
    std::string out;
    for (const auto& s : parts) out += (out.empty() ? "" : ".") + s;
    return out;
}

Node* lookup(Reporter& report, DefContext& ctx, const std::vector<ast::Name>& path, bool report_errors) {
    Node* content = ctx.content;
    Node* found = nullptr;
    for (std::size_t i = 0; i < path.size(); ++i) {
        found = nullptr;
        for (Node* m : members_of(content)) {
            if (m->label == path[i].text) found = m;
        }
        if (!found) {
            if (report_errors) {
                std::vector<std::string> names;
                for (Node* m : members_of(content)) names.push_back(m->label);
                report.error(path[i].where,
                             "record " + quote(ctx.def->name.text) + " has no field " +
                                 quote(path_text(std::vector<ast::Name>(path.begin(), path.begin() + long(i) + 1))) +
                                 did_you_mean(path[i].text, names));
            }
            return nullptr;
        }
        if (found->kind == Node::Kind::group) content = found->children.front().get();
        if (found->kind == Node::Kind::leaf && i + 1 < path.size()) {
            if (report_errors) report.error(path[i + 1].where, quote(path[i].text) + " is a single field and has no members");
            return nullptr;
        }
    }
    if (found->kind == Node::Kind::leaf) return found;
    const auto leaves = leaves_of(found);
    if (leaves.size() == 1) return leaves.front();
    if (report_errors) {
        report.error(path.back().where, quote(path_text(path)) + " is a record of " + std::to_string(leaves.size()) +
                                            " fields; name one of them, as in " +
                                            quote(path_text(path) + "." + leaves.front()->names.back()));
    }
    return nullptr;
}

void mark_names_used(const Expansion& x, const Node* leaf) {
    for_scope_properties(x, leaf, [](ScopeProperty& p) { p.used = true; });
}

}  // namespace metatf::front::stage
