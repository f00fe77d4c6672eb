#include "parser.hpp"

#include <cctype>
#include <limits>
#include <string_view>
#include <vector>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "grammar.hpp"

namespace metatf::front {

namespace pegtl = tao::pegtl;
namespace g = grammar;
using Node = pegtl::parse_tree::node;

namespace {

// The rules that become nodes of the parse tree; everything else is folded away.
template <typename Rule>
using selector = pegtl::parse_tree::selector<
    Rule,
    pegtl::parse_tree::store_content::on<
        g::integer, g::default_arg, g::base_arg, g::delta_arg, g::initial_arg, g::stride_arg, g::section_arg,
        g::path_name, g::reference, g::interp_none, g::interp_default, g::interp_base_offset, g::interp_delta,
        g::interp_stride, g::interp_section_offset, g::interp_section_stride, g::interp_live, g::pool_arg, g::interp_predict, g::predict_pool, g::interp_intern, g::type_name, g::property_def,
        g::block_item, g::field_name, g::composite, g::repeat_tail, g::nested_tail, g::named_field, g::record_name,
        g::record_def, g::section_name, g::section_number, g::section_def, g::string_literal, g::ignore_case,
        g::text_chars, g::text_decimal, g::text_hex, g::digits_arg, g::text_upper, g::column_arg, g::text_left, g::text_string, g::text_line, g::text_omit, g::text_enum, g::text_clock, g::text_nested, g::tab_arg, g::text_def,
        g::text_setting_name, g::text_item, g::chars_arg, g::text_setting_value, g::native_def, g::native_item,
        g::native_setting_name, g::native_word, g::native_form_name, g::native_sizeof, g::native_ctype, g::native_numbers,
        g::native_number, g::native_next_number, g::name_list, g::named_value, g::named_value_name, g::named_value_number,
        g::order_value, g::order_kind, g::order_global, g::history_global, g::history_per, g::history_key, g::variant_def, g::variant_name, g::variant_item>>;

// Counts how deeply fields nest and refuses to go past the limit.
struct field_depth_guard : pegtl::maybe_nothing {
    template <typename Rule, pegtl::apply_mode A, pegtl::rewind_mode M, template <typename...> class Action,
              template <typename...> class Control, typename Input, typename... States>
    static bool match(Input& in, States&&... st) {
        struct guard {
            std::size_t& depth;
            explicit guard(std::size_t& d) : depth(++d) {}
            ~guard() { --depth; }
        } g(in.private_depth);
        if (in.private_depth > g::max_field_depth) throw pegtl::parse_error(g::too_deep_message, in);
        return pegtl::match<Rule, A, M, Action, Control>(in, st...);
    }
};

template <typename Rule>
struct action : pegtl::nothing<Rule> {};
template <>
struct action<g::field> : field_depth_guard {};

// ---- parse tree to syntax tree ----------------------------------------------------

class Builder {
public:
    Builder(std::shared_ptr<const SourceFile> source, Diagnostics& diags) : source_(std::move(source)), diags_(diags) {}

    bool failed() const { return failed_; }

    // Adds a top-level item (a global_item's node) to `out`.
    void add(ast::Dtd& out, const Node& item) {
        if (item.is_type<g::section_def>()) {
            out.sections.push_back(section(item));
        } else if (item.is_type<g::text_def>()) {
            out.text_blocks.push_back(text_block(item));
        } else if (item.is_type<g::native_def>()) {
            out.native_blocks.push_back(native_block(item));
        } else if (item.is_type<g::variant_def>()) {
            out.variants.push_back(variant(item));
        } else if (item.is_type<g::property_def>()) {
            out.properties.push_back(property(item));
        } else {
            out.records.push_back(record(item));
        }
    }

private:
    Location where(const Node& n) const {
        const pegtl::position p = n.begin();
        return Location{source_, p.line, p.column};
    }

    ast::Name name(const Node& n) const { return ast::Name{n.string(), where(n)}; }

    ast::Integer integer(const Node& n) {
        ast::Integer out;
        out.text = n.string();
        out.where = where(n);
        std::string_view digits = out.text;
        if (!digits.empty() && digits.front() == '-') {
            out.negative = true;
            digits.remove_prefix(1);
        }
        unsigned base = 10;
        if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
            base = 16;
            digits.remove_prefix(2);
        }
        constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
        for (char c : digits) {
            const unsigned d = c <= '9' ? unsigned(c - '0') : unsigned((c | 0x20) - 'a' + 10);
            if (out.magnitude > (max - d) / base) {
                diags_.error(out.where, "integer '" + out.text + "' does not fit in 64 bits");
                failed_ = true;
                out.magnitude = 0;
                return out;
            }
            out.magnitude = out.magnitude * base + d;
        }
        return out;
    }

