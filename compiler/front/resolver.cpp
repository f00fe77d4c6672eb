#include "resolver.hpp"

#include "text_form.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace metatf::front {

namespace {

using ast::InterpretationKind;

constexpr std::size_t max_record_depth = 64;
// Records used as fields expand in place, so a few lines can describe a huge
// record; expansion stops at this many nodes.
constexpr std::size_t max_record_nodes = 4096;
constexpr std::uint32_t max_bytes_width = 65535;
constexpr std::uint32_t max_scale = 19;

const std::array<std::string_view, 7> property_names = {"width", "interpretation", "value", "type", "scale", "text",
                                                        "mnemonic"};
const std::set<std::string, std::less<>> predefined_names = {"vfield", "comment", "section", "metadata"};

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

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

std::string did_you_mean(std::string_view word, auto const& candidates) {
    std::string best;
    std::size_t best_distance = 3;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d < best_distance) {
            best_distance = d;
            best = std::string(c);
        }
    }
    return best.empty() ? "" : "; did you mean " + quote(best) + "?";
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
            if constexpr (std::is_same_v<T, ast::String> || std::is_same_v<T, ast::TextFormat>) return x.where;
        },
        v);
}

// ---- scopes -------------------------------------------------------------------

// A property set outside any record: `size.width = 4;`.
struct ScopeProperty {
    const ast::Property* property = nullptr;
    bool used = false;
};

struct Scope {
    const Scope* parent = nullptr;  // a section's parent is the global scope
    std::uint8_t number = 0;
    std::string name;
    bool predefined = false;
    std::map<std::string, const ast::RecordDef*, std::less<>> records;
    mutable std::map<std::string, ScopeProperty, std::less<>> properties;  // key "kind.property"; `used` is marked late
};

// ---- the expanded field tree of one record --------------------------------------

struct DefContext;

struct Node {
    enum class Kind { leaf, group, repeat } kind = Kind::leaf;
    std::string label;  // leaf: its field kind; group: the record's name; "" for '(...)'
    Location where;
    Node* parent = nullptr;
    std::vector<std::unique_ptr<Node>> children;
    DefContext* def = nullptr;        // group: the definition it expands
    DefContext* written_in = nullptr;  // the definition whose text holds this node
    const ast::Name* count = nullptr;  // repeat
    bool is_content = false;           // the whole field of a definition: its members are the definition's
    std::size_t leaf_count = 0;        // leaves below, counted once the tree is complete

    // leaf only
    std::uint32_t index = 0;
    std::vector<std::string> names;  // the names it answers to in scopes, most specific first
    struct Assignment {
        const ast::Property* property = nullptr;
        DefContext* context = nullptr;
        std::size_t depth = 0;
    };
    std::map<std::string, Assignment, std::less<>> assigned;
};

// One record definition as expanded inside a trace record.
struct DefContext {
    const ast::RecordDef* def = nullptr;
    const Scope* scope = nullptr;  // where the definition is written: names in it resolve there
    std::size_t depth = 0;         // 0 for the trace record itself
    Node* content = nullptr;       // the expansion of its field
    DefContext* lexical_parent = nullptr;  // for a definition written inside another: that one
    std::set<std::string, std::less<>> written;  // names of its members expanded so far: those written earlier
};

// The members that a path can start with, looking through '(...)', repetition,
// and a record that is a definition's whole field (`comment : vfield`).
void collect_members(Node* n, std::vector<Node*>& out) {
    if (n->kind == Node::Kind::leaf || (n->kind == Node::Kind::group && !n->label.empty() && !n->is_content)) {
        out.push_back(n);
        return;
    }
    for (auto& c : n->children) collect_members(c.get(), out);
}

std::vector<Node*> members_of(Node* content) {
    std::vector<Node*> out;
    collect_members(content, out);
    return out;
}

void collect_leaves(Node* n, std::vector<Node*>& out) {
    if (n->kind == Node::Kind::leaf) {
        out.push_back(n);
        return;
    }
    for (auto& c : n->children) collect_leaves(c.get(), out);
}

std::vector<Node*> leaves_of(Node* n) {
    std::vector<Node*> out;
    collect_leaves(n, out);
    return out;
}

std::size_t count_leaves(Node* n) {
    n->leaf_count = n->kind == Node::Kind::leaf ? 1 : 0;
    for (auto& c : n->children) n->leaf_count += count_leaves(c.get());
    return n->leaf_count;
}

const Node* innermost_repeat(const Node* n) {
    for (const Node* p = n->parent; p; p = p->parent) {
        if (p->kind == Node::Kind::repeat) return p;
    }
    return nullptr;
}

// Whether every repetition around `referenced` also surrounds `user`, so a
// value of `referenced` is known wherever `user` is read.
bool visible_from(const Node* referenced, const Node* user) {
    const Node* r = innermost_repeat(referenced);
    if (!r) return true;
    for (const Node* p = user->parent; p; p = p->parent) {
        if (p == r) return true;
    }
    return false;
}

// ---- the resolver -----------------------------------------------------------------

class Resolver {
public:
    Resolver(const ast::Dtd& dtd, const ast::Dtd& prelude, Diagnostics& diags)
        : dtd_(dtd), prelude_(prelude), diags_(diags) {}

    std::optional<ir::Schema> run(std::string name) {
        schema_.name = std::move(name);
        collect_scopes();
        resolve_tag_width();
        for (Scope* scope : all_scopes_) {
            for (const auto& [record_name, def] : scope->records) {
                if (trace_tag(*def)) build_record(*def, *scope);
            }
        }
        check_unused_records();
        check_tags();
        check_unused_properties();
        resolve_text_form(dtd_, schema_, text_sites_, diags_);
        diags_.sort_by_position();
        if (diags_.has_errors()) return std::nullopt;
        std::stable_sort(schema_.records.begin(), schema_.records.end(), [](const auto& a, const auto& b) {
            return a.section != b.section ? a.section < b.section : a.tag < b.tag;
        });
        return std::move(schema_);
    }

private:
    // Where a trace record sets its tag, for the uniqueness check.
    struct TagSite {
        const Scope* scope;  // the predefined records count as global
        const ast::Property* property;
        std::string record;
        std::uint64_t tag;
        bool predefined;
    };

