// TypedReader<Codec>: the generated Reader (typed.hpp).
#pragma once

#include "metatf/analysis/rules.hpp"
#include "metatf/typed/layouts.hpp"

namespace metatf::rt {


// Reads a trace of a generated header's DTD: pull records with next(), or
// pass a visitor to visit(). Throws TraceError.
template <typename Codec>
class TypedReader {
public:
    using RecordType = typename Codec::RecordType;
    using Records = typename Codec::Records;

    explicit TypedReader(const std::string& path) : r_(path, Codec::dtd) {
        r_.set_fast_window(detail::fast_window<Codec>(slots()));
        for_each([&](auto& record) { set_constants(record); });
    }

    // Moves to the next record; false at the end of the trace.
    METATF_INLINE bool next() {
        return step([](const auto&) {});
    }
    RecordType type() const { return type_; }
    // The current record; valid until the next call of next().
    template <typename Record>
    const Record& get() const {
        return std::get<Record>(records_);
    }
    // Calls v(record) with the current record's struct.
    template <typename Visitor>
    void dispatch(Visitor&& v) const {
        with_slot(records_, static_cast<std::uint32_t>(type_), [&](const auto& record) { v(record); });
    }

    // Reads the rest of the trace, calling v(record) for every record.
    template <typename Visitor>
    void visit(Visitor&& v) {
        do {
            std::uint64_t records = 0;
            const TraceReader::Run stop = visit_fast(v, records);
            r_.advance(stop.pos, records);
        } while (step_general(v));
    }

    // Reads the record at `offset` of table section `section` (the target of
    // a sectionOffset field) with the DTD's initial encodings, and calls v(record).
    template <typename Visitor>
    void visit_table_record(std::uint8_t section, std::uint64_t offset, Visitor&& v) {
        r_.table_record(section, offset, [&](TraceReader& r) {
            with_slot(records_, r.slot(), [&]<typename Record>(Record&) {
                if constexpr (detail::UserRecord<Record>) {
                    Record record;
                    using D = detail::Desc<Codec, Record>;
                    if constexpr (D::fast) visit_fields(record, detail::FixedConstants<detail::Fixed<D, -1>>{});
                    decode(record);
                    v(record);
                } else {
                    r.fail(ErrorKind::unknown_tag, "a table holds no predefined records");
                }
            });
        });
    }

    TraceReader& runtime() { return r_; }

private:
    static constexpr unsigned tag_width = Codec::dtd.tag_width;
    static constexpr auto slots() { return std::make_index_sequence<std::tuple_size_v<Records>>{}; }