    ast::SectionRef section_ref(const Node& n) {
        if (!n.children.empty()) return integer(*n.children.front());
        return name(n);
    }

    ast::InterpretationPtr interpretation(const Node& n, ast::InterpretationKind kind) {
        auto out = std::make_unique<ast::Interpretation>();
        out->kind = kind;
        out->where = where(n);
        for (const auto& arg : n.children) {
            if (arg->is_type<g::section_arg>()) {
                out->section = section_ref(*arg);
            } else if (arg->is_type<g::stride_arg>()) {
                out->step = integer(*arg);
            } else {
                out->first = integer(*arg);
            }
        }
        return out;
    }

    // The string between the quotes, escapes decoded (the grammar has checked them).
    ast::String string(const Node& n) const {
        const std::string raw = n.string();
        ast::String out{{}, where(n)};
        for (std::size_t i = 1; i + 1 < raw.size(); ++i) {
            if (raw[i] != '\\') {
                out.value += raw[i];
                continue;
            }
            const char code = raw[++i];
            if (code == 'x') {
                out.value += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
                i += 2;
            } else {
                out.value += code == 'n' ? '\n' : code == 't' ? '\t' : code;
            }
        }
        return out;
    }

    ast::TextFormat text_format(const Node& n) {
        using K = ast::TextFormatKind;
        ast::TextFormat out;
        out.where = where(n);
        if (n.is_type<g::text_chars>()) {
            out.kind = K::chars;
            out.chars = string(*n.children.front());
        } else {
            out.kind = n.is_type<g::text_decimal>() ? K::decimal
                       : n.is_type<g::text_hex>()   ? K::hex
                       : n.is_type<g::text_string>() ? K::string
                       : n.is_type<g::text_line>()  ? K::line
                       : n.is_type<g::text_enum>()  ? K::enumeration
                       : n.is_type<g::text_clock>() ? K::clock
                       : n.is_type<g::text_nested>() ? K::nested
                                                    : K::omit;
        }
        for (const auto& c : n.children) {
            if (c->is_type<g::digits_arg>()) out.digits = integer(*c);
            if (c->is_type<g::column_arg>()) out.column = integer(*c);
            if (c->is_type<g::tab_arg>()) out.tab = integer(*c);
            out.ignore_case = out.ignore_case || c->is_type<g::ignore_case>();
            out.upper = out.upper || c->is_type<g::text_upper>();
            out.left = out.left || c->is_type<g::text_left>();
        }
        return out;
    }

    ast::NativeBlock native_block(const Node& n) {
        ast::NativeBlock out{where(n), std::nullopt, {}};
        for (const auto& item : n.children) {
            if (item->is_type<g::native_form_name>()) {
                out.name = name(*item);
                continue;
            }
            const Node& key = *item->children[0];
            const Node& v = *item->children[1];
            ast::NativeSetting s{name(key), std::nullopt, ast::Name{}};
            if (key.is_type<g::native_sizeof>()) {
                s.name = ast::Name{"sizeof", where(key)};
                s.of = name(*key.children[0]);
            }
            if (v.is_type<g::native_numbers>()) {
                std::vector<ast::Integer> numbers;
                for (const auto& number : v.children) numbers.push_back(integer(*number));
                if (numbers.size() == 1) {
                    s.value = std::move(numbers.front());
                } else {
                    s.value = std::move(numbers);
                }
            } else if (v.is_type<g::string_literal>()) {
                s.value = string(v);
            } else {
                s.value = name(v);
            }
            out.settings.push_back(std::move(s));
        }
        return out;
    }

    ast::TextBlock text_block(const Node& n) const {
        ast::TextBlock out{where(n), {}};
        for (const auto& setting : n.children) {
            out.settings.push_back({name(*setting->children[0]), string(*setting->children[1])});
        }
        return out;
    }