    // ---- diagnostics, each reported once even when a shared definition is expanded often
    Diagnostic* error(const Location& where, std::string message) {
        if (!first_report(where, message)) return nullptr;
        return &diags_.error(where, std::move(message));
    }
    void warning(const Location& where, std::string message) {
        if (first_report(where, message)) diags_.warning(where, std::move(message));
    }
    // False when the same message was reported at the same place before; otherwise
    // notes the diagnostic about to be added.
    bool first_report(const Location& where, const std::string& message) {
        const std::size_t hash = std::hash<std::string>{}(message) ^ (where.line * 0x9E3779B97F4A7C15u) ^ where.column;
        for (auto [it, end] = reported_.equal_range(hash); it != end; ++it) {
            const Diagnostic& d = diags_.all()[it->second];
            if (d.where.file == where.file && d.where.line == where.line && d.where.column == where.column &&
                d.message == message) {
                return false;
            }
        }
        reported_.emplace(hash, diags_.all().size());
        return true;
    }
    static void note(Diagnostic* d, const Location& where, std::string message) {
        if (d) d->notes.push_back(Diagnostic{Severity::note, where, std::move(message), {}});
    }

    // ---- scopes, sections and properties outside records

    void collect_scopes() {
        predefined_.predefined = true;
        predefined_.name = "global";
        add_records(predefined_, prelude_.records);
        global_.name = "global";
        add_records(global_, dtd_.records);
        add_properties(global_, dtd_.properties);
        all_scopes_.push_back(&predefined_);
        all_scopes_.push_back(&global_);
        schema_.sections.push_back({0, "global"});
        sections_.reserve(dtd_.sections.size());
        std::map<std::string, const ast::Section*, std::less<>> by_name;
        std::map<std::uint64_t, const ast::Section*> by_number;
        for (const ast::Section& s : dtd_.sections) {
            const ast::Integer& num = s.number;
            if (num.negative || num.magnitude < 1 || num.magnitude > 255) {
                error(num.where, "section number " + num.text + " is out of range: sections are numbered 1 to 255");
            } else if (auto [it, fresh] = by_number.emplace(num.magnitude, &s); !fresh) {
                note(error(num.where, "section number " + num.text + " is already used by section " +
                                          quote(it->second->name.text)),
                     it->second->number.where, "section " + quote(it->second->name.text) + " is here");
            }
            if (predefined_names.count(s.name.text) || s.name.text == "global" || s.name.text == "tag") {
                error(s.name.where, quote(s.name.text) + " is reserved and cannot name a section");
            } else if (auto [it, fresh] = by_name.emplace(s.name.text, &s); !fresh) {
                note(error(s.name.where, "section " + quote(s.name.text) + " is defined twice"),
                     it->second->name.where, "the first definition is here");
            }
            Scope& scope = sections_.emplace_back();
            scope.parent = &global_;
            const bool valid = !num.negative && num.magnitude >= 1 && num.magnitude <= 255;
            scope.number = static_cast<std::uint8_t>(valid ? num.magnitude : 0);
            scope.name = s.name.text;
            add_records(scope, s.records);
            add_properties(scope, s.properties);
            all_scopes_.push_back(&scope);
        }
        for (const Scope& s : sections_) {
            if (s.number != 0) schema_.sections.push_back({s.number, s.name});
        }
        std::sort(schema_.sections.begin(), schema_.sections.end(),
                  [](const auto& a, const auto& b) { return a.number < b.number; });
    }

    void add_records(Scope& scope, const std::vector<ast::RecordDef>& defs) {
        for (const ast::RecordDef& def : defs) {
            const std::string& n = def.name.text;
            if (!scope.predefined && (predefined_names.count(n) || n == "tag")) {
                error(def.name.where, n == "tag" ? "'tag' is reserved for the record tag and cannot name a record"
                                                 : quote(n) + " is a predefined record and cannot be redefined");
                continue;
            }
            if (auto [it, fresh] = scope.records.emplace(n, &def); !fresh) {
                note(error(def.name.where, "record " + quote(n) + " is defined twice in " +
                                               scope_label(scope)),
                     it->second->name.where, "the first definition is here");
            }
        }
    }

    static std::string scope_label(const Scope& s) {
        return s.parent ? "section " + quote(s.name) : std::string("the global scope");
    }

    void add_properties(Scope& scope, const std::vector<ast::Property>& props) {
        for (const ast::Property& p : props) {
            if (!check_property_name(p)) continue;
            if (p.target.size() != 1) {
                error(p.target[1].where, "a property outside a record names one field kind, not a path; set " +
                                             quote(path_text(p.target) + "." + p.property.text) +
                                             " inside the record's '{ ... }'");
                continue;
            }
            const std::string& kind = p.target.front().text;
            const std::string& prop = p.property.text;
            if (prop == "mnemonic") {
                error(p.property.where, kind == "tag" ? "a record's mnemonic is set inside its '{ ... }', not for a whole scope"
                                                      : mnemonic_error());
                continue;
            }
            if (prop == "value") {
                error(p.property.where, kind == "tag"
                                            ? "'tag.value' is set inside a record's '{ ... }', not for a whole scope"
                                            : "only a record's tag takes a value ('tag.value = N;'); for a "
                                              "constant field use 'interpretation = default N'");
                continue;
            }
            if (kind == "tag") {
                if (prop != "width") {
                    error(p.property.where, tag_property_error(prop));
                    continue;
                }
                if (scope.parent) {
                    error(p.target.front().where,
                          "the tag's width is set once, globally, not in section " + quote(scope.name));
                    continue;
                }
            }
            if (auto [it, fresh] = scope.properties.emplace(kind + "." + prop, ScopeProperty{&p, false}); !fresh) {
                note(error(p.target.front().where, quote(kind + "." + prop) + " is already set in " +
                                                       scope_label(scope)),
                     it->second.property->target.front().where, "it is first set here");
            }
        }
    }

    static std::string mnemonic_error() {
        return "only the tag takes a mnemonic ('tag.mnemonic = \"...\";' in a record's '{ ... }')";
    }

    static std::string tag_property_error(std::string_view prop) {
        if (prop == "interpretation") return "the tag's interpretation is always 'none' and cannot be set";
        if (prop == "text") return "the tag is written as the record's mnemonic ('tag.mnemonic = \"...\";'); it takes no text format";
        if (prop == "width") return "the tag's width is set once, globally ('tag.width = N;' outside any record)";
        return "the tag is always an unsigned integer; its " + quote(prop) + " cannot be set";
    }

