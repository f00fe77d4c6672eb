// TypedWriter<Codec>: the generated Writer (typed.hpp), and check_rules().
#pragma once

#include "metatf/analysis/auto_encoder.hpp"
#include "metatf/analysis/rules.hpp"
#include "metatf/typed/layouts.hpp"

namespace metatf::rt {

// Checks a record struct, record `index` of its trace, against the rules
// its DTD states (rules.hpp); appends what it breaks to `out`. Reading never
// checks rules: a reader that wants them calls this for each record, in trace
// order (orders compare with the record before).
template <typename Record>
void check_rules(RuleChecker& checker, const Record& record, std::uint64_t index, std::vector<RuleViolation>& out) {
    GenericRecord generic{static_cast<std::uint32_t>(Record::type), {}};
    detail::members(record, detail::ToGeneric{generic.values});
    checker.check(generic, index, out);
}

template <typename Codec>
class TypedWriter {
public:
    using RecordType = typename Codec::RecordType;

    explicit TypedWriter(const std::string& path, WriterOptions options = {}) : w_(path, Codec::dtd, options) {
        if (options.auto_window != 0) {
            auto_ = std::make_unique<AutoEncoder>(w_, options.auto_window);
            return;
        }
        if (!options.strict && options.narrow_after != 0) {
            for (std::uint32_t i = 0; i < Codec::dtd.record_count; ++i) runs_.emplace_back(Codec::dtd.records[i].field_count);
        }
    }

    // Writes one record; returns its byte offset within its section.
    template <detail::UserRecord Record>
    METATF_INLINE std::uint64_t write(const Record& o) {
        using D = detail::Desc<Codec, Record>;
        std::uint64_t offset = 0;
        if (auto_) [[unlikely]] {
            return write_auto(o);
        }
        if constexpr (has_history(D::record)) return write_shared(o);  // field by field, fitted with its histories
        if (!runs_.empty()) adapt(o);
        if constexpr (D::fast) {
            if (w_.initial(D::slot) && write_fixed<detail::Fixed<D, -1>>(o, offset)) return offset;
        }
        if constexpr (D::variant_count > 0 && D::plannable) {
            bool written = false;
            if (const int v = w_.variant(D::slot); v >= 0) {
                detail::with_variant<D>(v, [&]<typename L>() METATF_LAMBDA_INLINE { written = write_fixed<L>(o, offset); });
            }
            if (written) return offset;
        }
        if constexpr (D::plannable) {
            const RecordPlan& plan = w_.plan(D::slot);
            if (plan.usable && !plan.pools) {
                if (plan.plain ? write_planned<true>(o, plan, offset) : write_planned<false>(o, plan, offset)) return offset;
            }
        }
        return write_general(o);
    }

    void comment(std::string_view text) { auto_ ? auto_->comment(text) : w_.comment(text); }
    // Starts section `number`: the records that follow belong to it.
    void section(std::uint8_t number) { auto_ ? auto_->section(number) : w_.section(number); }
    // Metadata: changes a field's width or interpretation for the records
    // that follow (with auto_window, until the encoder changes it again).
    void set_width(RecordType record, std::uint32_t field, std::uint32_t width) {
        if (auto_) auto_->flush();
        w_.metadata(static_cast<std::uint32_t>(record), field, MetaOp::width, width);
    }
    void set_interpretation(RecordType record, std::uint32_t field, MetaOp op, std::uint64_t a = 0, std::int64_t b = 0) {
        if (auto_) auto_->flush();
        w_.metadata(static_cast<std::uint32_t>(record), field, op, a, static_cast<std::uint64_t>(b));
    }
    // The field stores its values (or their differences) in units of `unit`.
    void set_unit(RecordType record, std::uint32_t field, std::uint64_t unit) {
        if (auto_) auto_->flush();
        w_.metadata(static_cast<std::uint32_t>(record), field, MetaOp::unit, unit);
    }
    void close() {
        if (auto_) auto_->flush();
        w_.close();
    }

    TraceWriter& runtime() { return w_; }

private:
    template <typename Check, typename Record>
    static METATF_INLINE bool fits(const Record& o, Check check) {
        detail::members(o, check);
        return check.ok;
    }

    // Writes a record in a layout known at compile time (the initial one or
    // a variant), if its values fit.
    template <typename L, typename Record>
    METATF_INLINE bool write_fixed(const Record& o, std::uint64_t& offset) {
        using D = detail::Desc<Codec, Record>;
        FieldState* s = L::stateless ? nullptr : w_.states(D::slot);
        if (!fits<detail::FixedFits<L>>(o, {s})) return false;
        std::byte* p = w_.reserve_record<D::tag_width>(D::slot, L::size, offset);
        detail::members(o, detail::FixedStore<L>{p, s});
        w_.end_record();
        return true;
    }

