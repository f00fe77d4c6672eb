// The resolver's stages and what passes between them (internal to the front end).
//
//   resolve_scopes   the global scope, the sections and their properties  -> Scopes
//   resolve_expand   one record's definitions expanded into a field tree    -> Expansion
//   resolve_blocks   each definition's '{ ... }' checked once, then applied -> Blocks
//   resolve_fields   each field's type, width, interpretation, scale, text  -> ir::Record
//   resolve_variants each variant's encodings of a record                  -> ir::Variant
//   resolve_checks   tags, and what is never used
//
// A definition used by many records is expanded into each of them (its fields
// inherit from each record's section), but what is wrong in its own text is
// diagnosed once: its block by resolve_blocks, which remembers each definition
// it has checked, and its other sites through Reporter::first_at.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../diagnostics.hpp"
#include "../ir/schema.hpp"
#include "ast.hpp"
#include "native_form.hpp"
#include "text_form.hpp"

namespace metatf::front::stage {

constexpr std::size_t max_record_depth = 64;
// Records used as fields expand in place, so a few lines can describe a huge
// record; expansion stops at this many nodes.
constexpr std::size_t max_record_nodes = 4096;
constexpr std::uint32_t max_bytes_width = 65535;
constexpr std::uint32_t max_scale = 19;
// An enum or flag set names at most this many values (a flag set of 64-bit
// fields has at most 64); it bounds what reading and checking one costs.
constexpr std::size_t max_names = 4096;

inline constexpr std::array<std::string_view, 20> property_names = {
    "width", "interpretation", "value",   "type",    "scale", "feed",  "text", "mnemonic", "before", "after",
    "code",  "ctype",          "minimum", "maximum", "enum",  "flags", "bits", "order",    "dense",  "history"};

// ---- reporting ------------------------------------------------------------------

// What is wrong at a site of a definition's text when it is expanded in a
// record; the same finding in another record is not reported again.
enum class Finding { cycle, depth, mnemonic, introduced_count, count, reference, value, names };

// Where a finding is: a node of the syntax tree, and for a property set in a
// scope, the definition whose field reads it.
struct Site {
    const void* node;
    Finding what;
    const void* within = nullptr;
    auto operator<=>(const Site&) const = default;
};

class Reporter {
public:
    explicit Reporter(Diagnostics& diags) : diags_(diags) {}

    Diagnostic& error(const Location& where, std::string message) { return diags_.error(where, std::move(message)); }
    void warning(const Location& where, std::string message) { diags_.warning(where, std::move(message)); }
    static void note(Diagnostic* d, const Location& where, std::string message);

