// Random text round trips: random records of every record type that a text
// form can hold, written with TextWriter, read back with TextReader and
// compared field by field, then written again byte for byte.
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <lackey.hpp>
#include <laplace.hpp>
#include <ptf.hpp>
#include <spc.hpp>

#include "text_support.hpp"

namespace rt = metatf::rt;
using metatf::test::OwnRecord;
using metatf::test::Parsed;
using metatf::test::parse;
using metatf::test::Random;
using metatf::test::RecordsOf;
using metatf::test::write_text;

namespace {

// Fills a record struct through visit_fields() with values its text form
// holds: counts and lengths small and equal to what they count, a character
// field's value one of its characters, bytes without line breaks, without the
// separator when the field is a token, and without blanks at the ends under a
// blank separator (which the reader cannot tell from separators).
class TextFiller {
public:
    TextFiller(Random& random, const rt::DtdDesc& dtd, std::uint32_t slot, std::deque<std::string>& arena)
        : random_(random),
          record_(dtd.records[slot]),
          text_(dtd.text_form->records[slot]),
          blank_separator_(std::string_view(dtd.text_form->separator) == " "),
          separator_(dtd.text_form->separator),
          arena_(arena) {
        for (std::uint32_t i = 0; i < record_.layout_count; ++i) {
            if (record_.layout[i].op == rt::LayoutStep::repeat) counts_.insert(record_.layout[i].index);
        }
        for (std::uint32_t f = 0; f < record_.field_count; ++f) {
            const std::int32_t length = record_.fields[f].width_from;
            if (length != rt::no_field) lengths_.insert(static_cast<std::uint32_t>(length));
        }
    }

    void field(std::uint32_t i, std::uint64_t& v) { v = number(i); }
    void field(std::uint32_t i, std::int64_t& v) { v = static_cast<std::int64_t>(number(i)); }
    void field(std::uint32_t i, std::span<const std::byte>& v) {
        const rt::FieldDesc& f = record_.fields[i];
        const bool sized = f.width_from != rt::no_field;
        const auto length = static_cast<std::uint32_t>(f.width_from);
        const bool token = text_.fields[i].format == rt::TextFormat::string && sized &&
                           text_.fields[length].format == rt::TextFormat::omit;
        std::string banned = "\r\n";
        if (token) banned += blank_separator_ ? " \t" : separator_;
        std::string& s = arena_.emplace_back(sized ? last_[length] : f.initial.width, 'x');
        for (char& c : s) {
            do {
                c = static_cast<char>(random_.below(256));
            } while (banned.find(c) != std::string::npos);
        }
        if (blank_separator_ && (s.front() == ' ' || s.front() == '\t')) s.front() = 'x';
        if (blank_separator_ && (s.back() == ' ' || s.back() == '\t')) s.back() = 'x';
        v = rt::as_bytes(s);
    }
    template <typename Elements, typename Body>
    void repeat(std::uint32_t count, Elements& elements, Body&& body) {
        elements.resize(last_[count]);
        for (auto& e : elements) body(e);
    }

private:
    std::uint64_t number(std::uint32_t i) {
        std::uint64_t v;
        if (counts_.count(i)) {
            v = random_.below(4);
        } else if (lengths_.count(i)) {
            v = (blank_separator_ ? 1 : 0) + random_.below(12);  // a blank separator cannot show an empty string
        } else if (text_.fields[i].format == rt::TextFormat::chars) {
            v = random_.below(std::string_view(text_.fields[i].chars).size());
        } else {
            v = random_.chance(50) ? random_.below(1000) : random_.bits();
        }
        last_[i] = v;
        return v;
    }

    Random& random_;
    const rt::RecordDesc& record_;
    const rt::TextRecordDesc& text_;
    bool blank_separator_;
    std::string_view separator_;
    std::deque<std::string>& arena_;
    std::set<std::uint32_t> counts_, lengths_;
    std::map<std::uint32_t, std::uint64_t> last_;
};

// Adds a random record of the type in `slot` to `out`.
template <typename Records, std::size_t... I>
void add_random(Parsed<Records>& out, Random& random, const rt::DtdDesc& dtd, std::uint32_t slot,
                std::index_sequence<I...>) {
    const auto add = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        using T = std::tuple_element_t<K, Records>;
        if constexpr (OwnRecord<T>) {
            if (slot != K) return;
            TextFiller filler(random, dtd, slot, out.arena);
            T record{};
            visit_fields(record, filler);
            out.records.emplace_back(std::move(record));
        }
    };
    (add(std::integral_constant<std::size_t, I>{}), ...);
}

template <typename TextReader, typename TextWriter>
void random_round_trips(const rt::DtdDesc& dtd) {
    using Records = RecordsOf<TextReader>;
    std::vector<std::uint32_t> slots;  // the records with a text form
    for (std::uint32_t slot = 0; slot < dtd.record_count; ++slot) {
        if (dtd.text_form->records[slot].mnemonic) slots.push_back(slot);
    }
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        CAPTURE(seed);
        Random random(seed);
        Parsed<Records> written;
        for (int i = 0; i < 1000; ++i) {
            const std::uint32_t slot = slots[random.below(slots.size())];
            add_random(written, random, dtd, slot, std::make_index_sequence<std::tuple_size_v<Records>>{});
        }
        const std::string text = write_text<TextWriter>(written);
        const auto read = parse<TextReader>(text);
        REQUIRE(read.records.size() == written.records.size());
        for (std::size_t i = 0; i < read.records.size(); ++i) {
            CAPTURE(i);
            REQUIRE(read.records[i].index() == written.records[i].index());
            std::visit(
                [&](const auto& got) {
                    using T = std::decay_t<decltype(got)>;
                    if constexpr (OwnRecord<T>) CHECK(got == std::get<T>(written.records[i]));
                },
                read.records[i]);
        }
        CHECK(write_text<TextWriter>(read) == text);
    }
}

}  // namespace

TEST_CASE("random SPC records of every type round-trip through the text form") {
    random_round_trips<spc::TextReader, spc::TextWriter>(spc::dtd);
}

TEST_CASE("random PTF records of every type round-trip through the text form") {
    random_round_trips<ptf::TextReader, ptf::TextWriter>(ptf::dtd);
}

TEST_CASE("random Laplace records of every type round-trip through the text form") {
    random_round_trips<laplace::TextReader, laplace::TextWriter>(laplace::dtd);
}

TEST_CASE("random Lackey records of every type round-trip through the text form") {
    random_round_trips<lackey::TextReader, lackey::TextWriter>(lackey::dtd);
}