    ast::Value value(const Node& n) {
        using K = ast::InterpretationKind;
        if (n.is_type<g::integer>()) return integer(n);
        if (n.is_type<g::string_literal>()) return string(n);
        if (n.is_type<g::text_chars>() || n.is_type<g::text_decimal>() || n.is_type<g::text_hex>() ||
            n.is_type<g::text_string>() || n.is_type<g::text_line>() || n.is_type<g::text_omit>() || n.is_type<g::text_enum>() ||
            n.is_type<g::text_clock>() || n.is_type<g::text_nested>()) {
            return text_format(n);
        }
        if (n.is_type<g::type_name>()) return ast::TypeName{name(n)};
        if (n.is_type<g::name_list>()) return name_list(n);
        if (n.is_type<g::order_value>()) {
            return ast::OrderValue{*rt::from_name<rt::Order>(n.children[0]->string_view()), n.children.size() > 1, where(n)};
        }
        if (n.is_type<g::history_global>()) return ast::HistoryValue{std::nullopt, where(n)};
        if (n.is_type<g::history_per>()) return ast::HistoryValue{name(*n.children[0]), where(n)};
        if (n.is_type<g::reference>()) {
            ast::Reference ref;
            for (const auto& part : n.children) ref.path.push_back(name(*part));
            ref.property = std::move(ref.path.back());
            ref.path.pop_back();
            return ref;
        }
        if (n.is_type<g::interp_none>()) return interpretation(n, K::none);
        if (n.is_type<g::interp_default>()) return interpretation(n, K::default_value);
        if (n.is_type<g::interp_base_offset>()) return interpretation(n, K::base_offset);
        if (n.is_type<g::interp_delta>()) return interpretation(n, K::delta);
        if (n.is_type<g::interp_stride>()) return interpretation(n, K::stride);
        if (n.is_type<g::interp_section_offset>()) return interpretation(n, K::section_offset);
        if (n.is_type<g::interp_live>()) return interpretation(n, K::live);
        if (n.is_type<g::interp_predict>()) return interpretation(n, K::predict);
        if (n.is_type<g::interp_intern>()) return interpretation(n, K::intern);
        return interpretation(n, K::section_stride);
    }

    ast::NameList name_list(const Node& n) {
        ast::NameList out{where(n), {}};
        for (const auto& item : n.children) out.items.push_back({name(*item->children[0]), integer(*item->children[1])});
        return out;
    }

    // Children: the target's names, the property name, then the value.
    ast::Property property(const Node& n) {
        ast::Property out;
        const std::size_t names = n.children.size() - 2;
        out.target.reserve(names);  // exactly: a DTD may hold millions of properties
        for (std::size_t i = 0; i < names; ++i) out.target.push_back(name(*n.children[i]));
        out.property = name(*n.children[names]);
        out.value = value(*n.children.back());
        return out;
    }

    ast::FieldPtr field(const Node& n) {
        auto out = std::make_unique<ast::Field>();
        if (n.is_type<g::field_name>()) {
            out->node = ast::Field::Named{name(n)};
        } else if (n.is_type<g::composite>()) {
            ast::Field::Composite c{where(n), {}};
            for (const auto& member : n.children) c.members.push_back(field(*member));
            out->node = std::move(c);
        } else if (n.children.size() == 1) {  // named_field without a tail
            out->node = ast::Field::Named{name(*n.children[0])};
        } else if (const Node& tail = *n.children[1]; tail.is_type<g::repeat_tail>()) {
            out->node = ast::Field::Repeat{name(*n.children[0]), field(*tail.children.front())};
        } else {
            out->node = ast::Field::Nested{std::make_unique<ast::RecordDef>(record_parts(*n.children[0], tail, 0))};
        }
        return out;
    }

    // `name : field { block }`: the name, then a node whose children are the field and the block's items.
    // A record definition: its name, then its field and properties from parts.children[first] on.
    ast::RecordDef record_parts(const Node& name_node, const Node& parts, std::size_t first) {
        ast::RecordDef out;
        out.name = name(name_node);
        out.field = field(*parts.children[first]);
        for (std::size_t i = first + 1; i < parts.children.size(); ++i) out.properties.push_back(property(*parts.children[i]));
        return out;
    }

    ast::RecordDef record(const Node& n) { return record_parts(*n.children[0], n, 1); }

    ast::Variant variant(const Node& n) {
        ast::Variant out;
        out.name = name(*n.children[0]);
        for (std::size_t i = 1; i < n.children.size(); ++i) out.properties.push_back(property(*n.children[i]));
        return out;
    }

    ast::Section section(const Node& n) {
        ast::Section out;
        out.name = name(*n.children[0]);
        out.number = integer(*n.children[1]);
        for (std::size_t i = 2; i < n.children.size(); ++i) {
            const Node& item = *n.children[i];
            if (item.is_type<g::property_def>()) {
                out.properties.push_back(property(item));
            } else {
                out.records.push_back(record(item));
            }
        }
        return out;
    }

