// Records read into arrays, a field a column: the DTD-driven path for tools
// that want a record type's values as arrays (the Python module), with no
// call per value. Records it cannot read this way are left to the caller,
// who reads them with decode_values() and put().
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "metatf/io/generic.hpp"
#include "metatf/io/reader.hpp"

namespace metatf::rt {

// A bytes field's column: a code per row into the distinct values, numbered
// in order of first appearance, so that a string of few values (a host, an
// operation) is kept once and becomes a categorical without a copy per row.
class StringColumn {
public:
    void put(std::span<const std::byte> value) { codes_.push_back(code_of(value)); }
    // The string of code `code` in an intern field's table (StringTable),
    // which the reader has emptied `epoch` times (TraceReader::segment_starts()):
    // the column's code for each table code is looked up once per segment.
    void put(const StringTable& table, std::uint64_t code, std::uint64_t epoch) {
        if (&table != table_ || epoch != epoch_) {
            table_ = &table;
            epoch_ = epoch;
            from_table_.clear();
        }
        if (code >= from_table_.size()) from_table_.resize(code + 1, -1);
        std::int32_t& c = from_table_[code];
        if (c < 0) c = code_of(table.at(code));
        codes_.push_back(c);
    }
    const std::vector<std::int32_t>& codes() const { return codes_; }
    const std::vector<std::string>& distinct() const { return distinct_; }
    // Appends `other`'s rows after this column's, its codes renumbered.
    void append(const StringColumn& other);

private:
    // The value's code: the one it has, or the next.
    std::int32_t code_of(std::span<const std::byte> value);
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
    };
    std::vector<std::int32_t> codes_;
    std::vector<std::string> distinct_;
    std::unordered_map<std::uint64_t, std::int32_t> short_;  // strings of up to 7 bytes, by put()'s key
    std::unordered_map<std::string, std::int32_t, Hash, std::equal_to<>> index_;
    const StringTable* table_ = nullptr;  // put(table, ...): the table from_table_ maps, as of epoch_
    std::uint64_t epoch_ = 0;
    std::vector<std::int32_t> from_table_;  // the column's code of each table code, -1 before its first row
};

// Where the rows of one record type go: row r of a kept integer field as a
// uint64 (a signed one in two's complement) at data + r * stride, of a float
// field as a double, and the record's position in the trace (record_index())
// likewise. The caller owns the memory and makes room for every row.
class ColumnTarget {
public:
    explicit ColumnTarget(const RecordDesc& r);

    // Keeps field `field` (an integer or float field outside repeated groups).
    void keep(std::uint32_t field, std::byte* data, std::size_t stride);
    // Keeps bytes field `field` (outside repeated groups) in `column`.
    void keep(std::uint32_t field, StringColumn& column);
    void keep_index(std::byte* data, std::size_t stride) { index_ = {0, Type::unsigned_int, data, stride}; }
    std::uint64_t rows() const { return rows_; }

    // A row read field by field: begin_row() with its position, then put()
    // each value (decode_values() hands them in layout order).
    void begin_row(std::uint64_t index) {
        ++rows_;
        if (index_.data) store(index_, index);
    }
    void put(const GenericValue& v);

    // A sectionStride field (RecordPlan::strided): its value is `before`
    // bytes past where its section's cursor was at the record's start.
    struct Strided {
        std::uint8_t section = 0;
        std::uint32_t width = 0;
        std::uint64_t before = 0;
    };
    // A section the record's strided fields read: the first `need` bytes
    // from its cursor hold their values, and the cursor moves `step`.
    struct SectionUse {
        std::uint8_t section = 0;
        std::uint64_t need = 0, step = 0;
    };

private:
    friend std::uint64_t read_columns(TraceReader&, std::span<ColumnTarget* const>, std::uint64_t);
    struct Kept {
        std::uint32_t field = 0;
        Type type = Type::unsigned_int;
        std::byte* data = nullptr;  // null: not kept
        std::size_t stride = 0;
        StringColumn* strings = nullptr;  // a bytes field's, if kept
    };
    bool groups_empty(const FieldState* states, const std::byte* p) const;
    // Finds plain_, strided_ and uses_ for the encodings `states` has now.
    void prepare(const FieldState* states, const RecordPlan& plan);
    // Reads records of this plain type (plain_) from `pos`, one after another
    // while they are: at most `most`, the first numbered `index`, each with
    // the 8 bytes of slack its loads need before `end`. Returns how many.
    std::uint64_t read_plain(FieldState* states, const RecordPlan& plan, const std::byte* pos, const std::byte* end,
                             std::uint64_t index, std::uint64_t most);
    // `length`: the bytes of field `stretch` (RecordPlan::stretch), which move the fields after it.
    bool counts_answerable(TraceReader& reader, const FieldState* states, const std::byte* p, std::int32_t stretch,
                           std::size_t length) const;
    void store(const Kept& k, std::uint64_t bits) const { std::memcpy(k.data + (rows_ - 1) * k.stride, &bits, 8); }

    const RecordDesc* record_;
    std::vector<Kept> steps_;            // the fields outside groups, in layout order
    std::vector<std::uint32_t> counts_;  // the count fields of the groups outside groups
    std::vector<Kept> by_field_;         // per field
    Kept index_;
    std::uint64_t rows_ = 0;
    const FieldState* prepared_for_ = nullptr;  // the states prepare() saw, in this read_columns()
    bool plain_ = false;
    std::vector<Strided> strided_;  // the strided fields, in layout order
    std::vector<SectionUse> uses_;
};

// Reads records from the reader's position to the end of its chunk, or to
// record `stop`, while each is of a type with a target (targets[slot], null
// for none) whose layout is fixed now, but for one string's bytes and fields
// read from sections at most (RecordPlan::fixed, stretch and strided), and
// the tag is one byte wide. Stops before any other record (predefined ones, a
// live field's escape, a group that repeats, a strided value past its
// section's loaded chunk), which the caller reads field by field.
// Values and errors are those of decode_values(). Returns the records read.
std::uint64_t read_columns(TraceReader& reader, std::span<ColumnTarget* const> targets, std::uint64_t stop);

}  // namespace metatf::rt
