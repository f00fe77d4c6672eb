// Stage 4: each field of a record resolved from the properties it inherits: its
// type, scale, width, interpretation and text format; then the record's layout.
//
// A field of a shared definition inherits from the record's section and from the
// blocks around it, so it is resolved in every record. What is wrong with a
// property's value alone is reported once (Finding::value); what is wrong with
// the field is reported per record, whose name the message carries.
#include <algorithm>
#include <cctype>
#include <array>
#include <map>
#include <set>
#include <string_view>

#include "resolve_stages.hpp"

namespace metatf::front::stage {

namespace {

// Where a leaf's property comes from: its records' blocks, then its section, then the global scope.
struct Source {
    const ast::Property* property = nullptr;
    DefContext* context = nullptr;  // null for scope properties: references resolve where the field is written
};

// Why a field cannot give a count of repetitions or of bytes, if it cannot.
std::optional<std::string> count_problem(const ir::Field& t) {
    if (t.index == 0 && t.kind == "tag") return "it is the record's tag";
    if (t.type != ir::Type::unsigned_int) return "it is " + quote(rt::name(t.type));
    if (t.scale != 0) return "it has scale " + std::to_string(t.scale);
    return std::nullopt;
}

class FieldResolver {
public:
    FieldResolver(Expansion& x, const ir::Schema& schema, Reporter& report) : x_(x), schema_(schema), report_(report) {}

    ResolvedFields run() {
        out_.text_at.resize(x_.leaves.size());
        out_.ctype_at.resize(x_.leaves.size());
        for (Node* leaf : x_.leaves) out_.fields.push_back(resolve_leaf(leaf));
        out_.layout = layout(x_.root.get());
        check_interned();
        return std::move(out_);
    }

private:
    // ---- reporting

    // A property whose value is wrong for any field: reported once.
    bool value_error(const ast::Property& p, const Location& at, std::string message) {
        if (report_.first_at({&p, Finding::value})) report_.error(at, std::move(message));
        return false;
    }
    // A reference (or count) wrong in the definition it is read in: reported once there.
    bool reference_error(const Site& site, const Location& at, std::string message) {
        if (report_.first_at(site)) report_.error(at, std::move(message));
        return false;
    }
    // Wrong for this field of this record: the message names both.
    bool field_error(const Location& at, std::string message) {
        report_.error(at, std::move(message));
        return false;
    }
    std::string describe(const ir::Field& f) const { return "field " + quote(f.path) + " of record " + quote(x_.record); }

    // ---- properties

    Source find_property(const Node* leaf, std::string_view prop) const {
        if (auto it = leaf->assigned.find(prop); it != leaf->assigned.end()) {
            return {it->second.property, it->second.context};
        }
        for (const Scope* s = x_.scope; s; s = s->parent) {
            for (const std::string& n : leaf->names) {
                auto it = s->properties.find(n + "." + std::string(prop));
                if (it != s->properties.end()) return {it->second.property, nullptr};
            }
        }
        return {};
    }

    // The leaf a reference names, if it is an earlier field visible from `user`;
    // `site` is the reference in the syntax tree.
    Node* referenced_leaf(const Source& src, const void* site, const std::vector<ast::Name>& path, Node* user,
                          std::string_view what) {
        // A reference set in a block is read in that block's definition; one set in a
        // scope, in the definition where the field is written. A definition written
        // inside another also sees the fields of the one around it.
        DefContext* ctx = src.context ? src.context : user->written_in;
        Node* target = nullptr;
        for (DefContext* c = ctx; c && !target; c = c->lexical_parent) target = lookup(report_, *c, path, false);
        if (!target) {
            if (report_.first_at({site, Finding::reference, ctx->def})) lookup(report_, *ctx, path, true);
            return nullptr;
        }
        if (failed_.count(target->index)) return nullptr;  // already reported
        if (target->index >= user->index) {
            field_error(path.front().where, std::string(what) + " " + quote(path_text(path)) +
                                                " must name an earlier field of record " + quote(x_.record));
            return nullptr;
        }
        if (!visible_from(target, user)) {
            field_error(path.front().where, std::string(what) + " " + quote(path_text(path)) +
                                                " names a field inside a repetition that does not enclose " +
                                                quote(leaf_path(x_, user)));
            return nullptr;
        }
        return target;
    }

    // ---- one field

