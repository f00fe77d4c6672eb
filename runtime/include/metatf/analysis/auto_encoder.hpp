// Chooses encodings from the data: records are held back a window at a time,
// each field of each record type gets the interpretation and width that
// store the window's values in the fewest bytes (or, when the trace is
// compressed, in the fewest bytes after compression), and the metadata that
// sets them is written before the window's records. Used by mtf recode and
// mtf convert (--encoding auto); the algorithm is in docs/compactness.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "metatf/io/generic.hpp"

namespace metatf::rt {

// Whether and how the encoder makes fields references to values other
// fields took before (a free's address is an allocation's: docs/compactness.md).
enum class References : std::uint8_t {
    none,     // never: every field stores its own value (faster to read)
    live,     // `live P`: a value not in the pool follows its escape in 8 bytes
    // `predict P S`: one not in the pool is a prediction or a difference
    // from the last such value; fields that are no references may be
    // `predict 0 S` too
    predict,
};

class AutoEncoder {
public:
    static constexpr std::size_t default_window = 16384;

    // `window`: records held back before their encodings are chosen. Memory
    // is bounded by it (and the bytes fields' data); the output depends only
    // on the records and the window, so it is the same on every run.
    // `references`: whether fields may refer to live values, and how
    // (smaller, slower to read: docs/compactness.md).
    explicit AutoEncoder(TraceWriter& writer, std::size_t window = default_window, References references = References::predict);
    AutoEncoder(const AutoEncoder&) = delete;
    AutoEncoder& operator=(const AutoEncoder&) = delete;

    // A record of a user-defined type, or a comment, as encode_generic() takes it. Its
    // bytes fields are copied: the spans need not outlive the call.
    void write(const GenericRecord& record);
    void comment(std::string_view text);
    void section(std::uint8_t number);
    // Chooses encodings for what is held back and writes it. Call before
    // TraceWriter::close(); write() flushes by itself every `window` records.
    void flush();

private:
    struct Event {
        enum Kind : std::uint8_t { record, comment, section } kind;
        std::uint32_t slot = 0;       // record: its type; section: the number
        std::size_t first = 0;        // record: its first value in values_; comment: its text in bytes_
        std::size_t count = 0;        // values, or the comment's length
    };
    struct Change;  // metadata to write before a record type's first record in the window

    std::vector<Change> plan() const;
    void replay(const std::vector<Change>& changes);

    TraceWriter& writer_;
    std::size_t window_;
    References references_;
    std::vector<Event> events_;
    std::vector<GenericValue> values_;   // their spans are empty: a bytes value's data is in bytes_
    std::vector<std::size_t> offsets_;   // per value: where its data starts in bytes_
    std::vector<std::size_t> sizes_;     // per value: its data's size
    std::vector<std::byte> bytes_;
    std::size_t records_ = 0;
};

}  // namespace metatf::rt