    // True the first time `site` is found wrong. A shared definition's text is the
    // same in every record that expands it, so a finding there that does not name
    // the record is reported by the first record only.
    bool first_at(const Site& site) { return sites_.insert(site).second; }

private:
    Diagnostics& diags_;
    std::set<Site> sites_;
};

std::size_t edit_distance(std::string_view a, std::string_view b);

// "; did you mean 'x'?" for the candidate closest to `word`, or "".
std::string did_you_mean(std::string_view word, const auto& candidates) {
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

std::string path_text(const std::vector<ast::Name>& path);
Location where_of(const ast::Value& v);
bool known_property(const ast::Property& p);
void report_unknown_property(Reporter& report, const ast::Property& p);
std::string mnemonic_error();
std::string tag_property_error(std::string_view prop);
// The `tag.value` property of a definition: set only by records that appear in the trace.
const ast::Property* trace_tag(const ast::RecordDef& def);

// ---- scopes ---------------------------------------------------------------------

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

// The output of resolve_scopes: every scope, and the schema's sections and tag width.
struct Scopes {
    Scope predefined;
    Scope global;
    std::vector<Scope> sections;
    std::vector<Scope*> all;  // predefined, global, then the sections in order
    std::unordered_map<const ast::RecordDef*, const Scope*> scope_of;  // where each top-level definition is written
    std::uint32_t comment_length = 1;  // bytes of a comment's length: 'comment.length.width = 2;' (decision 37)

    const ast::RecordDef* find_record(const Scope* scope, std::string_view name) const;
};

// Fills `schema.sections` and `schema.tag_width`, and out.comment_length.
void resolve_scopes(const ast::Dtd& dtd, const ast::Dtd& prelude, Scopes& out, ir::Schema& schema, Reporter& report);

// ---- the expanded field tree of one record -----------------------------------------

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

// The output of resolve_expand: one record's tree.
struct Expansion {
    std::string record;   // the trace record's name, for messages
    const Scope* scope;   // the trace record's scope: where inherited properties come from
    std::vector<std::unique_ptr<DefContext>> contexts;
    std::unique_ptr<Node> root;
    std::vector<Node*> leaves;
    bool failed = false;
    // Plain fields that `n*x` introduced (the paper's reading), with a "did you mean"
    // among the earlier members, for when `n` was meant as a reference after all.
    struct IntroducedCount {
        Node* leaf;
        const ast::Name* site;  // the `n` of `n*x`
        std::string hint;
    };
    std::vector<IntroducedCount> introduced;
};

std::vector<Node*> members_of(Node* content);
std::vector<Node*> leaves_of(Node* n);
// Whether every repetition around `referenced` also surrounds `user`.
bool visible_from(const Node* referenced, const Node* user);
const Node* innermost_repeat(const Node* n);
// The field's name within the record ("oldAddress", "vfield.length").
std::string leaf_path(const Expansion& x, const Node* leaf);
// Finds what `path` names inside a definition: a leaf, or a record of exactly one leaf.
// With `report`, says why not.
Node* lookup(Reporter& report, DefContext& ctx, const std::vector<ast::Name>& path, bool report_errors);

// The definitions that some record uses as a field (the others draw a warning).
using UsedRecords = std::unordered_set<const ast::RecordDef*>;

// Expands `def`, written in `scope`, into a tree and numbers its leaves; the
// tree is incomplete when `failed` (a cycle, or past the limits).
Expansion expand_record(const ast::RecordDef& def, const Scope& scope, const Scopes& scopes, UsedRecords& used,
                        Reporter& report);
// Wires parents, numbers the leaves and gives each the names it answers to.
void index_leaves(Expansion& x);
// A trace record's tag is its first field, added when not written.
void place_tag(Expansion& x, Reporter& report);
// A record that is not in the trace has no tag.
void refuse_tag(Expansion& x, Reporter& report);

// ---- properties in scopes and blocks --------------------------------------------

// Calls `f` on each property of the record's section and of the global scope that `leaf` answers to.
template <typename F>
void for_scope_properties(const Expansion& x, const Node* leaf, F f) {
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
void mark_names_used(const Expansion& x, const Node* leaf);

// The output of resolve_blocks: what the record's blocks set about the record itself.
struct Blocks {
    const ast::Property* tag_value = nullptr;
    const ast::Property* mnemonic = nullptr;
    const ast::Property* tag_before = nullptr;  // the text before the mnemonic
    const ast::Property* tag_after = nullptr;   // the text after it
    const ast::Property* tag_code = nullptr;    // the type code in the native binary form
};

// The definitions whose own text (their members, their block) has been
// diagnosed: checked again silently in every other record that expands them,
// since that finds the same members and the same fields.
struct CheckedDefinitions {
    std::unordered_set<const ast::RecordDef*> members;
    std::unordered_set<const ast::RecordDef*> blocks;
};

// Checks that each definition names its members once; false if not (then a
// block may describe the other member of a name).
bool check_members(Expansion& x, CheckedDefinitions& checked, Reporter& report);
// Applies every definition's block to the leaves it names; outer definitions win.
Blocks apply_blocks(Expansion& x, CheckedDefinitions& checked, Reporter& report);
// A count that `n*x` introduced must be described by some property, like any field.
void check_introduced_counts(Expansion& x, Reporter& report);

// ---- fields ---------------------------------------------------------------------

// The output of resolve_fields: the fields and layout of a record, and where
// each field's text format is set.
struct ResolvedFields {
    std::vector<ir::Field> fields;
    std::vector<ir::LayoutItem> layout;
    std::vector<Location> text_at;
    std::vector<Location> ctype_at;  // per field: its `ctype` value, or the field
    std::optional<Location> pool_at;   // the first 'live', 'predict' or 'feed'
    std::optional<Location> table_at;  // the first 'sectionOffset'
    std::optional<Location> history_at;  // the first 'history'
    std::optional<Location> intern_at;   // the first 'intern'
    bool ok = true;
};

ResolvedFields resolve_fields(Expansion& x, const ir::Schema& schema, Reporter& report);

// ---- variants -------------------------------------------------------------------

// The variants of the trace record `x`, whose fields resolved without error
// to `own`: for each variant with properties that name the record, its
// fields resolved again with those properties over the record's blocks.
// Adds the properties it reads to `used`.
std::vector<ir::Variant> resolve_variants(Expansion& x, const std::vector<ir::Field>& own, const std::vector<ast::Variant>& variants,
                                          const ir::Schema& schema, std::unordered_set<const ast::Property*>& used, Reporter& report);
// Marks the variants' properties that name record `record` used: a record
// that failed to resolve has no variants, and is not said to be missing.
void mark_variant_targets(const std::vector<ast::Variant>& variants, const std::string& record,
                          std::unordered_set<const ast::Property*>& used);
// A variant's property that no record read names no record of the trace.
void check_variant_targets(const std::vector<ast::Variant>& variants, const std::unordered_set<const ast::Property*>& used,
                           const ir::Schema& schema, Reporter& report);

// ---- checks across records ------------------------------------------------------

// Where a trace record sets its tag, for the uniqueness check.
struct TagSite {
    const Scope* scope;  // the predefined records count as global
    const ast::Property* property;
    std::string record;
    std::uint64_t tag;
    bool predefined;
};

std::optional<std::uint64_t> resolve_tag_value(const ast::Property& p, std::uint32_t tag_width, Reporter& report);
// Tags are unique within a section, counting the global records that may appear in it.
void check_tags(std::vector<TagSite>& sites, const Scopes& scopes, Reporter& report);
void check_unused_properties(const Scopes& scopes, Reporter& report);

}  // namespace metatf::front::stage