    // Resolves every property of one leaf into an IR field.
    ir::Field resolve_leaf(Node* leaf) {
        ir::Field f;
        f.index = leaf->index;
        f.path = leaf_path(x_, leaf);
        f.kind = leaf->label;
        mark_names_used(x_, leaf);
        if (leaf->label == "tag" && leaf->index == 0) {
            f.width = f.restore_width = schema_.tag_width;
            return f;
        }
        Location width_at = leaf->where, interp_at = leaf->where;
        bool has_width = false;
        const bool ok = resolve_type(leaf, f) && resolve_scale(leaf, f) && resolve_width(leaf, f, has_width, width_at) &&
                        resolve_interpretation(leaf, f, interp_at) && resolve_feed(leaf, f) && resolve_text(leaf, f) &&
                        resolve_ctype(leaf, f) && resolve_fixed(leaf, f) && resolve_rules(leaf, f) &&
                        resolve_history(leaf, f);
        if (!ok || !check_storage(leaf, f, has_width, width_at)) {
            out_.ok = false;
            failed_.insert(f.index);
        }
        if (ok && f.interpretation.kind == ir::InterpretationKind::section_stride && f.restore_width == 0) {
            field_error(interp_at, describe(f) + " strides through a section, so it needs the width of the section's "
                                                 "elements: set '" + leaf->names.front() + ".width'");
            out_.ok = false;
        }
        const ir::InterpretationKind kind = f.interpretation.kind;
        if (kind == ir::InterpretationKind::section_offset && !out_.table_at) out_.table_at = interp_at;
        if (rt::codes(kind) && !out_.pool_at) out_.pool_at = interp_at;
        if (ok && kind == ir::InterpretationKind::intern) {
            interned_.emplace_back(f.index, interp_at);
            if (!out_.intern_at) out_.intern_at = interp_at;
        }
        if (ok && (rt::codes(kind) || kind == ir::InterpretationKind::intern) && f.restore_width == 0 && !f.width_from) {
            const char* what = kind == ir::InterpretationKind::live      ? " refers to live values, so it needs a width of 1 to 8 bytes for its counts"
                               : kind == ir::InterpretationKind::predict ? " stores predictor codes, so it needs a width of 1 to 8 bytes for them"
                                                                         : " stores string codes, so it needs a width of 1 to 8 bytes for them";
            field_error(interp_at, describe(f) + what + ": set '" + leaf->names.front() + ".width'");
            out_.ok = false;
        }
        if (ok && ir::stores_bytes(f.interpretation.kind) && !f.width_from) f.width = f.restore_width;
        return f;
    }

    // 'intern' (docs/dtd-language.md, "Interned strings"): the code, or the
    // escape, the length and the bytes, take the place of the length and the
    // string, which must be adjacent; the length must mean nothing else.
    void check_interned() {
        for (const auto& [index, at] : interned_) {
            if (auto problem = intern_problem(out_.fields[index], out_.layout)) {
                field_error(at, describe(out_.fields[index]) + " cannot be 'intern': " + *problem);
                out_.ok = false;
            }
        }
    }

    std::optional<std::string> intern_problem(const ir::Field& length, const std::vector<ir::LayoutItem>& items) const {
        if (length.type != ir::Type::unsigned_int) return "it is " + quote(rt::name(length.type)) + ", not a length";
        if (length.history) return std::string("it has a shared history");
        const ir::Field* string = nullptr;
        for (const ir::Field& f : out_.fields) {
            if (f.history && f.history_key == length.path) return "it keys the shared history of " + quote(f.path);
            if (f.width_from != length.index) continue;
            if (string) return "it is the length of both " + quote(string->path) + " and " + quote(f.path);
            string = &f;
        }
        if (!string) return std::string("it is the length of no bytes field");
        // Outside groups: one code per record, as the tables and `mtf stats` count them.
        const auto is = [](const ir::LayoutItem& item, std::uint32_t field) {
            const auto* index = std::get_if<std::uint32_t>(&item);
            return index && *index == field;
        };
        const auto at = std::find_if(items.begin(), items.end(), [&](const ir::LayoutItem& item) { return is(item, length.index); });
        if (at == items.end()) return std::string("it repeats in its record");
        if (at + 1 == items.end() || !is(*(at + 1), string->index)) {
            return "the string it measures, " + quote(string->path) + ", must follow it at once";
        }
        return std::nullopt;
    }

    // A field that stores bytes needs a width; width 0 is allowed but suspicious.
    bool check_storage(const Node* leaf, const ir::Field& f, bool has_width, const Location& width_at) {
        if (!ir::stores_bytes(f.interpretation.kind)) return true;
        if (!has_width) {
            return field_error(leaf->where, describe(f) + " has no width; set '" + leaf->names.front() +
                                                ".width' in the record, its section or globally");
        }
        // (A live or predict field with width 0 is an error of its own, in resolve_leaf.)
        if (!f.width_from && f.restore_width == 0 && f.type != ir::Type::bytes && !rt::codes(f.interpretation.kind)) {
            report_.warning(width_at, describe(f) + " has width 0 with interpretation " +
                                          quote(rt::name(f.interpretation.kind)) +
                                          ", so it stores nothing; say 'interpretation = default V' if the value is constant");
        }
        return true;
    }

