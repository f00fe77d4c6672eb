// The checked-in native files the tests read (tests/fixtures/native/).
#pragma once

#include <fstream>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

namespace metatf::test {

// The bytes of tests/fixtures/native/NAME.
inline std::string native_fixture(const std::string& name) {
    std::ifstream in(std::string(METATF_SOURCE_DIR) + "/tests/fixtures/native/" + name, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace metatf::test