    template <typename F>
    void for_each(F&& f) {
        std::apply([&](auto&... record) { (f(record), ...); }, records_);
    }
    // Calls f(record) for the struct of `slot` in `records` (records_, const or not); false if there is none.
    template <typename Tuple, typename F>
    static bool with_slot(Tuple& records, std::uint32_t slot, F&& f) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((slot == I ? (f(std::get<I>(records)), true) : false) || ...);
        }(slots());
    }

    // The members a record type's current layout fixes, set in its struct once.
    template <typename Record>
    void set_constants(Record& record) {
        if constexpr (detail::UserRecord<Record>) {
            using D = detail::Desc<Codec, Record>;
            if constexpr (D::fast) visit_fields(record, detail::FixedConstants<detail::Fixed<D, -1>>{});
            if constexpr (D::plannable) {
                const RecordPlan& plan = r_.plan(D::slot);
                if (plan.usable) visit_fields(record, detail::PlanConstants<D>{plan.varying, r_.states(D::slot)});
            }
        }
    }

    template <typename Record, typename Then>
    METATF_INLINE bool deliver(Record& record, Then& then) {
        type_ = Record::type;
        then(record);
        return true;
    }

    // Whether the record at run.pos, of type Record, is in its initial layout.
    template <typename Record>
    METATF_INLINE bool initial_at(const TraceReader::Run& run, std::uint64_t tag) const {
        using D = detail::Desc<Codec, Record>;
        if constexpr (Record::tag < 64) {
            return run.fast(Record::tag);
        } else {
            return run.slot_of(tag) == D::slot && r_.initial(D::slot);
        }
    }

    // Whether the record at run.pos, of type Record, has a plan to be read
    // with: for a tag below 64 one mask test, else the plan and the room for
    // it and the slack of its wide loads.
    template <typename Record>
    METATF_INLINE bool planned_at(const TraceReader::Run& run, std::uint64_t tag) const {
        using D = detail::Desc<Codec, Record>;
        if constexpr (Record::tag < 64) {
            return run.planned(Record::tag);
        } else {
            const RecordPlan& plan = r_.plan(D::slot);
            return run.slot_of(tag) == D::slot && plan.usable &&
                   static_cast<std::size_t>(run.end - run.pos) >= tag_width + plan.size + 8;
        }
    }

    // Whether records of this type may be read in one of the DTD's variants:
    // the run says so for a tag below 64 (others take the planned path).
    template <typename Record>
    static constexpr bool variants_at() {
        using D = detail::Desc<Codec, Record>;
        return D::variant_count > 0 && D::plannable && Record::tag < 64;
    }

    // Reads the record at `pos`, whose type's encodings are one of its
    // variants now (Run::variant()); returns where the next begins. Fresh:
    // `record` is a local, whose constant members are set here (the reader's
    // own structs have them from set_constants(): the variant's layout is
    // the record type's plan).
    template <bool Fresh, typename Record>
    METATF_INLINE const std::byte* read_variant(Record& record, const std::byte* pos) {
        using D = detail::Desc<Codec, Record>;
        const std::byte* next = nullptr;
        detail::with_variant<D>(r_.variant(D::slot), [&]<typename L>() METATF_LAMBDA_INLINE {
            if constexpr (Fresh) visit_fields(record, detail::FixedConstants<L>{});
            visit_fields(record, detail::FixedLoad<L>{pos + tag_width, r_.states(D::slot)});
            next = pos + tag_width + L::size;
        });
        return next;
    }

    // Reads the record whose tag is at `pos` with its plan; returns where
    // the next begins, or null for a record with pools whose counts do not
    // all name live values (read field by field). Records with pools go out
    // of line: their pool work outweighs a call, and inlined they would
    // weigh on every record's path.
    template <typename Record>
    METATF_INLINE const std::byte* read_planned(Record& record, const std::byte* pos) {
        using D = detail::Desc<Codec, Record>;
        const RecordPlan& plan = r_.plan(D::slot);
        if (plan.pools) [[unlikely]] return read_pooled(record, pos);
        const std::byte* p = pos + tag_width;
        if (plan.plain) {
            visit_fields(record, detail::PlanLoad<D, true>{plan.varying, r_.states(D::slot), p});
        } else {
            visit_fields(record, detail::PlanLoad<D, false>{plan.varying, r_.states(D::slot), p});
        }
        return p + plan.size;
    }

    template <typename Record>
    [[gnu::noinline]] const std::byte* read_pooled(Record& record, const std::byte* pos) {
        using D = detail::Desc<Codec, Record>;
        const RecordPlan& plan = r_.plan(D::slot);
        const std::byte* p = pos + tag_width;
        detail::PlanPoolsAnswer<D> answer{plan.live | plan.predicts, r_.states(D::slot), p, r_};
        detail::members(record, answer);
        if (!answer.ok) return nullptr;
        if (plan.immediate) {
            visit_fields(record, detail::PlanLoadPools<D, true>{plan, r_.states(D::slot), p, r_});
        } else {
            visit_fields(record, detail::PlanLoadPools<D, false>{plan, r_.states(D::slot), p, r_});
            r_.pools().end_record();
        }
        return p + plan.size;
    }

    // Reads one record and hands it to `then`. Before run.limit every record
    // in its initial layout fits in the chunk: the search for its tag, one mask
    // test, loads at constant offsets. Metadata records are read there too;
    // step_general() reads what the fast paths do not (the chunk's tail,
    // comments and sections, shared tags).
    template <typename Then>
    METATF_INLINE bool step(Then&& then) {
        const TraceReader::Run run = r_.run();
        if (run.pos < run.limit) {
            const std::uint64_t tag = load_native<tag_width>(run.pos);
            const bool done = detail::by_tag<typename Codec::ByTag>(tag, [&]<typename Record>(std::type_identity<Record>) METATF_LAMBDA_INLINE {
                return take<Record>(run, tag, then);
            });
            if (done) return true;
            if (run.slot_of(tag) == metadata_slot) return deliver(read_metadata(run), then);
        }
        return step_general(then);
    }

    template <typename Record, typename Then>
    METATF_INLINE bool take(const TraceReader::Run& run, std::uint64_t tag, Then& then) {
        using D = detail::Desc<Codec, Record>;
        Record& record = std::get<Record>(records_);
        if constexpr (D::fast) {
            if (initial_at<Record>(run, tag)) {
                visit_fields(record, detail::FixedLoad<detail::Fixed<D, -1>>{run.pos + tag_width, nullptr});
                r_.advance(run.pos + tag_width + detail::Fixed<D, -1>::size, 1);
                return deliver(record, then);
            }
        }
        if constexpr (variants_at<Record>()) {
            if (run.variant(Record::tag)) {
                r_.advance(read_variant<false>(record, run.pos), 1);
                return deliver(record, then);
            }
        }
        if constexpr (D::plannable) {
            if (planned_at<Record>(run, tag)) {
                if (const std::byte* next = read_planned(record, run.pos)) [[likely]] {
                    r_.advance(next, 1);
                    return deliver(record, then);
                }
            }
        }
        if (run.slot_of(tag) != D::slot) return false;
        read_at(record, run);
        return deliver(record, then);
    }

    // A record that neither fast path reads, out of line.
    template <typename Record>
    [[gnu::noinline]] void read_at(Record& record, const TraceReader::Run& run) {
        r_.begin_record(run, static_cast<std::uint32_t>(Record::type));
        decode(record);
        r_.end_record();
    }

    // Field by field, under the encodings metadata has set (the initial
    // layout's loads when it is known, bounds-checked).
    template <typename Record>
    void decode(Record& record) {
        using D = detail::Desc<Codec, Record>;
        if constexpr (D::fast) {
            if (r_.initial(D::slot)) {
                visit_fields(record, detail::FixedLoad<detail::Fixed<D, -1>>{r_.fixed(detail::Fixed<D, -1>::size), nullptr});
                return;
            }
        }
        detail::Decode<D> decoder(r_, r_.states(D::slot));
        visit_fields(record, decoder);
    }

    // Any record, through the runtime's primitives.
    template <typename Then>
    bool step_general(Then&& then) {
        if (!r_.begin_record()) return false;
        if (r_.segment_starts() != segment_starts_) [[unlikely]] {
            segment_starts_ = r_.segment_starts();
            for_each([&](auto& record) { set_constants(record); });
        }
        bool delivered = false;
        with_slot(records_, r_.slot(), [&](auto& record) {
            read_general(record);
            r_.end_record();
            delivered = deliver(record, then);
        });
        return delivered;
    }

    void read_general(Comment<RecordType>& record) { record.text = r_.read_comment(); }
    void read_general(Section<RecordType>& record) { record.number = r_.read_section(); }
    void read_general(Metadata<RecordType>& record) {
        const MetadataChange m = r_.read_metadata();
        record = Metadata<RecordType>{static_cast<RecordType>(m.slot), m.field, m.op, m.a, m.b};
        if (!m.constants_kept) with_slot(records_, m.slot, [&](auto& changed) { set_constants(changed); });
    }
    template <typename Record>
    void read_general(Record& record) {
        decode(record);
    }

    // A metadata record at run.pos, met by a fast loop: compact encodings
    // change widths around outliers every few records, so it is read (by the
    // checked path) without going round step_general().
    static constexpr auto metadata_slot = static_cast<std::uint32_t>(RecordType::Metadata);
    [[gnu::noinline]] Metadata<RecordType>& read_metadata(const TraceReader::Run& run) {
        auto& record = std::get<Metadata<RecordType>>(records_);
        r_.begin_record(run, metadata_slot);
        read_general(record);
        r_.end_record();
        return record;
    }

    // Reads records straight from the chunk, with the cursor in a local
    // (a register); stops at what only step_general() reads and returns where
    // that is. `records` counts the records read since the cursor was last
    // handed back.
    template <typename Visitor>
    METATF_INLINE TraceReader::Run visit_fast(Visitor& v, std::uint64_t& records) {
        TraceReader::Run run = r_.run();
        while (run.pos < run.limit) {
            const std::uint64_t tag = load_native<tag_width>(run.pos);
            const bool read = detail::by_tag<typename Codec::ByTag>(tag, [&]<typename Record>(std::type_identity<Record>) METATF_LAMBDA_INLINE {
                return visit_one<Record>(run, tag, v, records);
            });
            if (!read) {
                if (run.slot_of(tag) != metadata_slot) return run;
                r_.advance(run.pos, records);
                records = 0;
                v(read_metadata(run));
                run = r_.run();
            }
        }
        return run;
    }

    template <typename Record, typename Visitor>
    METATF_INLINE bool visit_one(TraceReader::Run& run, std::uint64_t tag, Visitor& v, std::uint64_t& records) {
        using D = detail::Desc<Codec, Record>;
        if constexpr (D::fast) {
            if (initial_at<Record>(run, tag)) {
                // In a local, so that its members stay in registers.
                Record record;
                visit_fields(record, detail::FixedConstants<detail::Fixed<D, -1>>{});
                visit_fields(record, detail::FixedLoad<detail::Fixed<D, -1>>{run.pos + tag_width, nullptr});
                run.pos += tag_width + detail::Fixed<D, -1>::size;
                ++records;
                v(record);
                return true;
            }
        }
        if constexpr (variants_at<Record>()) {
            if (run.variant(Record::tag)) {
                Record record;
                run.pos = read_variant<true>(record, run.pos);
                ++records;
                v(record);
                return true;
            }
        }
        Record& record = std::get<Record>(records_);
        if constexpr (D::plannable) {
            if (planned_at<Record>(run, tag)) {
                if (const std::byte* next = read_planned(record, run.pos)) [[likely]] {
                    run.pos = next;
                    ++records;
                    v(record);
                    return true;
                }
            }
        }
        if (run.slot_of(tag) != D::slot) return false;
        // The runtime gets the cursor back to read it.
        r_.advance(run.pos, records);
        records = 0;
        read_at(record, run);
        v(record);
        run = r_.run();
        return true;
    }

    TraceReader r_;
    RecordType type_{};
    Records records_;
    std::uint64_t segment_starts_ = 0;  // r_.segment_starts() when the constants were last set
};

// Writes a trace of a generated header's DTD. close() finishes it; without
// close() nothing is left at `path`.

}  // namespace metatf::rt