    bool resolve_type(const Node* leaf, ir::Field& f) {
        const Source width = find_property(leaf, "width");
        const auto* ref = width.property ? std::get_if<ast::Reference>(&width.property->value) : nullptr;
        f.type = ref && ref->property.text == "value" ? ir::Type::bytes : ir::Type::unsigned_int;
        const Source src = find_property(leaf, "type");
        if (!src.property) return true;
        const auto* t = std::get_if<ast::TypeName>(&src.property->value);
        if (!t) return value_error(*src.property, where_of(src.property->value), "'type' takes unsigned, signed, float or bytes");
        f.type = rt::from_name<ir::Type>(t->name.text).value_or(ir::Type::unsigned_int);
        return true;
    }

    bool resolve_scale(const Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "scale");
        if (!src.property) return true;
        const Location at = where_of(src.property->value);
        const auto* num = std::get_if<ast::Integer>(&src.property->value);
        if (!num || num->negative || num->magnitude > max_scale) {
            return value_error(*src.property, at, "'scale' takes a number of decimal places from 0 to 19");
        }
        if (f.type != ir::Type::unsigned_int && f.type != ir::Type::signed_int) {
            return field_error(at, "'scale' applies to integer fields; " + describe(f) + " is " + quote(rt::name(f.type)));
        }
        f.scale = static_cast<std::uint32_t>(num->magnitude);
        return true;
    }

    // The width as written: a number, or a reference. Sets restore_width or width_from.
    bool resolve_width(Node* leaf, ir::Field& f, bool& has_width, Location& width_at) {
        const Source src = find_property(leaf, "width");
        if (!src.property) return true;
        has_width = true;
        const ast::Value& v = src.property->value;
        width_at = where_of(v);
        if (const auto* num = std::get_if<ast::Integer>(&v)) return fixed_width(*src.property, f, *num);
        const auto* ref = std::get_if<ast::Reference>(&v);
        if (!ref) return value_error(*src.property, width_at, "'width' takes a number of bytes or a reference such as 'length.value'");
        if (ref->property.text != "value" && ref->property.text != "width") {
            return value_error(*src.property, ref->property.where,
                               "a width can refer to a field's 'value' or 'width', not its " + quote(ref->property.text));
        }
        Node* target = referenced_leaf(src, ref, ref->path, leaf, "the width reference");
        if (!target) return false;
        const ir::Field& t = out_.fields[target->index];
        const Site site{ref, Finding::count, target->written_in->def};
        if (ref->property.text == "width") {
            if (t.width_from) {
                return reference_error(site, width_at, quote(path_text(ref->path)) + " has a width that varies, which cannot be copied");
            }
            f.restore_width = t.restore_width;
            return width_suits_type(f, f.restore_width, width_at);
        }
        if (f.type != ir::Type::bytes) {
            return field_error(width_at, "only a 'bytes' field can take its width from another field; " + describe(f) +
                                             " is " + quote(rt::name(f.type)));
        }
        if (auto problem = count_problem(t)) {
            return reference_error(site, width_at, "the width of " + quote(f.path) + " comes from " + quote(t.path) +
                                                       ", which must be a plain unsigned integer field, but " + *problem);
        }
        f.width_from = target->index;
        return true;
    }

    bool fixed_width(const ast::Property& p, ir::Field& f, const ast::Integer& num) {
        if (num.negative || num.magnitude > max_bytes_width) {
            return value_error(p, num.where, "width " + num.text + " is out of range: a width is a number of bytes from 0 to " +
                                                 std::to_string(max_bytes_width));
        }
        f.restore_width = static_cast<std::uint32_t>(num.magnitude);
        return width_suits_type(f, f.restore_width, num.where);
    }

    bool width_suits_type(const ir::Field& f, std::uint32_t w, const Location& at) {
        if (rt::is_integer(f.type) && w > 8) {
            return field_error(at, "width " + std::to_string(w) + " is too wide for " + describe(f) + ": " +
                                       std::string(rt::name(f.type)) + " fields take 0 to 8 bytes");
        }
        if (f.type == ir::Type::floating && w != 4 && w != 8) {
            return field_error(at, "width " + std::to_string(w) + " does not suit " + describe(f) +
                                       ": float fields take 4 or 8 bytes");
        }
        return true;
    }