    bool check_property_name(const ast::Property& p) {
        const std::string& prop = p.property.text;
        if (std::find(property_names.begin(), property_names.end(), prop) != property_names.end()) return true;
        error(p.property.where, "unknown property " + quote(prop) + did_you_mean(prop, property_names) +
                                    " (the properties are width, interpretation, value, type, scale, text and mnemonic)");
        return false;
    }

    void resolve_tag_width() {
        auto it = global_.properties.find("tag.width");
        if (it == global_.properties.end()) return;
        it->second.used = true;
        const ast::Value& v = it->second.property->value;
        const auto* num = std::get_if<ast::Integer>(&v);
        if (!num || num->negative || num->magnitude < 1 || num->magnitude > 8) {
            error(where_of(v), "the tag's width must be a number of bytes from 1 to 8");
            return;
        }
        schema_.tag_width = static_cast<std::uint32_t>(num->magnitude);
    }

    // ---- records

    // The `tag.value` property of a definition: set only by records that appear in the trace.
    static const ast::Property* trace_tag(const ast::RecordDef& def) {
        for (const ast::Property& p : def.properties) {
            if (p.target.size() == 1 && p.target[0].text == "tag" && p.property.text == "value") return &p;
        }
        return nullptr;
    }

    const ast::RecordDef* find_record(const Scope* scope, std::string_view name) const {
        for (; scope; scope = scope->parent) {
            if (auto it = scope->records.find(name); it != scope->records.end()) return it->second;
        }
        if (auto it = predefined_.records.find(name); it != predefined_.records.end()) return it->second;
        return nullptr;
    }

    const Scope* scope_of(const ast::RecordDef* def) const {
        for (const Scope* s : all_scopes_) {
            if (auto it = s->records.find(def->name.text); it != s->records.end() && it->second == def) return s;
        }
        return nullptr;
    }

    struct Expansion {
        std::string record;   // the trace record's name, for messages
        const Scope* scope;   // the trace record's scope: where inherited properties come from
        std::vector<std::unique_ptr<DefContext>> contexts;
        std::vector<const ast::RecordDef*> active;  // definitions being expanded, to catch cycles
        std::unique_ptr<Node> root;
        std::vector<Node*> leaves;
        std::size_t nodes = 0;
        bool failed = false;
        std::vector<Location> text_at;  // per field: where its text format is set (or the field)
        // Plain fields that `n*x` introduced (the paper's reading), with a "did you mean"
        // among the earlier members, for when `n` was meant as a reference after all.
        struct IntroducedCount {
            Node* leaf;
            std::string hint;
        };
        std::vector<IntroducedCount> introduced;
    };

