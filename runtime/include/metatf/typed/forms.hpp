// A DTD's native forms for generated code: record structs to and from lines
// of the text form (text.hpp) or records of the native binary form
// (native.hpp), through the runtime's one implementation of each. A generated
// header passes its `Records` tuple and its structs' visit_fields(), which
// this file finds by argument-dependent lookup.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "metatf/forms/native.hpp"
#include "metatf/forms/text.hpp"
#include "metatf/typed.hpp"

namespace metatf::rt {

namespace detail {

// Copies values in layout order into a record struct's members.
struct FromGeneric {
    const std::vector<GenericValue>& values;
    std::size_t pos = 0;
    std::vector<std::uint64_t> last{};  // per field index: its value, for repeat counts

    template <typename Member>
    void field(std::uint32_t index, Member& m) {
        if (pos == values.size() || values[pos].field != index) {
            throw TraceError(ErrorKind::usage, "a record's values do not follow its layout");
        }
        const GenericValue& v = values[pos++];
        if constexpr (std::is_same_v<Member, std::span<const std::byte>>) {
            m = v.bytes;
        } else if constexpr (std::is_floating_point_v<Member>) {
            m = v.real;
        } else {
            m = static_cast<Member>(v.integer);
        }
        if (last.size() <= index) last.resize(index + 1);
        last[index] = v.integer;
    }

    template <typename Elements, typename Body>
    void repeat(std::uint32_t count, Elements& elements, Body&& body) {
        elements.resize(last[count]);
        for (auto& e : elements) body(e);
    }
};

template <typename Record>
concept HasFields = requires(Record& r, FromGeneric& v) { visit_fields(r, v); };

}  // namespace detail

// Reads a file in one of the DTD's native forms as the structs of a
// generated header; `Source` is TextReader or NativeReader.
template <typename Records, typename Source>
class TypedFormReader {
public:
    template <typename... Args>
    explicit TypedFormReader(Args&&... args) : source_(std::forward<Args>(args)...) {}

    // Reads the next record and calls v(record) with its struct (not for a
    // predefined record, such as a native header's comment); false at the end.
    // Throws what Source throws for input that is not a record.
    template <typename Visitor>
    bool visit(Visitor&& v) {
        if (!source_.next(record_)) return false;
        dispatch(v, std::make_index_sequence<std::tuple_size_v<Records>>{});
        return true;
    }

    Source& runtime() { return source_; }

private:
    template <typename Visitor, std::size_t... I>
    void dispatch(Visitor& v, std::index_sequence<I...>) {
        static_cast<void>(((record_.slot == I ? (call<I>(v), true) : false) || ...));  // stops at the record's slot
    }

    template <std::size_t I, typename Visitor>
    void call(Visitor& v) {
        using Record = std::tuple_element_t<I, Records>;
        if constexpr (detail::HasFields<Record>) {  // the predefined records have no struct of their own
            Record& out = std::get<I>(structs_);
            detail::FromGeneric from{record_.values};
            visit_fields(out, from);
            v(std::as_const(out));
        }
    }

    Source source_;
    GenericRecord record_;
    Records structs_;
};

// Writes the structs of a generated header in one of its native forms;
// `Sink` is TextWriter or NativeWriter.
template <typename Records, typename Sink>
class TypedFormWriter {
public:
    template <typename... Args>
    explicit TypedFormWriter(Args&&... args) : sink_(std::forward<Args>(args)...) {}

    template <typename Record>
    void write(const Record& record) {
        record_.slot = static_cast<std::uint32_t>(Record::type);
        record_.values.clear();
        detail::members(record, detail::ToGeneric{record_.values});
        sink_.write(record_);
    }
    void close() { sink_.close(); }

    Sink& runtime() { return sink_; }

private:
    Sink sink_;
    GenericRecord record_;
};

}  // namespace metatf::rt