    // ---- interpretation

    // An interpretation argument as the field's 64 bits, checked against the field's type.
    std::optional<std::uint64_t> field_value(const ir::Field& f, const ast::Integer& v) {
        if (f.type == ir::Type::signed_int) {
            constexpr std::uint64_t limit = std::uint64_t(1) << 63;
            if (v.magnitude > (v.negative ? limit : limit - 1)) {
                field_error(v.where, "value " + v.text + " does not fit the signed " + describe(f));
                return std::nullopt;
            }
            return v.negative ? ~v.magnitude + 1 : v.magnitude;
        }
        if (v.negative && v.magnitude != 0) {
            field_error(v.where, "value " + v.text + " is negative, but " + describe(f) + " is unsigned");
            return std::nullopt;
        }
        return v.magnitude;
    }

    std::optional<std::int64_t> stride_value(const ast::Property& p, const ast::Integer& v) {
        constexpr std::uint64_t limit = std::uint64_t(1) << 63;
        if (v.magnitude > (v.negative ? limit : limit - 1)) {
            value_error(p, v.where, "stride " + v.text + " does not fit in a signed 64-bit integer");
            return std::nullopt;
        }
        return v.negative ? static_cast<std::int64_t>(~v.magnitude + 1) : static_cast<std::int64_t>(v.magnitude);
    }

    std::optional<std::uint8_t> section_number(const ast::Property& p, const ast::SectionRef& ref) {
        if (const auto* num = std::get_if<ast::Integer>(&ref)) {
            for (const auto& s : schema_.sections) {
                if (s.number != 0 && !num->negative && s.number == num->magnitude) return s.number;
            }
            value_error(p, num->where, "there is no section number " + num->text);
            return std::nullopt;
        }
        const ast::Name& n = std::get<ast::Name>(ref);
        std::vector<std::string> names;
        for (const auto& s : schema_.sections) {
            if (s.number != 0 && s.name == n.text) return s.number;
            if (s.number != 0) names.push_back(s.name);
        }
        value_error(p, n.where, "there is no section " + quote(n.text) + did_you_mean(n.text, names));
        return std::nullopt;
    }

    bool resolve_interpretation(const Node* leaf, ir::Field& f, Location& interp_at) {
        const Source src = find_property(leaf, "interpretation");
        if (!src.property) return true;
        const ast::Property& p = *src.property;
        const auto* boxed = std::get_if<ast::InterpretationPtr>(&p.value);
        const ast::Interpretation* in = boxed ? boxed->get() : nullptr;
        interp_at = where_of(p.value);
        if (!in) {
            return value_error(p, interp_at, "'interpretation' takes none, default, baseOffset, delta, stride, sectionOffset, "
                                             "sectionStride, live, predict or intern");
        }
        ir::Interpretation& out = f.interpretation;
        out.kind = in->kind;
        if (in->kind != ast::InterpretationKind::none && f.type != ir::Type::unsigned_int && f.type != ir::Type::signed_int) {
            return field_error(in->where, "interpretation " + quote(rt::name(out.kind)) + " applies to integer fields; " +
                                              describe(f) + " is " + quote(rt::name(f.type)));
        }
        if (in->kind == ast::InterpretationKind::predict) {
            if (!in->first) return true;  // no pool
            auto pool = pool_number(p, *in->first, "refers to none");
            if (!pool) return false;
            out.pool = *pool;
            return true;
        }
        if (in->kind == ast::InterpretationKind::live) {
            auto pool = pool_number(p, *in->first, nullptr);
            if (!pool) return false;
            out.pool = *pool;
            return true;
        }
        if (in->first) {
            auto v = field_value(f, *in->first);
            if (!v) return false;
            out.value = *v;
        }
        if (in->step && !resolve_stride(p, *in, f)) return false;
        if (in->section) {
            auto s = section_number(p, *in->section);
            if (!s) return false;
            out.section = *s;
        }
        return true;
    }

    // A pool's number, 1 to rt::max_pool, or 0 where `zero` says what 0 means
    // (feed: "feeds none"; predict: "refers to none"; live: null, no 0).
    std::optional<std::uint8_t> pool_number(const ast::Property& p, const ast::Integer& v, const char* zero) {
        if (v.negative || (v.magnitude == 0 && !zero) || v.magnitude > rt::max_pool) {
            value_error(p, v.where, "there is no pool " + v.text + " (pools are 1 to " + std::to_string(rt::max_pool) +
                                        (zero ? ", and 0 " + std::string(zero) + ")" : ")"));
            return std::nullopt;
        }
        return static_cast<std::uint8_t>(v.magnitude);
    }

