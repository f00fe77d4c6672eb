// The binary reader and writer of a generated header: everything in them
// that does not depend on the DTD. A generated header holds its record
// structs, their visit_fields(), its descriptor constants and a Codec that
// names them and lists the records that tags name; TypedReader<Codec> and TypedWriter<Codec>
// read and write those structs through TraceReader and TraceWriter.
//
// Four ways to a record, chosen per record type at run time:
//  - initial: the DTD's own layout, known when the header is compiled: loads
//    and stores at constant offsets (detail::Fixed, from the constexpr
//    descriptor);
//  - a variant: encodings the DTD names (`variant NAME { ... }`) that metadata
//    has set: constant offsets and widths as well (detail::Fixed);
//  - planned: a layout metadata has changed but that is still fixed: the
//    FieldPlan arithmetic at the offsets of the RecordPlan (field_state.hpp);
//  - general: anything else (repeated groups, lengths read from the record,
//    sectionStride, a chunk's tail): the field primitives, field by field.
//
// The code is in typed/: layouts.hpp (the paths' layouts), reader.hpp and
// writer.hpp.
#pragma once

#include "metatf/typed/layouts.hpp"
#include "metatf/typed/reader.hpp"
#include "metatf/typed/writer.hpp"
