// Stage 5: the checks across records: tags, and properties that no field reads.
#include "resolve_stages.hpp"

#include <algorithm>

namespace metatf::front::stage {

namespace {

void claim_tag(std::map<std::uint64_t, const TagSite*>& tags, const TagSite& site, Reporter& report) {
    auto [it, fresh] = tags.emplace(site.tag, &site);
    if (fresh) return;
    const TagSite& other = *it->second;
    const Location& at = std::get<ast::Integer>(site.property->value).where;
    if (other.predefined) {
        report.error(at, "tag " + std::to_string(site.tag) + " is reserved for the predefined record " + quote(other.record));
        return;
    }
    Reporter::note(&report.error(at, "tag " + std::to_string(site.tag) + " is already used by record " + quote(other.record)),
                   std::get<ast::Integer>(other.property->value).where, "record " + quote(other.record) + " takes it here");
}

}  // namespace

std::optional<std::uint64_t> resolve_tag_value(const ast::Property& p, std::uint32_t tag_width, Reporter& report) {
    const auto* num = std::get_if<ast::Integer>(&p.value);
    if (!num || (num->negative && num->magnitude != 0)) {
        report.error(where_of(p.value), "'tag.value' takes a non-negative integer");
        return std::nullopt;
    }
    if (tag_width < 8 && num->magnitude >> (8 * tag_width) != 0) {
        report.error(num->where, "tag " + num->text + " does not fit in the " + std::to_string(tag_width) +
                                     "-byte tag (set a wider 'tag.width')");
        return std::nullopt;
    }
    return num->magnitude;
}

void check_tags(std::vector<TagSite>& sites, const Scopes& scopes, Reporter& report) {
    // In the order written, the predefined records first: the later of two records is the one reported.
    std::stable_sort(sites.begin(), sites.end(), [](const TagSite& a, const TagSite& b) {
        const Location& l = a.property->target.front().where;
        const Location& r = b.property->target.front().where;
        const bool lp = l.file->name == "<predefined>", rp = r.file->name == "<predefined>";
        if (lp != rp) return lp;
        return l.line != r.line ? l.line < r.line : l.column < r.column;
    });
    std::map<std::uint64_t, const TagSite*> global_tags;
    for (const TagSite& site : sites) {
        if (site.scope == &scopes.global) claim_tag(global_tags, site, report);
    }
    for (const Scope& section : scopes.sections) {
        auto tags = global_tags;
        for (const TagSite& site : sites) {
            if (site.scope == &section) claim_tag(tags, site, report);
        }
    }
}

void check_unused_properties(const Scopes& scopes, Reporter& report) {
    for (const Scope* scope : scopes.all) {
        for (const auto& [k, sp] : scope->properties) {
            if (sp.used) continue;
            const std::string& kind = sp.property->target.front().text;
            report.warning(sp.property->target.front().where,
                           quote(k) + " has no effect: no field of the records " +
                               (scope->parent ? "of section " + quote(scope->name) : std::string("defined here")) +
                               " is named " + quote(kind));
        }
    }
}

}  // namespace metatf::front::stage