    // `feed = P`: the field's values join pool P after each record.
    bool resolve_feed(const Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "feed");
        if (!src.property) return true;
        const auto* num = std::get_if<ast::Integer>(&src.property->value);
        if (!num) return value_error(*src.property, where_of(src.property->value), "'feed' takes the number of a pool, 1 to 4, or 0 for none");
        auto pool = pool_number(*src.property, *num, "feeds none");
        if (!pool) return false;
        if (*pool != 0 && f.type != ir::Type::unsigned_int && f.type != ir::Type::signed_int) {
            return field_error(num->where, "'feed' applies to integer fields; " + describe(f) + " is " + quote(rt::name(f.type)));
        }
        f.feed = *pool;
        if (f.feed != 0 && !out_.pool_at) out_.pool_at = num->where;
        return true;
    }

    bool resolve_stride(const ast::Property& p, const ast::Interpretation& in, ir::Field& f) {
        auto s = stride_value(p, *in.step);
        if (!s) return false;
        f.interpretation.stride = *s;
        if (in.kind == ast::InterpretationKind::section_stride && *s <= 0) {
            return value_error(p, in.step->where, "the stride of 'sectionStride' counts elements forward and must be positive");
        }
        if (*s == 0) {
            report_.warning(in.step->where, "stride 0 never moves: every value of " + describe(f) + " equals the initial value");
        }
        return true;
    }

    // ---- text

    // The field's text form: its `text` property, or decimal (numbers) /
    // string (bytes), and the texts its `before` and `after` properties set.
    bool resolve_text(const Node* leaf, ir::Field& f) {
        return resolve_text_format(leaf, f) && resolve_surround(leaf, f, "before") && resolve_surround(leaf, f, "after");
    }

    bool resolve_text_format(const Node* leaf, ir::Field& f) {
        f.text.format = f.type == ir::Type::bytes ? ir::TextFormat::string : ir::TextFormat::decimal;
        const Source src = find_property(leaf, "text");
        out_.text_at[f.index] = src.property ? where_of(src.property->value) : leaf->where;
        if (!src.property) return true;
        const auto* t = std::get_if<ast::TextFormat>(&src.property->value);
        if (!t) {
            return value_error(*src.property, where_of(src.property->value),
                               "'text' takes a text format: decimal, hex, chars \"...\", string, line, nested, omit, enum or clock");
        }
        if (auto problem = text_format_problem(*t, f, describe(f))) return field_error(t->where, *problem);
        f.text = field_text(*t);
        return true;
    }

    bool resolve_surround(const Node* leaf, ir::Field& f, const std::string& prop) {
        const Source src = find_property(leaf, prop);
        if (!src.property) return true;
        const auto* s = std::get_if<ast::String>(&src.property->value);
        if (!s) return value_error(*src.property, where_of(src.property->value), quote(prop) + " takes a string, as in '" + f.kind + "." + prop + " = \",\";'");
        if (auto problem = surround_problem(prop, s->value, f, describe(f))) return field_error(s->where, *problem);
        if (prop == "before") {
            f.text.before = s->value;
        } else {
            f.text.after = s->value;
        }
        return true;
    }

