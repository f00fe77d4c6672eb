// A DTD's runtime tables built from its IR while a program runs: what a
// DTD-driven tool reads traces with, where generated code has the same
// tables as constants (back/cpp.cpp). Both must agree table for table, so
// that fingerprint() gives the same value.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <metatf/descriptor.hpp>

#include "../ir/schema.hpp"

namespace metatf::back {

class RuntimeDtd {
public:
    explicit RuntimeDtd(const ir::Schema& schema);
    // The tables point into this object's own storage.
    RuntimeDtd(const RuntimeDtd&) = delete;
    RuntimeDtd& operator=(const RuntimeDtd&) = delete;

    const rt::DtdDesc& desc() const { return desc_; }

private:
    struct RecordTables {
        std::vector<rt::FieldDesc> fields;
        std::vector<rt::LayoutStep> layout;
        std::vector<rt::TextFieldDesc> text;
    };

    const char* keep(const std::string& s);
    void add_record(const ir::Record& r);
    void add_text_form(const ir::Schema& schema);

    std::deque<std::string> strings_;   // a deque: c_str() pointers stay valid as it grows
    std::deque<RecordTables> tables_;  // per slot
    std::vector<rt::RecordDesc> records_;
    std::vector<rt::SectionDesc> sections_;
    std::vector<rt::TextRecordDesc> text_records_;
    rt::TextFormDesc text_form_{};
    rt::DtdDesc desc_{};
};

}  // namespace metatf::back
