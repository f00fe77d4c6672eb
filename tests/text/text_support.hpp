// Helpers for the text-form tests: read a text into owned record structs,
// write structs back to text, and catch the message of a refused text or record.
#pragma once

#include <deque>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include <metatf/io/writer.hpp>
#include <metatf/typed/forms.hpp>

#include "random_trace.hpp"

namespace metatf::test {

inline std::string as_string(std::span<const std::byte> bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Copies the bytes a record's fields view into `arena`, so that the record
// outlives the reader's line buffer.
struct Owner {
    std::deque<std::string>& arena;

    void field(std::uint32_t, std::uint64_t&) {}
    void field(std::uint32_t, std::int64_t&) {}
    void field(std::uint32_t, std::span<const std::byte>& v) { v = rt::as_bytes(arena.emplace_back(as_string(v))); }
    template <typename Elements, typename Body>
    void repeat(std::uint32_t, Elements& elements, Body&& body) {
        for (auto& e : elements) body(e);
    }
};

// The structs of a DTD's own records; the predefined records have no visit_fields().
template <typename T>
concept OwnRecord = requires(T& r, Owner& v) { visit_fields(r, v); };

// The record structs read from a text, in order.
template <typename Records>
struct Parsed {
    std::vector<typename variant_of<Records>::type> records;
    std::deque<std::string> arena;  // what the records' bytes fields view
    std::uint64_t skipped = 0;
    std::string first_skipped;

    template <typename T>
    const T& at(std::size_t i) const {
        REQUIRE(i < records.size());
        const T* r = std::get_if<T>(&records[i]);
        REQUIRE(r != nullptr);
        return *r;
    }
};

// A generated TextReader's record tuple (its base is TypedFormReader<Records, rt::TextReader>).
template <typename Records>
Records records_of(const rt::TypedFormReader<Records, rt::TextReader>&);
template <typename TextReader>
using RecordsOf = decltype(records_of(std::declval<TextReader&>()));

// Reads `text` with a generated TextReader; TextError propagates.
template <typename TextReader>
Parsed<RecordsOf<TextReader>> parse(const std::string& text, rt::TextReadOptions options = {}) {
    Parsed<RecordsOf<TextReader>> out;
    std::istringstream in(text);
    TextReader reader(in, options);
    while (reader.visit([&](const auto& record) {
        auto& owned = out.records.emplace_back(record);
        std::visit(
            [&](auto& r) {
                Owner owner{out.arena};
                if constexpr (OwnRecord<std::decay_t<decltype(r)>>) visit_fields(r, owner);
            },
            owned);
    })) {
    }
    out.skipped = reader.runtime().skipped();
    out.first_skipped = reader.runtime().first_skipped();
    return out;
}

// The message of the TextError reading `text` raises, or "" when it reads.
template <typename TextReader>
std::string read_error(const std::string& text) {
    try {
        parse<TextReader>(text);
    } catch (const rt::TextError& e) {
        return e.what();
    }
    return "";
}

// Writes records with a generated TextWriter.
template <typename TextWriter, typename Records>
std::string write_text(const Parsed<Records>& parsed) {
    std::ostringstream out;
    TextWriter writer(out);
    for (const auto& any : parsed.records) {
        std::visit(
            [&](const auto& r) {
                if constexpr (OwnRecord<std::decay_t<decltype(r)>>) writer.write(r);
            },
            any);
    }
    writer.close();
    return out.str();
}

// The message of the TextError writing `record` raises, or "" when it is written.
template <typename TextWriter, typename Record>
std::string write_error(const Record& record) {
    std::ostringstream out;
    TextWriter writer(out);
    try {
        writer.write(record);
    } catch (const rt::TextError& e) {
        return e.what();
    }
    return "";
}

}  // namespace metatf::test