    // `value = N` on a field other than the tag: the field is stored as its
    // encoding says, and its value is always N (docs/dtd-language.md, section 6).
    bool resolve_fixed(const Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "value");
        if (!src.property) return true;
        const auto* num = std::get_if<ast::Integer>(&src.property->value);
        if (!num) return value_error(*src.property, where_of(src.property->value), "'value' takes an integer, as in 'magic.value = 0x4d54;'");
        if (f.type != ir::Type::unsigned_int && f.type != ir::Type::signed_int) {
            return field_error(num->where, "'value' applies to integer fields; " + describe(f) + " is " + quote(rt::name(f.type)));
        }
        f.value = field_value(f, *num);
        if (!f.value) return false;
        const ir::Interpretation& in = f.interpretation;
        if (in.kind == ir::InterpretationKind::default_value && in.value != *f.value) {
            return field_error(num->where, "'value' fixes " + describe(f) + " at " + num->text +
                                               ", but its interpretation 'default' gives it another value");
        }
        const std::uint32_t w = f.restore_width;
        const bool fits = f.type == ir::Type::signed_int ? rt::fits_signed(*f.value, w) : rt::fits_unsigned(*f.value, w);
        if (in.kind == ir::InterpretationKind::none && !fits) {
            return field_error(num->where, "value " + num->text + " does not fit " + describe(f) + ", which takes " + std::to_string(w) +
                                               (w == 1 ? " byte" : " bytes"));
        }
        return true;
    }

    // ---- rules: what a spec states about the values (docs/dtd-language.md, "Rules")

    bool resolve_rules(const Node* leaf, ir::Field& f) {
        return resolve_bound(leaf, f, "minimum", f.rules.minimum) && resolve_bound(leaf, f, "maximum", f.rules.maximum) &&
               check_bounds(leaf, f) && resolve_names(leaf, f) && resolve_order(leaf, f) && resolve_dense(leaf, f);
    }

    // Rules are about numbers: a property that states one applies to integer fields.
    bool integer_rule(const ast::Property& p, const ir::Field& f) {
        if (rt::is_integer(f.type)) return true;
        return field_error(where_of(p.value), quote(p.property.text) + " applies to integer fields; " + describe(f) + " is " +
                                                  quote(rt::name(f.type)));
    }

    // `minimum = N` or `maximum = N`: the stored integer, as the field's type reads it.
    bool resolve_bound(const Node* leaf, ir::Field& f, const std::string& prop, std::optional<std::uint64_t>& out) {
        const Source src = find_property(leaf, prop);
        if (!src.property) return true;
        const auto* num = std::get_if<ast::Integer>(&src.property->value);
        if (!num) return value_error(*src.property, where_of(src.property->value), quote(prop) + " takes an integer, as in 'length." + prop + " = 15;'");
        if (!integer_rule(*src.property, f)) return false;
        out = field_value(f, *num);
        return out.has_value();
    }

    // Reported at the bound written last, which is the one that conflicts.
    bool check_bounds(const Node* leaf, const ir::Field& f) {
        const auto& [lo, hi] = std::pair(f.rules.minimum, f.rules.maximum);
        if (!lo || !hi) return true;
        const bool above = f.type == ir::Type::signed_int ? static_cast<std::int64_t>(*lo) > static_cast<std::int64_t>(*hi) : *lo > *hi;
        if (!above) return true;
        const Location low = where_of(find_property(leaf, "minimum").property->value);
        const Location high = where_of(find_property(leaf, "maximum").property->value);
        const bool high_later = std::pair(high.line, high.column) > std::pair(low.line, low.column);
        return field_error(high_later ? high : low, describe(f) + " has a minimum above its maximum");
    }

    // `enum = { name = N, ... }`, `flags = { name = BITS, ... }` or `bits = { name = WIDTH, ... }`.
    bool resolve_names(const Node* leaf, ir::Field& f) {
        static constexpr std::array<const char*, 3> ways = {"enum", "flags", "bits"};  // in rt::Naming's order
        const ast::Property* p = nullptr;
        for (std::size_t k = 0; k < ways.size(); ++k) {
            const ast::Property* q = find_property(leaf, ways[k]).property;
            if (q && p) {
                return field_error(where_of(q->value), describe(f) + " has both " + quote(p->property.text) + " and " + quote(ways[k]) +
                                                           "; name its values one way");
            }
            if (q) p = q, f.rules.naming = static_cast<rt::Naming>(k);
        }
        if (!p) return true;
        const std::string& prop = p->property.text;
        const auto* list = std::get_if<ast::NameList>(&p->value);
        if (!list) {
            return value_error(*p, where_of(p->value), f.rules.naming == rt::Naming::parts
                                                           ? "'bits' takes names and their widths in bits, as in '" + f.kind + ".bits = { fd = 6, index = 2 };'"
                                                           : quote(prop) + " takes names and their numbers, as in '" + f.kind + "." + prop + " = { read = 1, write = 2 };'");
        }
        if (!integer_rule(*p, f)) return false;
        if (f.rules.naming != rt::Naming::values && f.type == ir::Type::signed_int) {
            return field_error(where_of(p->value), quote(prop) + (f.rules.naming == rt::Naming::flags ? " name bits" : " packs parts") +
                                                       " of unsigned fields; " + describe(f) + " is 'signed'");
        }
        if (list->items.size() > max_names) {
            return value_error(*p, where_of(p->value), quote(prop) + " names at most " + std::to_string(max_names) + " values");
        }
        if (f.rules.naming == rt::Naming::parts) return resolve_parts(*p, *list, f);
        // The names and numbers as written are the same for every field: checked once.
        if (report_.first_at({p, Finding::names}) && !names_unique(*p, *list, f.rules.naming == rt::Naming::flags)) return false;
        for (const ast::NamedNumber& n : list->items) {
            const auto v = field_value(f, n.number);
            if (!v) return false;
            f.rules.names.push_back({n.name.text, *v});
        }
        return true;
    }

    // `bits = { fd = 6, index = 2 }`: bit fields packed in the value, the
    // first from its least significant bit up; stored as each part's mask.
    bool resolve_parts(const ast::Property& p, const ast::NameList& list, ir::Field& f) {
        if (f.scale != 0) return field_error(where_of(p.value), "'bits' packs parts in a whole number; " + describe(f) + " has a scale");
        std::set<std::string_view> names;
        std::uint64_t shift = 0;
        for (const ast::NamedNumber& n : list.items) {
            const std::string& name = n.name.text;
            if (!names.insert(name).second) return value_error(p, n.name.where, "the name " + quote(name) + " is given twice");
            if (n.number.negative || n.number.magnitude == 0 || n.number.magnitude > 64) {
                return value_error(p, n.name.where, "part " + quote(name) + " is " + (n.number.negative ? "-" : "") + std::to_string(n.number.magnitude) +
                                                        " bits wide; a part takes 1 to 64 bits");
            }
            const std::uint64_t width = n.number.magnitude;
            if (shift + width > 8 * std::uint64_t(f.restore_width) && f.restore_width != 0) {
                // About this field: reported for each record that has it, as field errors are.
                return field_error(n.name.where, "the parts up to " + quote(name) + " take " + std::to_string(shift + width) + " bits, more than the " +
                                                     std::to_string(8 * f.restore_width) + " of " + describe(f));
            }
            if (shift + width > 64) return value_error(p, n.name.where, "the parts up to " + quote(name) + " take more than 64 bits");
            f.rules.names.push_back({name, (width == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << width) - 1) << shift});
            shift += width;
        }
        return true;
    }

    // Each name once, each enum number once, each flag's bits in no other flag.
    bool names_unique(const ast::Property& p, const ast::NameList& list, bool flags) {
        std::map<std::string_view, const ast::Name*> names;
        std::map<std::pair<bool, std::uint64_t>, const ast::Name*> numbers;  // enum: sign and magnitude
        std::uint64_t bits = 0;
        for (const ast::NamedNumber& n : list.items) {
            const std::string& name = n.name.text;
            const std::uint64_t v = n.number.negative ? ~n.number.magnitude + 1 : n.number.magnitude;
            if (!names.emplace(name, &n.name).second) return value_error(p, n.name.where, "the name " + quote(name) + " is given twice");
            if (flags && v == 0) return value_error(p, n.name.where, "flag " + quote(name) + " has no bits; a flag names one bit or more");
            if (flags && (bits & v) != 0) {
                const auto other = std::find_if(list.items.begin(), list.items.end(), [&](const ast::NamedNumber& o) {
                    const std::uint64_t w = o.number.negative ? ~o.number.magnitude + 1 : o.number.magnitude;
                    return (w & v) != 0;
                });
                return value_error(p, n.name.where, "flag " + quote(name) + " shares bits with " + quote(other->name.text));
            }
            bits |= v;
            const auto key = std::pair(n.number.negative && n.number.magnitude != 0, n.number.magnitude);
            if (auto [at, added] = numbers.emplace(key, &n.name); !flags && !added) {
                return value_error(p, n.name.where, quote(name) + " has the number of " + quote(at->second->text) + "; each value takes one name");
            }
        }
        return true;
    }

    // `order = nondecreasing` or `increasing`, maybe `global`: across all record types with this kind of field.
    bool resolve_order(const Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "order");
        if (!src.property) return true;
        const auto* o = std::get_if<ast::OrderValue>(&src.property->value);
        if (!o) {
            return value_error(*src.property, where_of(src.property->value),
                               "'order' takes nondecreasing or increasing, and 'global' after either for one order across record types");
        }
        if (!integer_rule(*src.property, f)) return false;
        f.rules.order = o->order;
        if (o->global) f.rules.global = f.kind;
        return true;
    }

    // `history = global` or `per KEY`: the previous value a delta (or stride)
    // adds to is the last value of a field of this name in any record type
    // with the same history, or the last one whose earlier field KEY had the
    // same value (docs/dtd-language.md, "Shared histories").
    bool resolve_history(Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "history");
        if (!src.property) return true;
        const auto* h = std::get_if<ast::HistoryValue>(&src.property->value);
        if (!h) {
            return value_error(*src.property, where_of(src.property->value),
                               "'history' takes 'global' (one previous value across record types) or 'per FIELD' (one per value of an earlier field)");
        }
        if (!integer_rule(*src.property, f)) return false;
        const auto repeated = [](const Node* n) {
            for (const Node* p = n->parent; p; p = p->parent) {
                if (p->kind == Node::Kind::repeat) return true;
            }
            return false;
        };
        if (repeated(leaf)) return field_error(h->where, describe(f) + " repeats in its record, so it cannot have a shared history");
        f.history = true;
        if (!out_.history_at) out_.history_at = h->where;
        if (!h->key) return true;
        const std::vector<ast::Name> path{*h->key};
        Node* target = referenced_leaf(src, h, path, leaf, "the history key");
        if (!target) return false;
        const ir::Field& k = out_.fields[target->index];
        // The tag is not read as a field: it would key every record type apart, which is the paper's own history.
        if (k.index == 0) return field_error(h->key->where, "the history key cannot be the tag; a history per record type is what a field without 'history' has");
        if (repeated(target)) return field_error(h->key->where, "the history key " + quote(k.path) + " repeats in the record; a key is one value");
        if (!rt::is_integer(k.type)) {
            return field_error(h->key->where, "the history key " + quote(k.path) + " must be an integer field, but it is " + quote(rt::name(k.type)));
        }
        f.history_key = k.path;
        return true;
    }

    // `dense = N`: the values a trace holds are N, N + 1, ... up to the largest, none left out.
    bool resolve_dense(const Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "dense");
        if (!src.property) return true;
        const auto* num = std::get_if<ast::Integer>(&src.property->value);
        if (!num || num->negative) {
            return value_error(*src.property, where_of(src.property->value), "'dense' takes the first value of the range, as in 'unit.dense = 0;'");
        }
        if (f.type != ir::Type::unsigned_int || f.scale != 0) {
            const std::string what = f.scale ? "has scale " + std::to_string(f.scale) : "is " + quote(rt::name(f.type));
            return field_error(num->where, "'dense' applies to unsigned fields without a scale; " + describe(f) + " " + what);
        }
        f.rules.dense = num->magnitude;
        return true;
    }

    // `ctype = "long"`: the C type whose size each native form gives the field.
    bool resolve_ctype(const Node* leaf, ir::Field& f) {
        const Source src = find_property(leaf, "ctype");
        out_.ctype_at[f.index] = src.property ? where_of(src.property->value) : leaf->where;
        if (!src.property) return true;
        const auto* s = std::get_if<ast::String>(&src.property->value);
        const bool identifier = s && !s->value.empty() && !std::isdigit(static_cast<unsigned char>(s->value[0])) &&
                                std::all_of(s->value.begin(), s->value.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
        if (!identifier) return value_error(*src.property, where_of(src.property->value), "'ctype' takes the name of a C type as a string, as in 'time.ctype = \"long\";'");
        if (f.type == ir::Type::bytes && !f.width_from) {
            return field_error(s->where, describe(f) + " has a fixed width, which is its size in a native form; 'ctype' is for numbers and for bytes whose length a field gives");
        }
        f.ctype = s->value;
        return true;
    }

    // ---- layout

    std::vector<ir::LayoutItem> layout(Node* n) {
        std::vector<ir::LayoutItem> items;
        for (auto& c : n->children) {
            if (c->kind == Node::Kind::leaf) {
                items.emplace_back(c->index);
            } else if (c->kind == Node::Kind::repeat) {
                ir::Repeat r;
                r.count = repeat_count(c.get());
                r.items = layout(c.get());
                items.emplace_back(std::move(r));
            } else {
                for (auto& item : layout(c.get())) items.push_back(std::move(item));
            }
        }
        return items;
    }

    std::uint32_t repeat_count(Node* repeat) {
        const auto leaves = leaves_of(repeat);
        if (leaves.empty()) return 0;
        Node* target = referenced_leaf(Source{nullptr, repeat->written_in}, repeat->count, {*repeat->count}, leaves.front(),
                                       "the repeat count");
        if (!target) {
            out_.ok = false;
            return 0;
        }
        if (auto problem = count_problem(out_.fields[target->index])) {
            reference_error({repeat->count, Finding::count}, repeat->count->where,
                            "the repeat count " + quote(repeat->count->text) +
                                " must be a plain unsigned integer field, but " + *problem);
            out_.ok = false;
        }
        return target->index;
    }

    Expansion& x_;
    const ir::Schema& schema_;
    Reporter& report_;
    ResolvedFields out_;
    std::vector<std::pair<std::uint32_t, Location>> interned_;  // the intern fields and where each is set
    std::set<std::uint32_t> failed_;  // fields already reported as wrong
};

}  // namespace

ResolvedFields resolve_fields(Expansion& x, const ir::Schema& schema, Reporter& report) {
    return FieldResolver(x, schema, report).run();
}

}  // namespace metatf::front::stage