    // Writes a record with its plan, if its values fit.
    template <bool Plain, typename Record>
    METATF_INLINE bool write_planned(const Record& o, const RecordPlan& plan, std::uint64_t& offset) {
        using D = detail::Desc<Codec, Record>;
        FieldState* s = w_.states(D::slot);
        detail::PlanEncode<D, Plain> encoded{plan.varying, s};
        detail::members(o, encoded);
        if (!encoded.ok) return false;
        std::byte* p = w_.reserve_planned<D::tag_width>(D::slot, plan.size, offset);
        detail::members(o, detail::PlanStore<D, Plain>{encoded, s, p});
        w_.end_record();
        return true;
    }

    // Field by field, under the encodings metadata has set; unless strict,
    // first changes the encodings of fields that cannot hold their value.
    template <typename Record>
    [[gnu::noinline]] std::uint64_t write_general(const Record& o) {
        if (!w_.options().strict && runs_.empty()) adapt(o);
        return write_fields(o);
    }

    // Writes the metadata that lets each field of the record hold its value
    // (WriterOptions::strict), and with narrow_after the metadata that
    // narrows a field whose last N values all fit fewer bytes.
    template <typename Record>
    [[gnu::noinline]] void adapt(const Record& o) {
        using D = detail::Desc<Codec, Record>;
        if constexpr (D::flat()) {
            // One value a field: each is decided as it is visited, with no table of needs.
            detail::members(o, FitEach<D>{*this});
        } else {
            detail::Needs<D> need{w_.states(D::slot)};
            detail::members(o, need);
            for (std::uint32_t f = 0; f < D::record.field_count; ++f) fit(D::slot, f, need.need[f].fit);
        }
    }

    // adapt() of a flat record: fit() of each integer field's one value.
    template <typename D>
    struct FitEach {
        TypedWriter& t;
        template <std::uint32_t I, typename Member>
        METATF_INLINE void field(detail::Index<I>, const Member& m) const {
            if constexpr (!std::is_same_v<Member, detail::Bytes> && !std::is_floating_point_v<Member>) {
                const FieldState& s = t.w_.states(D::slot)[I];
                if (!codes(s.kind)) t.fit(D::slot, I, fit_value(s, detail::bits_of(m), s.previous));
            }
        }
    };

    // The metadata field f of `slot` needs for a record whose values need `fit`.
    METATF_INLINE void fit(std::uint32_t slot, std::uint32_t f, const FieldFit& fit) {
        if (!fit.sized) return;
        if (fit.to_none) w_.metadata(slot, f, MetaOp::none);
        if (fit.to_unit_one) w_.metadata(slot, f, MetaOp::unit, 1);
        const FieldState& s = w_.states(slot)[f];
        if (!s.sized_by_width()) return;
        const std::uint32_t current = s.stored_width();
        if (fit.width > current) w_.metadata(slot, f, MetaOp::width, fit.width);
        // Never to width 0: a field that stores nothing only says its value repeats.
        if (!runs_.empty()) narrow(slot, f, std::max(fit.width, 1u), current);
    }

    // narrow_after's count for field f of `slot`, whose value needs `width` of its `current` bytes.
    void narrow(std::uint32_t slot, std::uint32_t f, std::uint32_t width, std::uint32_t current) {
        detail::NarrowRun& run = runs_[slot][f];
        if (width >= current) {
            run = {};
        } else if (run.widest = std::max(run.widest, width); ++run.count == w_.options().narrow_after) {
            w_.metadata(slot, f, MetaOp::width, run.widest);
            run = {};
        }
    }

    // A record with a shared history: as mtf writes it, its encodings fitted
    // to its values against the histories (encode_generic()).
    template <typename Record>
    [[gnu::noinline]] std::uint64_t write_shared(const Record& o) {
        generic_.slot = detail::Desc<Codec, Record>::slot;
        generic_.values.clear();
        detail::members(o, detail::ToGeneric{generic_.values});
        return encode_generic(w_, generic_);
    }
    // Hands the record to the AutoEncoder (WriterOptions::auto_window).
    template <typename Record>
    [[gnu::noinline]] std::uint64_t write_auto(const Record& o) {
        generic_.slot = detail::Desc<Codec, Record>::slot;
        generic_.values.clear();
        detail::members(o, detail::ToGeneric{generic_.values});
        auto_->write(generic_);
        return 0;
    }

    template <typename Record>
    std::uint64_t write_fields(const Record& o) {
        using D = detail::Desc<Codec, Record>;
        const std::uint64_t offset = w_.begin_record(D::slot);
        detail::members(o, detail::Encode<D>(w_, w_.states(D::slot)));
        w_.end_record();
        return offset;
    }

    TraceWriter w_;
    std::vector<std::vector<detail::NarrowRun>> runs_;  // by slot and field; empty unless widths follow the data
    std::unique_ptr<AutoEncoder> auto_;                 // with WriterOptions::auto_window
    GenericRecord generic_;                             // write_auto()'s record, its buffers kept
};

}  // namespace metatf::rt