    std::shared_ptr<const SourceFile> source_;
    Diagnostics& diags_;
    bool failed_ = false;
};

// ---- recovery -------------------------------------------------------------------

struct Cursor {
    std::size_t offset = 0;
    std::size_t line = 1;
    std::size_t column = 1;
};

// Moves `c` to `target`, keeping line and column right.
void advance(Cursor& c, const std::string& text, std::size_t target) {
    for (; c.offset < target; ++c.offset) {
        if (text[c.offset] == '\n') {
            ++c.line;
            c.column = 1;
        } else {
            ++c.column;
        }
    }
}

// Where to resume after a syntax error at `error`: just past the end of the
// top-level item that holds it (a '}' at depth 0, and a ';' after it),
// or, outside braces, at the next line that starts in column 1 with a name
// (top-level items are written that way). A list of names ('= { a = 1 }')
// that is never closed ends at the ';' or line that would end its property.
// `start` is a point at brace depth 0.
std::size_t resume_point(const std::string& text, std::size_t start, std::size_t error) {
    std::vector<bool> open;  // per open brace: whether it opens a value's list of names
    std::size_t i = start;
    auto skip_comment = [&] {
        if (text.compare(i, 2, "//") == 0) {
            i = text.find('\n', i);
            if (i == std::string::npos) i = text.size();
            return true;
        }
        if (text.compare(i, 2, "/*") == 0) {
            const std::size_t end = text.find("*/", i + 2);
            i = end == std::string::npos ? text.size() : end + 2;
            return true;
        }
        return false;
    };
    auto opens_list = [&](std::size_t brace) {
        const std::size_t before = text.find_last_not_of(" \t\r\n", brace == 0 ? 0 : brace - 1);
        return brace > 0 && before != std::string::npos && text[before] == '=';
    };
    auto at_name = [&] { return i < text.size() && (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_'); };
    while (i < error && i < text.size()) {
        if (skip_comment()) continue;
        if (text[i] == '{') open.push_back(opens_list(i));
        if (text[i] == '}' && !open.empty()) open.pop_back();
        ++i;
    }
    i = error;
    while (i < text.size()) {
        if (skip_comment()) continue;
        const char c = text[i++];
        if (c == '{') open.push_back(opens_list(i - 1));
        if (c == '}') {
            if (!open.empty()) open.pop_back();
            if (!open.empty()) continue;
            // A property whose value is a brace list ends with the ';' after it.
            const std::size_t after = text.find_first_not_of(" \t\r\n", i);
            return after != std::string::npos && text[after] == ';' ? after + 1 : i;
        }
        const bool in_list = !open.empty() && open.back();
        if (c == ';' && (open.empty() || in_list)) {
            if (in_list) open.pop_back();
            if (open.empty()) return i;
        }
        if (c == '\n' && at_name() && (open.empty() || (open.size() == 1 && in_list))) return i;
    }
    return text.size();
}

constexpr std::size_t max_syntax_errors = 50;

}  // namespace

std::optional<ast::Dtd> parse_dtd(const std::shared_ptr<const SourceFile>& source, Diagnostics& diags) {
    const std::string& text = source->text;
    Builder builder(source, diags);
    ast::Dtd dtd;
    dtd.source = source;
    Cursor item;  // where the item being parsed starts, at brace depth 0
    std::size_t errors = 0;
    while (true) {
        pegtl::memory_input in(text.data() + item.offset, text.data() + text.size(), source->name, item.offset,
                               item.line, item.column);
        try {
            // Each item is built as soon as it parses (items past a syntax error
            // still report their own errors); dtd_item always matches.
            while (true) {
                const auto root = pegtl::parse_tree::parse<g::dtd_item, selector, action, g::control>(in);
                if (root->children.empty()) break;  // the end of the input
                builder.add(dtd, *root->children.front());
                item = Cursor{in.byte(), in.line(), in.column()};
            }
            if (errors != 0 || builder.failed()) return std::nullopt;
            return dtd;
        } catch (const pegtl::parse_error& e) {
            const pegtl::position& p = e.positions().front();
            diags.error(Location{source, p.line, p.column}, std::string(e.message()));
            if (++errors == max_syntax_errors) {
                diags.error(Location{source, p.line, p.column}, "too many syntax errors; stopping here");
                return std::nullopt;
            }
            const std::size_t next = resume_point(text, item.offset, p.byte);
            if (next >= text.size()) return std::nullopt;
            advance(item, text, next);
        }
    }
}

}  // namespace metatf::front