    // Expands a definition (the trace record itself, or one used as a field).
    std::unique_ptr<Node> expand_def(Expansion& x, const ast::RecordDef& def, const Scope* scope, std::size_t depth,
                                     const Location& where, DefContext* lexical_parent = nullptr) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::group;
        node->label = def.name.text;
        node->where = where;
        auto& ctx = *x.contexts.emplace_back(
            std::make_unique<DefContext>(DefContext{&def, scope, depth, nullptr, lexical_parent, {}}));
        node->def = &ctx;
        x.active.push_back(&def);
        node->children.push_back(expand_field(x, *def.field, ctx));
        x.active.pop_back();
        ctx.content = node->children.front().get();
        ctx.content->is_content = true;
        return node;
    }

    std::unique_ptr<Node> expand_field(Expansion& x, const ast::Field& field, DefContext& ctx) {
        auto node = std::make_unique<Node>();
        node->written_in = &ctx;
        if (!grow(x)) return node;
        if (const auto* named = std::get_if<ast::Field::Named>(&field.node)) {
            return expand_named(x, std::move(node), named->name, ctx);
        }
        if (const auto* composite = std::get_if<ast::Field::Composite>(&field.node)) {
            node->kind = Node::Kind::group;
            node->where = composite->where;
            for (const auto& m : composite->members) node->children.push_back(expand_field(x, *m, ctx));
            return node;
        }
        if (const auto* repeat = std::get_if<ast::Field::Repeat>(&field.node)) {
            return expand_repeat(x, std::move(node), *repeat, ctx);
        }
        const ast::RecordDef& nested = *std::get<ast::Field::Nested>(field.node).def;
        if (!enter(x, nested, nested.name)) {
            node->label = nested.name.text;
            return node;
        }
        auto group = expand_def(x, nested, ctx.scope, ctx.depth + 1, nested.name.where, &ctx);
        group->written_in = &ctx;
        ctx.written.insert(nested.name.text);
        return group;
    }

    // Counts one more node of the record; false once it has grown past the limit.
    bool grow(Expansion& x) {
        if (++x.nodes <= max_record_nodes) return true;
        if (!x.failed) {
            error(x.contexts.front()->def->name.where, "record " + quote(x.record) + " expands to more than " +
                                                           std::to_string(max_record_nodes) + " fields and groups");
        }
        x.failed = true;
        return false;
    }

    // A name used as a field: a record (expanded in place) or else a plain field of that kind.
    std::unique_ptr<Node> expand_named(Expansion& x, std::unique_ptr<Node> node, const ast::Name& name,
                                       DefContext& ctx) {
        node->where = name.where;
        node->label = name.text;
        ctx.written.insert(name.text);
        const ast::RecordDef* def = name.text == "tag" ? nullptr : find_record(ctx.scope, name.text);
        if (!def || !enter(x, *def, name)) return node;
        auto group = expand_def(x, *def, scope_of(def), ctx.depth + 1, name.where);
        group->written_in = &ctx;
        return group;
    }

    // `n*element`. When `n` is an earlier member of this definition or of one around
    // it, the count refers to it. Otherwise `n` is the paper's count field: it is
    // expanded as if written just before the repetition, and the count then refers to
    // it like to any earlier member. `tag` is never introduced: it is the record's tag.
    std::unique_ptr<Node> expand_repeat(Expansion& x, std::unique_ptr<Node> node, const ast::Field::Repeat& repeat,
                                        DefContext& ctx) {
        node->kind = Node::Kind::repeat;
        node->where = repeat.count.where;
        node->count = &repeat.count;
        const std::string& n = repeat.count.text;
        if (n == "tag" || written_before(ctx, n)) {
            node->children.push_back(expand_field(x, *repeat.element, ctx));
            return node;
        }
        auto count = std::make_unique<Node>();
        count->written_in = &ctx;
        if (grow(x)) {
            std::string hint = did_you_mean(n, earlier_members(ctx));
            count = expand_named(x, std::move(count), repeat.count, ctx);
            if (count->kind == Node::Kind::leaf) x.introduced.push_back({count.get(), std::move(hint)});
        }
        node->children.push_back(expand_field(x, *repeat.element, ctx));
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

    // Whether `def` may be expanded here: no cycles, no trace records as fields, bounded depth.
    bool enter(Expansion& x, const ast::RecordDef& def, const ast::Name& use) {
        if (std::find(x.active.begin(), x.active.end(), &def) != x.active.end()) {
            std::string chain;
            auto from = std::find(x.active.begin(), x.active.end(), &def);
            for (auto it = from; it != x.active.end(); ++it) chain += (*it)->name.text + " -> ";
            error(use.where, "record " + quote(def.name.text) + " contains itself: " + chain + def.name.text);
            x.failed = true;
            return false;
        }
        if (trace_tag(def)) {
            error(use.where, "record " + quote(def.name.text) +
                                 " sets 'tag.value', so it is a record of the trace and cannot be a field of " +
                                 quote(x.record));
            x.failed = true;
            return false;
        }
        if (x.active.size() >= max_record_depth) {
            error(use.where, "records nest too deeply (the limit is " + std::to_string(max_record_depth) + " levels)");
            x.failed = true;
            return false;
        }
        used_records_.insert(&def);
        return true;
    }

    // Wires parents, numbers the leaves and gives each the names it answers to.
    void index_leaves(Expansion& x) {
        std::vector<Node*> stack{x.root.get()};
        while (!stack.empty()) {
            Node* n = stack.back();
            stack.pop_back();
            for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) {
                (*it)->parent = n;
                stack.push_back(it->get());
            }
        }
        x.leaves = leaves_of(x.root.get());
        count_leaves(x.root.get());
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

    // A record lists each member once: `address, address` leaves the second unnamed.
    // Returns whether every member's name is unique.
    bool check_duplicate_members(Expansion& x) {
        bool unique = true;
        for (const auto& ctx : x.contexts) {
            std::map<std::string, Node*, std::less<>> seen;
            for (Node* m : members_of(ctx->content)) {
                if (auto [it, fresh] = seen.emplace(m->label, m); !fresh && m->label == "tag") {
                    error(m->where, "record " + quote(ctx->def->name.text) + " lists 'tag' twice");
                    x.failed = true;
                    unique = false;
                } else if (!fresh) {
                    note(error(m->where, "record " + quote(ctx->def->name.text) + " has two fields named " +
                                             quote(m->label) + "; give one a name of its own, as in 'new" +
                                             std::string(1, char(std::toupper(static_cast<unsigned char>(m->label[0])))) +
                                             m->label.substr(1) + " : " + m->label + "'"),
                         it->second->where, "the first " + quote(m->label) + " is here");
                    x.failed = true;
                    unique = false;
                }
            }
        }
        return unique;
    }

    // The tag is the first field of a trace record; it is added when not written.
    void place_tag(Expansion& x) {
        Node* content = x.contexts.front()->content;
        for (Node* leaf : x.leaves) {
            if (leaf->label != "tag") continue;
            if (leaf->written_in != x.contexts.front().get() || innermost_repeat(leaf)) {
                error(leaf->where, "'tag' can only be the first field of a record that sets 'tag.value'");
                x.failed = true;
            } else if (leaf != x.leaves.front()) {
                error(leaf->where, "'tag' must be the first field of record " + quote(x.record));
                x.failed = true;
            }
        }
        if (!x.leaves.empty() && x.leaves.front()->label == "tag") return;
        auto tag = std::make_unique<Node>();
        tag->label = "tag";
        tag->where = x.contexts.front()->def->name.where;
        tag->written_in = x.contexts.front().get();
        // Wrap the content so that the tag comes first without disturbing member lookup.
        Node* holder = content->parent;
        auto wrapper = std::make_unique<Node>();
        wrapper->kind = Node::Kind::group;
        wrapper->written_in = tag->written_in;
        wrapper->children.push_back(std::move(tag));
        wrapper->children.push_back(std::move(holder->children.front()));
        holder->children.front() = std::move(wrapper);
        x.contexts.front()->content = holder->children.front().get();
    }

    // Finds what `path` names inside a definition: a leaf, or a record of exactly one leaf.
    Node* lookup(DefContext& ctx, const std::vector<ast::Name>& path, bool report = true) {
        Node* content = ctx.content;
        Node* found = nullptr;
        for (std::size_t i = 0; i < path.size(); ++i) {
            found = nullptr;
            for (Node* m : members_of(content)) {
                if (m->label == path[i].text) found = m;
            }
            if (!found) {
                if (report) {
                    std::vector<std::string> names;
                    for (Node* m : members_of(content)) names.push_back(m->label);
                    error(path[i].where, "record " + quote(ctx.def->name.text) + " has no field " +
                                             quote(path_text(std::vector<ast::Name>(path.begin(), path.begin() + long(i) + 1))) +
                                             did_you_mean(path[i].text, names));
                }
                return nullptr;
            }
            if (found->kind == Node::Kind::group) content = found->children.front().get();
            if (found->kind == Node::Kind::leaf && i + 1 < path.size()) {
                if (report) error(path[i + 1].where, quote(path[i].text) + " is a single field and has no members");
                return nullptr;
            }
        }
        if (found->kind == Node::Kind::leaf) return found;
        const auto leaves = leaves_of(found);
        if (leaves.size() == 1) return leaves.front();
        if (report) {
            error(path.back().where, quote(path_text(path)) + " is a record of " + std::to_string(leaves.size()) +
                                         " fields; name one of them, as in " +
                                         quote(path_text(path) + "." + leaves.front()->names.back()));
        }
        return nullptr;
    }

    // Applies each definition's `{ ... }` to the leaves it names; outer definitions win.
    void apply_blocks(Expansion& x, const ast::Property*& tag_value, const ast::Property*& mnemonic) {
        std::vector<DefContext*> order;
        for (auto& c : x.contexts) order.push_back(c.get());
        std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->depth < b->depth; });
        for (DefContext* ctx : order) {
            for (const ast::Property& p : ctx->def->properties) {
                if (!check_property_name(p)) {
                    x.failed = true;
                    continue;
                }
                const bool names_tag = p.target.size() == 1 && p.target[0].text == "tag";
                if (names_tag && p.property.text == "mnemonic") {
                    if (mnemonic) {
                        note(error(p.target.front().where,
                                   "'tag.mnemonic' is already set in record " + quote(ctx->def->name.text)),
                             mnemonic->target.front().where, "it is first set here");
                        x.failed = true;
                    }
                    mnemonic = &p;
                    continue;
                }
                if (p.property.text == "mnemonic") {
                    error(p.property.where, mnemonic_error());
                    x.failed = true;
                    continue;
                }
                // Only the trace record's own block can set `tag.value`: a definition
                // that does is never expanded as a field (see enter()).
                if (names_tag && p.property.text != "value") {
                    error(p.property.where, tag_property_error(p.property.text));
                    x.failed = true;
                } else if (names_tag && tag_value) {
                    note(error(p.target.front().where,
                               "'tag.value' is already set in record " + quote(ctx->def->name.text)),
                         tag_value->target.front().where, "it is first set here");
                    x.failed = true;
                } else if (names_tag) {
                    tag_value = &p;
                }
                if (names_tag) continue;
                Node* leaf = lookup(*ctx, p.target);
                if (!leaf) {
                    x.failed = true;
                    continue;
                }
                if (p.property.text == "value") {
                    error(p.property.where, "only a record's tag takes a value ('tag.value = N;'); for a constant "
                                            "field use 'interpretation = default N'");
                    x.failed = true;
                    continue;
                }
                auto [it, fresh] = leaf->assigned.emplace(p.property.text, Node::Assignment{&p, ctx, ctx->depth});
                if (!fresh && it->second.depth == ctx->depth) {
                    note(error(p.target.front().where, quote(path_text(p.target) + "." + p.property.text) +
                                                           " is already set in record " + quote(ctx->def->name.text)),
                         it->second.property->target.front().where, "it is first set here");
                    x.failed = true;
                }
            }
        }
    }

    // Where a leaf's property comes from: its records' blocks, then its section, then the global scope.
    struct Source {
        const ast::Property* property = nullptr;
        DefContext* context = nullptr;  // null for scope properties: references resolve in the trace record
    };

    Source find_property(Expansion& x, Node* leaf, std::string_view prop) {
        if (auto it = leaf->assigned.find(prop); it != leaf->assigned.end()) {
            return {it->second.property, it->second.context};
        }
        for (const Scope* s = x.scope; s; s = s->parent) {
            for (const std::string& n : leaf->names) {
                auto it = s->properties.find(n + "." + std::string(prop));
                if (it != s->properties.end()) return {it->second.property, nullptr};
            }
        }
        return {};
    }

    // Calls `f` on each property of the record's section and of the global scope that `leaf` answers to.
    template <typename F>
    static void for_scope_properties(const Expansion& x, const Node* leaf, F f) {
        for (const Scope* s = x.scope; s; s = s->parent) {
            for (const std::string& n : leaf->names) {
                const std::string prefix = n + ".";
                for (auto it = s->properties.lower_bound(prefix);
                     it != s->properties.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
                    f(it->second);
                }
            }
        }
    }

    // A scope property counts as used when some field answers to its name, even if overridden.
    void mark_names_used(Expansion& x, Node* leaf) {
        for_scope_properties(x, leaf, [](ScopeProperty& p) { p.used = true; });
    }

    // A count that `n*x` introduced as a plain field must be described by some
    // property, like any field. With none at all, `n` was neither reading: most
    // likely a reference to a field not written (or misspelt).
    void check_introduced_counts(Expansion& x) {
        for (const auto& [leaf, hint] : x.introduced) {
            bool described = !leaf->assigned.empty();
            for_scope_properties(x, leaf, [&](const ScopeProperty&) { described = true; });
            if (described) continue;
            const std::string& n = leaf->label;
            error(leaf->where, "the repeat count " + quote(n) + " is neither an earlier field of record " +
                                   quote(leaf->written_in->def->name.text) +
                                   " nor a field kind that any property describes" +
                                   (hint.empty() ? "; list it before the repetition, or set " + quote(n + ".width") +
                                                       " to make it a new field there"
                                                 : hint));
            x.failed = true;
        }
    }

    std::string describe(const Expansion& x, const ir::Field& f) const {
        return "field " + quote(f.path) + " of record " + quote(x.record);
    }

    // The leaf a reference names, if it is an earlier field visible from `user`.
    Node* referenced_leaf(Expansion& x, const Source& src, const std::vector<ast::Name>& path, Node* user,
                          std::string_view what) {
        // A reference set in a block is read in that block's definition; one set in a
        // scope, in the definition where the field is written. A definition written
        // inside another also sees the fields of the one around it.
        DefContext* ctx = src.context ? src.context : user->written_in;
        Node* target = nullptr;
        for (DefContext* c = ctx; c && !target; c = c->lexical_parent) target = lookup(*c, path, false);
        if (!target) {
            lookup(*ctx, path);
            return nullptr;
        }
        if (failed_fields_.count(target->index)) return nullptr;  // already reported
        if (target->index >= user->index) {
            error(path.front().where, std::string(what) + " " + quote(path_text(path)) +
                                          " must name an earlier field of record " + quote(x.record));
            return nullptr;
        }
        if (!visible_from(target, user)) {
            error(path.front().where, std::string(what) + " " + quote(path_text(path)) +
                                          " names a field inside a repetition that does not enclose " +
                                          quote(leaf_path(x, user)));
            return nullptr;
        }
        return target;
    }

    bool resolve_type(Expansion& x, Node* leaf, ir::Field& f) {
        const Source width = find_property(x, leaf, "width");
        const auto* ref = width.property ? std::get_if<ast::Reference>(&width.property->value) : nullptr;
        f.type = ref && ref->property.text == "value" ? ir::Type::bytes : ir::Type::unsigned_int;
        const Source src = find_property(x, leaf, "type");
        if (!src.property) return true;
        const auto* t = std::get_if<ast::TypeName>(&src.property->value);
        if (!t) {
            error(where_of(src.property->value), "'type' takes unsigned, signed, float or bytes");
            return false;
        }
        const std::string& n = t->name.text;
        f.type = n == "signed" ? ir::Type::signed_int
                 : n == "float" ? ir::Type::floating
                 : n == "bytes" ? ir::Type::bytes
                                : ir::Type::unsigned_int;
        return true;
    }

    bool resolve_scale(Expansion& x, Node* leaf, ir::Field& f) {
        const Source src = find_property(x, leaf, "scale");
        if (!src.property) return true;
        const auto* num = std::get_if<ast::Integer>(&src.property->value);
        if (!num || num->negative || num->magnitude > max_scale) {
            error(where_of(src.property->value), "'scale' takes a number of decimal places from 0 to 19");
            return false;
        }
        if (f.type != ir::Type::unsigned_int && f.type != ir::Type::signed_int) {
            error(where_of(src.property->value),
                  "'scale' applies to integer fields; " + describe(x, f) + " is " + quote(rt::name(f.type)));
            return false;
        }
        f.scale = static_cast<std::uint32_t>(num->magnitude);
        return true;
    }

    // The width as written: a number, or a reference. Sets restore_width or width_from.
    bool resolve_width(Expansion& x, Node* leaf, ir::Field& f, bool& has_width, Location& width_at) {
        const Source src = find_property(x, leaf, "width");
        if (!src.property) return true;
        has_width = true;
        const ast::Value& v = src.property->value;
        width_at = where_of(v);
        if (const auto* num = std::get_if<ast::Integer>(&v)) {
            return check_fixed_width(x, f, *num);
        }
        const auto* ref = std::get_if<ast::Reference>(&v);
        if (!ref) {
            error(width_at, "'width' takes a number of bytes or a reference such as 'length.value'");
            return false;
        }
        if (ref->property.text != "value" && ref->property.text != "width") {
            error(ref->property.where, "a width can refer to a field's 'value' or 'width', not its " +
                                           quote(ref->property.text));
            return false;
        }
        Node* target = referenced_leaf(x, src, ref->path, leaf, "the width reference");
        if (!target) return false;
        const ir::Field& t = ir_fields_[target->index];
        if (ref->property.text == "width") {
            if (t.width_from) {
                error(width_at, quote(path_text(ref->path)) + " has a width that varies, which cannot be copied");
                return false;
            }
            f.restore_width = t.restore_width;
            return check_width_for_type(x, f, f.restore_width, width_at);
        }
        if (f.type != ir::Type::bytes) {
            error(width_at, "only a 'bytes' field can take its width from another field; " + describe(x, f) +
                                " is " + quote(rt::name(f.type)));
            return false;
        }
        if (auto problem = count_problem(t)) {
            error(width_at, "the width of " + quote(f.path) + " comes from " + quote(t.path) +
                                ", which must be a plain unsigned integer field, but " + *problem);
            return false;
        }
        f.width_from = target->index;
        return true;
    }

    bool check_fixed_width(Expansion& x, ir::Field& f, const ast::Integer& num) {
        if (num.negative || num.magnitude > max_bytes_width) {
            error(num.where, "width " + num.text + " is out of range: a width is a number of bytes from 0 to " +
                                 std::to_string(max_bytes_width));
            return false;
        }
        f.restore_width = static_cast<std::uint32_t>(num.magnitude);
        return check_width_for_type(x, f, f.restore_width, num.where);
    }

    bool check_width_for_type(Expansion& x, const ir::Field& f, std::uint32_t w, const Location& at) {
        if ((f.type == ir::Type::unsigned_int || f.type == ir::Type::signed_int) && w > 8) {
            error(at, "width " + std::to_string(w) + " is too wide for " + describe(x, f) + ": " +
                          std::string(rt::name(f.type)) + " fields take 0 to 8 bytes");
            return false;
        }
        if (f.type == ir::Type::floating && w != 4 && w != 8) {
            error(at, "width " + std::to_string(w) + " does not suit " + describe(x, f) +
                          ": float fields take 4 or 8 bytes");
            return false;
        }
        return true;
    }

    // An interpretation argument as the field's 64 bits, checked against the field's type.
    std::optional<std::uint64_t> field_value(Expansion& x, const ir::Field& f, const ast::Integer& v) {
        if (f.type == ir::Type::signed_int) {
            constexpr std::uint64_t limit = std::uint64_t(1) << 63;
            if (v.magnitude > (v.negative ? limit : limit - 1)) {
                error(v.where, "value " + v.text + " does not fit the signed " + describe(x, f));
                return std::nullopt;
            }
            return v.negative ? ~v.magnitude + 1 : v.magnitude;
        }
        if (v.negative && v.magnitude != 0) {
            error(v.where, "value " + v.text + " is negative, but " + describe(x, f) + " is unsigned");
            return std::nullopt;
        }
        return v.magnitude;
    }

    std::optional<std::int64_t> stride_value(const ast::Integer& v) {
        constexpr std::uint64_t limit = std::uint64_t(1) << 63;
        if (v.magnitude > (v.negative ? limit : limit - 1)) {
            error(v.where, "stride " + v.text + " does not fit in a signed 64-bit integer");
            return std::nullopt;
        }
        return v.negative ? static_cast<std::int64_t>(~v.magnitude + 1) : static_cast<std::int64_t>(v.magnitude);
    }

    std::optional<std::uint8_t> section_number(const ast::SectionRef& ref) {
        if (const auto* num = std::get_if<ast::Integer>(&ref)) {
            for (const auto& s : schema_.sections) {
                if (s.number != 0 && !num->negative && s.number == num->magnitude) return s.number;
            }
            error(num->where, "there is no section number " + num->text);
            return std::nullopt;
        }
        const ast::Name& n = std::get<ast::Name>(ref);
        std::vector<std::string> names;
        for (const auto& s : schema_.sections) {
            if (s.number != 0 && s.name == n.text) return s.number;
            if (s.number != 0) names.push_back(s.name);
        }
        error(n.where, "there is no section " + quote(n.text) + did_you_mean(n.text, names));
        return std::nullopt;
    }

    bool resolve_interpretation(Expansion& x, Node* leaf, ir::Field& f, Location& interp_at) {
        const Source src = find_property(x, leaf, "interpretation");
        if (!src.property) return true;
        const auto* boxed = std::get_if<ast::InterpretationPtr>(&src.property->value);
        const ast::Interpretation* in = boxed ? boxed->get() : nullptr;
        interp_at = where_of(src.property->value);
        if (!in) {
            error(interp_at, "'interpretation' takes none, default, baseOffset, delta, stride, sectionOffset or "
                             "sectionStride");
            return false;
        }
        ir::Interpretation& out = f.interpretation;
        out.kind = (in->kind);
        if (in->kind != InterpretationKind::none &&
            f.type != ir::Type::unsigned_int && f.type != ir::Type::signed_int) {
            error(in->where, "interpretation " + quote(rt::name(out.kind)) + " applies to integer fields; " +
                                 describe(x, f) + " is " + quote(rt::name(f.type)));
            return false;
        }
        if (in->first) {
            auto v = field_value(x, f, *in->first);
            if (!v) return false;
            out.value = *v;
        }
        if (in->step) {
            auto s = stride_value(*in->step);
            if (!s) return false;
            out.stride = *s;
            if (in->kind == InterpretationKind::section_stride && *s <= 0) {
                error(in->step->where, "the stride of 'sectionStride' counts elements forward and must be positive");
                return false;
            }
            if (*s == 0) warning(in->step->where, "stride 0 never moves: every value of " + describe(x, f) + " equals the initial value");
        }
        if (in->section) {
            auto s = section_number(*in->section);
            if (!s) return false;
            out.section = *s;
        }
        return true;
    }

    // The field's text format: its `text` property, or decimal (numbers) / string (bytes).
    bool resolve_text(Expansion& x, Node* leaf, ir::Field& f) {
        f.text.format = f.type == ir::Type::bytes ? ir::TextFormat::string : ir::TextFormat::decimal;
        const Source src = find_property(x, leaf, "text");
        x.text_at[f.index] = src.property ? where_of(src.property->value) : leaf->where;
        if (!src.property) return true;
        const auto* t = std::get_if<ast::TextFormat>(&src.property->value);
        if (!t) {
            error(where_of(src.property->value), "'text' takes a text format: decimal, hex, chars \"...\", string, line or omit");
            return false;
        }
        if (auto problem = text_format_problem(*t, f, describe(x, f))) {
            error(t->where, *problem);
            return false;
        }
        f.text = field_text(*t);
        return true;
    }

    // Resolves every property of one leaf into an IR field.
    ir::Field resolve_leaf(Expansion& x, Node* leaf) {
        ir::Field f;
        f.index = leaf->index;
        f.path = leaf_path(x, leaf);
        f.kind = leaf->label;
        mark_names_used(x, leaf);
        if (leaf->label == "tag" && leaf->index == 0) {
            f.width = f.restore_width = schema_.tag_width;
            return f;
        }
        bool has_width = false;
        Location width_at = leaf->where, interp_at = leaf->where;
        bool ok = resolve_type(x, leaf, f) && resolve_scale(x, leaf, f) &&
                  resolve_width(x, leaf, f, has_width, width_at) && resolve_interpretation(x, leaf, f, interp_at) &&
                  resolve_text(x, leaf, f);
        if (!ok) {
            x.failed = true;
            failed_fields_.insert(f.index);
            return f;
        }
        const bool stores = ir::stores_bytes(f.interpretation.kind);
        if (stores && !has_width) {
            error(leaf->where, describe(x, f) + " has no width; set '" + leaf->names.front() +
                                   ".width' in the record, its section or globally");
            x.failed = true;
            failed_fields_.insert(f.index);
        } else if (stores && !f.width_from && f.restore_width == 0 && f.type != ir::Type::bytes) {
            warning(width_at, describe(x, f) + " has width 0 with interpretation " +
                                  quote(rt::name(f.interpretation.kind)) +
                                  ", so it stores nothing; say 'interpretation = default V' if the value is constant");
        }
        if (f.interpretation.kind == ir::InterpretationKind::section_stride && f.restore_width == 0) {
            error(interp_at, describe(x, f) + " strides through a section, so it needs the width of the section's "
                                              "elements: set '" + leaf->names.front() + ".width'");
            x.failed = true;
        }
        if (stores && !f.width_from) f.width = f.restore_width;
        return f;
    }

    // The field's name within the record: the record names around it, each
    // single-field record standing for its field ("oldAddress", "vfield.length").
    std::string leaf_path(const Expansion& x, const Node* leaf) const {
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

    std::vector<ir::LayoutItem> layout(Expansion& x, Node* n) {
        std::vector<ir::LayoutItem> out;
        for (auto& c : n->children) {
            if (c->kind == Node::Kind::leaf) {
                out.emplace_back(c->index);
            } else if (c->kind == Node::Kind::repeat) {
                ir::Repeat r;
                r.count = repeat_count(x, c.get());
                r.items = layout(x, c.get());
                out.emplace_back(std::move(r));
            } else {
                for (auto& item : layout(x, c.get())) out.push_back(std::move(item));
            }
        }
        return out;
    }

    // Why a field cannot give a count of repetitions or of bytes, if it cannot.
    static std::optional<std::string> count_problem(const ir::Field& t) {
        if (t.index == 0 && t.kind == "tag") return "it is the record's tag";
        if (t.type != ir::Type::unsigned_int) return "it is " + quote(rt::name(t.type));
        if (t.scale != 0) return "it has scale " + std::to_string(t.scale);
        return std::nullopt;
    }

    std::uint32_t repeat_count(Expansion& x, Node* repeat) {
        const auto leaves = leaves_of(repeat);
        if (leaves.empty()) return 0;
        Source src{nullptr, repeat->written_in};
        Node* target = referenced_leaf(x, src, {*repeat->count}, leaves.front(), "the repeat count");
        if (!target) {
            x.failed = true;
            return 0;
        }
        if (auto problem = count_problem(ir_fields_[target->index])) {
            error(repeat->count->where, "the repeat count " + quote(repeat->count->text) +
                                            " must be a plain unsigned integer field, but " + *problem);
            x.failed = true;
        }
        return target->index;
    }

    void build_record(const ast::RecordDef& def, const Scope& scope, bool trace = true) {
        Expansion x;
        x.record = def.name.text;
        x.scope = &scope;
        x.root = expand_def(x, def, &scope, 0, def.name.where);
        index_leaves(x);
        if (x.failed) {  // a cycle or an oversized expansion: the tree is incomplete
            for (Node* leaf : x.leaves) mark_names_used(x, leaf);
            return;
        }
        const bool unique = check_duplicate_members(x);
        if (trace) {
            place_tag(x);
            index_leaves(x);
        } else {
            refuse_tag(x);
        }
        const ast::Property* tag_value = nullptr;
        const ast::Property* mnemonic = nullptr;
        apply_blocks(x, tag_value, mnemonic);
        // With two members of one name, a block may have described the other one.
        if (unique) check_introduced_counts(x);
        std::optional<std::uint64_t> tag;
        if (tag_value && (tag = resolve_tag_value(*tag_value))) {
            tag_sites_.push_back({scope.predefined ? &global_ : &scope, tag_value, x.record, *tag, scope.predefined});
        }
        if (x.failed) {
            for (Node* leaf : x.leaves) mark_names_used(x, leaf);
            return;
        }
        ir_fields_.clear();
        failed_fields_.clear();
        x.text_at.resize(x.leaves.size());
        for (Node* leaf : x.leaves) ir_fields_.push_back(resolve_leaf(x, leaf));
        ir::Record record;
        record.layout = layout(x, x.root.get());
        if (x.failed || !tag) return;
        record.name = def.name.text;
        record.tag = *tag;
        record.section = scope.number;
        record.fields = std::move(ir_fields_);
        RecordTextSites sites{def.name.where, std::move(x.text_at), std::nullopt};
        if (mnemonic) {
            const auto* m = std::get_if<ast::String>(&mnemonic->value);
            if (!m) {
                error(where_of(mnemonic->value), "'tag.mnemonic' takes a string, as in 'tag.mnemonic = \"co\";'");
                return;
            }
            record.mnemonic = m->value;
            sites.mnemonic = m->where;
        }
        text_sites_.push_back(std::move(sites));
        if (scope.predefined) {
            record.predefined = def.name.text == "comment"   ? ir::Predefined::comment
                                : def.name.text == "section" ? ir::Predefined::section
                                                             : ir::Predefined::metadata;
        }
        schema_.records.push_back(std::move(record));
    }

    // Only a record of the trace has a tag.
    void refuse_tag(Expansion& x) {
        for (Node* leaf : x.leaves) {
            if (leaf->label != "tag") continue;
            error(leaf->where, "record " + quote(x.record) + " has a 'tag' field but sets no 'tag.value'");
            x.failed = true;
        }
    }

    std::optional<std::uint64_t> resolve_tag_value(const ast::Property& p) {
        const auto* num = std::get_if<ast::Integer>(&p.value);
        if (!num || (num->negative && num->magnitude != 0)) {
            error(where_of(p.value), "'tag.value' takes a non-negative integer");
            return std::nullopt;
        }
        if (schema_.tag_width < 8 && num->magnitude >> (8 * schema_.tag_width) != 0) {
            error(num->where, "tag " + num->text + " does not fit in the " + std::to_string(schema_.tag_width) +
                                  "-byte tag (set a wider 'tag.width')");
            return std::nullopt;
        }
        return num->magnitude;
    }

    // Tags are unique within a section, counting the global records that may appear in it.
    void check_tags() {
        std::stable_sort(tag_sites_.begin(), tag_sites_.end(), [](const TagSite& a, const TagSite& b) {
            const Location& l = a.property->target.front().where;
            const Location& r = b.property->target.front().where;
            const bool lp = l.file->name == "<predefined>", rp = r.file->name == "<predefined>";
            if (lp != rp) return lp;
            return l.line != r.line ? l.line < r.line : l.column < r.column;
        });
        std::map<std::uint64_t, const TagSite*> global_tags;
        for (const TagSite& site : tag_sites_) {
            if (site.scope == &global_) claim_tag(global_tags, site);
        }
        for (const Scope& section : sections_) {
            auto tags = global_tags;
            for (const TagSite& site : tag_sites_) {
                if (site.scope == &section) claim_tag(tags, site);
            }
        }
    }

    void claim_tag(std::map<std::uint64_t, const TagSite*>& tags, const TagSite& site) {
        auto [it, fresh] = tags.emplace(site.tag, &site);
        if (fresh) return;
        const TagSite& other = *it->second;
        const Location& at = std::get<ast::Integer>(site.property->value).where;
        if (other.predefined) {
            error(at, "tag " + std::to_string(site.tag) + " is reserved for the predefined record " + quote(other.record));
            return;
        }
        note(error(at, "tag " + std::to_string(site.tag) + " is already used by record " + quote(other.record)),
             std::get<ast::Integer>(other.property->value).where, "record " + quote(other.record) + " takes it here");
    }

    // Definitions that are neither in the trace nor used as fields are still checked, then reported.
    void check_unused_records() {
        std::vector<const ast::RecordDef*> unused;
        for (Scope* scope : all_scopes_) {
            if (scope->predefined) continue;
            for (const auto& [n, def] : scope->records) {
                if (trace_tag(*def) || used_records_.count(def)) continue;
                build_record(*def, *scope, false);
                unused.push_back(def);
            }
        }
        for (const ast::RecordDef* def : unused) {
            if (used_records_.count(def)) continue;
            warning(def->name.where, "record " + quote(def->name.text) +
                                         " is never used: it sets no 'tag.value', so it cannot appear in a "
                                         "trace, and no record uses it as a field");
        }
    }

    void check_unused_properties() {
        for (Scope* scope : all_scopes_) {
            for (const auto& [k, sp] : scope->properties) {
                if (sp.used) continue;
                const std::string& kind = sp.property->target.front().text;
                warning(sp.property->target.front().where,
                        quote(k) + " has no effect: no field of the records " +
                            (scope->parent ? "of section " + quote(scope->name) : std::string("defined here")) +
                            " is named " + quote(kind));
            }
        }
    }

    const ast::Dtd& dtd_;
    const ast::Dtd& prelude_;
    Diagnostics& diags_;
    ir::Schema schema_;
    Scope predefined_;
    Scope global_;
    std::vector<Scope> sections_;
    std::vector<Scope*> all_scopes_;
    std::set<const ast::RecordDef*> used_records_;
    std::vector<TagSite> tag_sites_;
    std::vector<RecordTextSites> text_sites_;  // parallel to schema_.records
    std::vector<ir::Field> ir_fields_;  // the fields of the record being built, by index
    std::set<std::uint32_t> failed_fields_;  // those of them already reported as wrong
    // The index in diags_.all() of every diagnostic reported, by a hash of its place and
    // message (not the message itself: a DTD may draw a million diagnostics).
    std::unordered_multimap<std::size_t, std::size_t> reported_;
};

}  // namespace

std::optional<ir::Schema> resolve(const ast::Dtd& dtd, const ast::Dtd& prelude, std::string name, Diagnostics& diags) {
    return Resolver(dtd, prelude, diags).run(std::move(name));
}

}  // namespace metatf::front
