// A trace written again through rt::AutoEncoder must hold the same records:
// the encoder may add and drop metadata, nothing else.
#pragma once

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include <metatf/analysis/auto_encoder.hpp>
#include <metatf/io/generic.hpp>

namespace metatf::test {

// A record's values with their bytes copied, metadata records left out.
struct OwnedRecord {
    std::uint32_t slot = 0;
    std::vector<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t, std::vector<std::byte>>> values;
    bool operator==(const OwnedRecord&) const = default;
};

inline std::vector<OwnedRecord> read_owned(const std::string& path, const rt::DtdDesc& dtd, std::size_t* metadata = nullptr) {
    std::vector<OwnedRecord> out;
    rt::TraceReader reader(path, dtd);
    rt::GenericRecord g;
    while (reader.begin_record()) {
        rt::decode_generic(reader, g);
        if (dtd.records[g.slot].predefined == rt::Predefined::metadata) {
            if (metadata) ++*metadata;
            continue;
        }
        OwnedRecord r{g.slot, {}};
        for (const rt::GenericValue& v : g.values) {
            std::uint64_t real = 0;
            std::memcpy(&real, &v.real, sizeof real);
            r.values.emplace_back(v.field, v.integer, real, std::vector<std::byte>(v.bytes.begin(), v.bytes.end()));
        }
        out.push_back(std::move(r));
    }
    return out;
}

// Writes `records` to `path` through an AutoEncoder with `window`.
inline void write_auto(const std::vector<OwnedRecord>& records, const std::string& path, const rt::DtdDesc& dtd,
                       const rt::WriterOptions& options, std::size_t window) {
    rt::TraceWriter writer(path, dtd, options);
    rt::AutoEncoder encoder(writer, window);
    rt::GenericRecord g;
    for (const OwnedRecord& r : records) {
        g.slot = r.slot;
        g.values.clear();
        for (const auto& [field, integer, real, bytes] : r.values) {
            rt::GenericValue v{field, integer, 0, bytes};
            std::memcpy(&v.real, &real, sizeof real);
            g.values.push_back(v);
        }
        switch (dtd.records[r.slot].predefined) {
            case rt::Predefined::comment: {
                const auto& text = std::get<3>(r.values.at(1));
                encoder.comment(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
                break;
            }
            case rt::Predefined::section: encoder.section(static_cast<std::uint8_t>(std::get<1>(r.values.at(0)))); break;
            default: encoder.write(g);
        }
    }
    encoder.flush();
    writer.close();
}

// Recodes the trace at `in` with each window and compression, and checks that its records read back the same.
inline void check_auto_recode(const std::string& in, const rt::DtdDesc& dtd, rt::WriterOptions options) {
    const std::vector<OwnedRecord> records = read_owned(in, dtd);
    const std::string out = in + ".auto";
    options.output.replace = true;
    for (const auto& setting : {std::pair<std::size_t, int>{1, 0}, {37, 3}, {4096, 0}}) {
        const auto [window, compress] = setting;
        CAPTURE(setting.first);  // the window (Clang's lambdas cannot capture a structured binding)
        CAPTURE(setting.second);  // the compression level
        options.compress = compress;
        write_auto(records, out, dtd, options, window);
        CHECK(read_owned(out, dtd) == records);
    }
}

}  // namespace metatf::test
