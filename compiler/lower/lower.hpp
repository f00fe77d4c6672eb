// Lowering: a DTD's IR turned into the runtime's descriptor (rt::DtdDesc), the
// tables the runtime reads and writes traces with. Done once, here: the C++
// back end prints the result as constant data, and mtf reads traces with it
// directly, so both have the same tables and the same fingerprint.
#pragma once

#include <memory>

#include <metatf/core/descriptor.hpp>

#include "../ir/schema.hpp"

namespace metatf::lower {

// A DTD's runtime descriptor with everything it points to: names, fields,
// layout programs, sections and the text form. Moving it keeps desc() and every
// pointer in it valid; a moved-from value has no descriptor.
class LoweredDtd {
public:
    LoweredDtd(LoweredDtd&&) noexcept;
    LoweredDtd& operator=(LoweredDtd&&) noexcept;
    ~LoweredDtd();

    const rt::DtdDesc& desc() const;

private:
    struct Storage;
    explicit LoweredDtd(std::unique_ptr<const Storage> storage);
    friend LoweredDtd lower(const ir::Schema& schema);

    std::unique_ptr<const Storage> storage_;
};

LoweredDtd lower(const ir::Schema& schema);

}  // namespace metatf::lower
